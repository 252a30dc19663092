#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

#if canImport(Glibc)
    private let systemWrite = Glibc.write
#elseif canImport(Darwin)
    private let systemWrite = Darwin.write
#endif

/// Replaces a small file atomically, so that a reader sees the old contents or the new, never a part: a temporary
/// file in the same directory (`.<name>.<pid>.tmp`, which neither the state file's reader nor node_exporter's
/// `*.prom` glob picks up), `fsync`, `rename` over the file, `fsync` of the directory.
enum AtomicFile {
    /// Writes `bytes` to `path`.
    /// - Parameters:
    ///   - path: an absolute path; its directory must exist.
    ///   - mode: the file's permission bits, set with `fchmod` so that the umask (systemd's `UMask=0077`) does not
    ///     narrow them.
    /// - Returns: false on any failure, leaving any old file in place and no temporary file behind.
    static func write(_ bytes: [UInt8], to path: String, mode: mode_t) -> Bool {
        guard let slash = path.lastIndex(of: "/") else { return false }
        let directory = slash == path.startIndex ? "/" : String(path[..<slash])
        let name = path[path.index(after: slash)...]
        guard !name.isEmpty else { return false }
        let temporary = "\(directory == "/" ? "" : directory)/.\(name).\(getpid()).tmp"
        _ = unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else { return false }
        var written = 0
        var ok = fchmod(fd, mode) == 0
        while ok && written < bytes.count {
            let n = bytes.withUnsafeBytes { systemWrite(fd, $0.baseAddress! + written, bytes.count - written) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                ok = false
                break
            }
            written += n
        }
        if ok && fsync(fd) != 0 { ok = false }
        if close(fd) != 0 { ok = false }
        guard ok, rename(temporary, path) == 0 else {
            _ = unlink(temporary)
            return false
        }
        // Make the rename itself durable where the directory is on disk (a no-op on tmpfs).
        let dirFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dirFD >= 0 {
            _ = fsync(dirFD)
            _ = close(dirFD)
        }
        return true
    }
}
