/// The process environment's `NAME=value` entries (as `environ` holds them) as `[name: value]`.
package enum EnvironmentEntries {
    /// Each entry is split at its first `=`; one without `=`, or with an empty name, is skipped; for a name given
    /// twice the first entry counts, as for `getenv(3)`.
    package static func parse(_ entries: [String]) -> [String: String] {
        var result: [String: String] = [:]
        for entry in entries {
            guard let equals = entry.utf8.firstIndex(of: UInt8(ascii: "=")), equals != entry.utf8.startIndex
            else { continue }
            let name = String(entry[..<equals])
            if result[name] == nil { result[name] = String(entry[entry.index(after: equals)...]) }
        }
        return result
    }
}
