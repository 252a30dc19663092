import NotifyCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Owner and permission bits of a filesystem object.
package struct FileInfo: Sendable, Equatable {
    package var ownerUID: UInt32
    package var ownerGID: UInt32
    /// `st_mode & 0o7777`.
    package var permissions: UInt32

    package init(ownerUID: UInt32, ownerGID: UInt32, permissions: UInt32) {
        self.ownerUID = ownerUID
        self.ownerGID = ownerGID
        self.permissions = permissions
    }
}

/// What a path is, as far as this process can tell (`stat`, following symlinks).
package enum PathStatus: Sendable, Equatable {
    /// Nothing there (ENOENT, ENOTDIR).
    case missing
    /// A directory on the way cannot be searched (EACCES), so it is unknown whether the path exists.
    case hidden
    case file(FileInfo)
    case directory(FileInfo)
    /// A FIFO, socket or device.
    case other(FileInfo)
}

/// The filesystem questions the locator asks. `SystemFileSystem` answers them for real; tests use a fake.
package protocol ConfigFileSystem: Sendable {
    func status(of path: String) -> PathStatus
    /// True when this process can open the path for reading.
    func isReadable(_ path: String) -> Bool
    /// The login name of `uid` in `/etc/passwd`, for messages; nil when there is none (see `PasswdFile`).
    func userName(uid: UInt32) -> String?
    /// True when `path` is a directory this process can list and it has no entry but `.` and `..` (an empty mount
    /// point, or a config directory Syncthing has not written into yet).
    func isEmptyDirectory(_ path: String) -> Bool
}

extension ConfigFileSystem {
    package func userName(uid: UInt32) -> String? { nil }
    package func isEmptyDirectory(_ path: String) -> Bool { false }
}

/// The real filesystem: `stat(2)` and a trial `open(2)` (which, unlike `access(2)`, honours the effective uid,
/// ACLs and security modules).
package struct SystemFileSystem: ConfigFileSystem {
    package init() {}

    package func status(of path: String) -> PathStatus {
        var info = stat()
        guard stat(path, &info) == 0 else { return errno == EACCES ? .hidden : .missing }
        let fileInfo = FileInfo(
            ownerUID: UInt32(info.st_uid), ownerGID: UInt32(info.st_gid), permissions: UInt32(info.st_mode) & 0o7777)
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .file(fileInfo)
        case S_IFDIR: return .directory(fileInfo)
        default: return .other(fileInfo)
        }
    }

    package func isReadable(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return false }
        close(fd)
        return true
    }

    package func userName(uid: UInt32) -> String? { PasswdFile.entry(uid: uid)?.name }

    package func isEmptyDirectory(_ path: String) -> Bool {
        guard let dir = opendir(path) else { return false }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                Array(raw.prefix { $0 != 0 })
            }
            if name != [UInt8(ascii: ".")] && name != [UInt8(ascii: "."), UInt8(ascii: ".")] { return false }
        }
        return true
    }
}
