import Testing

@testable import NotifyCore

@Suite("Substring search without _StringProcessing")
struct StringScanTests {
    @Test(
        "utf8Range finds the first occurrence, as offsets into the text",
        arguments: [
            ("http://host", "://", 4..<7), ("a::b::c", "::", 1..<3), ("::", "::", 0..<2), ("ab", "", 0..<0),
            ("aab", "ab", 1..<3), ("aaab", "aab", 1..<4), ("ab", "abc", nil), ("", "a", nil), ("a:b", "::", nil),
            ("é://x", "://", 2..<5),
        ] as [(String, String, Range<Int>?)])
    func firstRange(text: String, needle: String, expected: Range<Int>?) {
        let range = text.utf8Range(of: needle)
        let offsets = range.map {
            text.utf8.distance(
                from: text.startIndex, to: $0.lowerBound)..<text.utf8.distance(
                    from: text.startIndex, to: $0.upperBound)
        }
        #expect(offsets == expected)
        #expect(text.utf8Contains(needle) == (expected != nil))
        if let range { #expect(String(text[range]) == needle) }
    }

    @Test("a substring is searched within its own bounds, with indices of the base string")
    func substring() throws {
        let text = "::a::b"
        let tail = text[text.index(text.startIndex, offsetBy: 2)...]
        let range = try #require(tail.utf8Range(of: "::"))
        #expect(text.distance(from: text.startIndex, to: range.lowerBound) == 3)
        #expect(!tail.dropLast(3).utf8Contains("::"))
        #expect(text.prefix(1).utf8Range(of: "::") == nil)
    }
}
