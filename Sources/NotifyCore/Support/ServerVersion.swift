/// The one rule for a version string a server sends (Syncthing's `/rest/system/version`, the relay's health answer)
/// before the helper shows it in a log line, `--status` or `--doctor`.
package enum ServerVersion {
    /// The longest version shown, in UTF-8 bytes: 32.
    package static let maxBytes = 32

    /// `version` when it looks like a release, else nil: 1–32 bytes (`maxBytes`), `v` or a digit first, then only
    /// ASCII letters, digits and `.`, `-`, `+` (e.g. `v1.29.5`, `v2.0.0-rc.1`, `1.3.2-standin`). A body's text is
    /// never shown as it came, so a server cannot put control characters, spaces, markup, a path or a Device ID
    /// (56 characters and more) where the helper prints its version.
    package static func displayable(_ version: String) -> String? {
        let bytes = version.utf8
        guard let first = bytes.first, first == UInt8(ascii: "v") || (0x30...0x39).contains(first),
            bytes.count <= maxBytes,
            bytes.allSatisfy({ b in
                (0x30...0x39).contains(b) || (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b)
                    || b == UInt8(ascii: ".") || b == UInt8(ascii: "-") || b == UInt8(ascii: "+")
            })
        else { return nil }
        return version
    }
}
