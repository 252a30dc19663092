#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The local user database, read from `/etc/passwd` directly instead of through `getpwuid(3)`.
///
/// A statically linked glibc loads the host's NSS modules for every `getpw*` call, and a module built for another
/// glibc can crash or fail; so the static release binary never makes one. Users that exist only in LDAP, NIS or
/// systemd-homed are not found here; callers treat that like a missing entry (`HOME` is the primary source).
package enum PasswdFile {
    /// One `name:password:uid:gid:gecos:home:shell` line, as far as the helper needs it.
    package struct Entry: Sendable, Equatable {
        /// The login name; nil when it holds anything but `A–Z a–z 0–9 . _ -` (and an optional trailing `$`) or is
        /// longer than 32 bytes, so that it can go into a message unquoted.
        package var name: String?
        package var uid: UInt32
        /// The home directory; nil unless absolute and free of control characters.
        package var home: String?

        package init(name: String?, uid: UInt32, home: String?) {
            self.name = name
            self.uid = uid
            self.home = home
        }
    }

    package static let path = "/etc/passwd"
    /// A larger file is not read at all (a real one is a few KiB).
    package static let maxBytes = 4 << 20
    /// Longer lines are skipped (glibc's own limit for a files-backend line is in this range too).
    package static let maxLineBytes = 4096

    /// The first well-formed line for `uid` (the files backend's rule: the first match wins). Malformed lines
    /// (not exactly seven fields, a uid that is not a decimal UInt32, over `maxLineBytes`), comments and NIS
    /// `+`/`-` lines are skipped.
    package static func entry(uid: UInt32, in bytes: [UInt8]) -> Entry? {
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            guard line.count <= maxLineBytes, let first = line.first,
                first != UInt8(ascii: "#"), first != UInt8(ascii: "+"), first != UInt8(ascii: "-")
            else { continue }
            var fields = line.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
            if fields.count == 7, fields[6].last == 0x0D { fields[6] = fields[6].dropLast() }
            guard fields.count == 7, let lineUID = decimal(fields[2]), lineUID == uid else { continue }
            return Entry(name: safeName(fields[0]), uid: lineUID, home: safeHome(fields[5]))
        }
        return nil
    }

    /// Reads `path` (at most `maxBytes`) and looks `uid` up; nil when the file is missing, unreadable, too large
    /// or has no entry.
    package static func entry(uid: UInt32, path: String = PasswdFile.path) -> Entry? {
        guard let bytes = try? SyncthingConfigFile.readBounded(path: path, limit: maxBytes) else { return nil }
        return entry(uid: uid, in: bytes)
    }

    static func decimal(_ field: ArraySlice<UInt8>) -> UInt32? {
        guard !field.isEmpty, field.count <= 10, field.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return UInt32(String(decoding: field, as: UTF8.self))
    }

    static func safeName(_ field: ArraySlice<UInt8>) -> String? {
        var body = field
        if body.last == UInt8(ascii: "$") { body = body.dropLast() }
        guard (1...32).contains(field.count), !body.isEmpty,
            body.allSatisfy({ byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            })
        else { return nil }
        return String(decoding: field, as: UTF8.self)
    }

    static func safeHome(_ field: ArraySlice<UInt8>) -> String? {
        guard field.first == UInt8(ascii: "/"), !field.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return nil }
        return String(decoding: field, as: UTF8.self)
    }
}
