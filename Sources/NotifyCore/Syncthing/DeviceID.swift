/// The shape of a Syncthing Device ID.
package enum DeviceID {
    /// True for a well-formed Device ID: 8 groups of 7 base32 characters, or the 56 characters alone.
    package static func isWellFormed(_ value: String) -> Bool {
        let chars = value.utf8.filter { $0 != UInt8(ascii: "-") }
        guard chars.count == 56, value.utf8.count == 56 || value.utf8.count == 63 else { return false }
        return chars.allSatisfy { ($0 >= 65 && $0 <= 90) || ($0 >= 50 && $0 <= 55) }
    }
}
