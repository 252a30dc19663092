// Substring search for the shipped modules, which build without _StringProcessing (Package.swift): its
// `firstRange(of:)` and `contains(_: String)` would link it and _RegexParser, 1.2 MB (docs/benchmarks.md).

extension StringProtocol {
    /// The first occurrence of `needle` in this text, compared byte for byte in UTF-8 (no Unicode
    /// normalization: meant for ASCII needles such as `"://"`); nil when there is none. An empty needle is found
    /// at `startIndex`. The range's bounds are indices of this string (and of its `utf8` view).
    package func utf8Range(of needle: some StringProtocol) -> Range<Index>? {
        let pattern = Array(needle.utf8)
        guard let first = pattern.first else { return startIndex..<startIndex }
        let bytes = utf8
        var from = bytes.startIndex
        while let start = bytes[from...].firstIndex(of: first) {
            var cursor = start
            var matched = true
            for byte in pattern {
                guard cursor != bytes.endIndex, bytes[cursor] == byte else {
                    matched = false
                    break
                }
                cursor = bytes.index(after: cursor)
            }
            if matched { return start..<cursor }
            from = bytes.index(after: start)
        }
        return nil
    }

    /// True when `needle` occurs in this text (`utf8Range(of:)`).
    package func utf8Contains(_ needle: some StringProtocol) -> Bool { utf8Range(of: needle) != nil }
}
