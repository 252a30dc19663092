import NotifyCore

/// Where the running service keeps its `ServiceState` for `--healthcheck` and `--status`: `StateFile` on disk.
package protocol StateStore: Sendable {
    /// Replaces the stored state. Returns false (leaving the old state in place) on any failure.
    func write(_ state: ServiceState) -> Bool
    /// Removes the stored state (the service is gone).
    func remove()
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

#if canImport(Glibc)
    private let systemRead = Glibc.read
#elseif canImport(Darwin)
    private let systemRead = Darwin.read
#endif

/// The small file through which the running service tells `--healthcheck` that it is making progress, and
/// `--status` what it is doing (`ServiceState`: last successful event poll, last relay category, times, counts and
/// categories; no identifier).
///
/// Location, the same rule for the writer and for `--healthcheck` (which must run as the same user, with the same
/// environment):
/// 1. `$RUNTIME_DIRECTORY/state-<key>` when RUNTIME_DIRECTORY is set (systemd `RuntimeDirectory=`; the first entry
///    when it lists several, separated by `:`);
/// 2. else `/run/vaultsync-notify/state-<key>` when that directory exists (or can be created, mode 0700), is owned
///    by this user and is writable: root, or a directory prepared for the user;
/// 3. else `/tmp/vaultsync-notify-<uid>/state-<key>`, in a directory created with mode 0700 and used only when it is
///    owned by this user and not open to others.
/// /run and /tmp are tmpfs on most systems; on a read-only root (`docker run --read-only`) mount one of them as
/// tmpfs (`--tmpfs /run`). When no place works, the service logs `stateFileUnavailable` once and keeps running;
/// `--healthcheck` then answers unhealthy.
///
/// `<key>` (`instanceKey(environment:)`) tells Syncthing instances apart: two sidecars as root for two
/// Syncthing instances share `/run/vaultsync-notify` but not a file, so a clean stop of one no longer removes the
/// other's. It is computed from the environment alone, without reading config.xml (whose search may find another
/// file later) and without the network, so the service and `--healthcheck` always agree. It is keyed under
/// RUNTIME_DIRECTORY too: one rule everywhere, and two units that share a `RuntimeDirectory=` still keep apart.
///
/// Writes are atomic: a temporary file in the same directory (mode 0600), `fsync`, `rename` over the state file.
package struct StateFile: StateStore, Equatable {
    /// The state file's absolute path.
    package let path: String

    package init(path: String) {
        self.path = path
    }

    package static let runDirectory = "/run/vaultsync-notify"

    /// The variables that select the Syncthing instance, in the order they are hashed: the address
    /// (SYNCTHING_API_URL, Syncthing's STGUIADDRESS) and where config.xml is looked for (SYNCTHING_CONFIG, STCONFDIR,
    /// STHOMEDIR; ConfigLocator's first steps). Two sidecars for two instances on one host differ in at least one of
    /// them, unless they find config.xml only through different home directories, which as two root services they
    /// cannot. HOME and XDG_* are left out: a shell's `--healthcheck` may see them differ from the service's.
    package static let instanceVariables = [
        "SYNCTHING_API_URL", "STGUIADDRESS", "SYNCTHING_CONFIG", "STCONFDIR", "STHOMEDIR",
    ]

    /// The instance's key: 16 lower-case hex digits of the 64-bit FNV-1a hash of `NAME=value` and a NUL byte for
    /// each of `instanceVariables` that is set and not empty, in that order. The same environment gives the same key
    /// in every process and version; a file name built from it reveals no path or URL.
    package static func instanceKey(environment: [String: String]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for name in instanceVariables {
            guard let value = environment[name], !value.isEmpty else { continue }
            for byte in Array("\(name)=\(value)".utf8) + [0] {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01b3
            }
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// The state file's name in its directory: `state-<instanceKey>`.
    package static func fileName(environment: [String: String]) -> String {
        "state-" + instanceKey(environment: environment)
    }

    /// The state file of the instance that `environment` selects (see the type's documentation).
    /// - Parameters:
    ///   - environment: RUNTIME_DIRECTORY and `instanceVariables` are read.
    ///   - create: create the directory when missing (the service); `--healthcheck` passes false.
    ///   - uid: the effective user id (default `geteuid()`).
    /// - Returns: the state file, or nil when no usable directory exists.
    package static func locate(environment: [String: String], create: Bool, uid: uid_t = geteuid()) -> StateFile? {
        let name = fileName(environment: environment)
        if let runtime = environment["RUNTIME_DIRECTORY"], !runtime.isEmpty {
            let first = String(runtime.split(separator: ":", omittingEmptySubsequences: true).first ?? "")
            guard first.hasPrefix("/") else { return nil }
            if create { _ = mkdir(first, 0o700) }
            return StateFile(path: first + "/" + name)
        }
        if create { _ = mkdir(runDirectory, 0o700) }
        if ownedDirectory(runDirectory, uid: uid, privateOnly: false), access(runDirectory, W_OK | X_OK) == 0 {
            return StateFile(path: runDirectory + "/" + name)
        }
        let tmp = "/tmp/vaultsync-notify-\(uid)"
        if create { _ = mkdir(tmp, 0o700) }
        if ownedDirectory(tmp, uid: uid, privateOnly: true) {
            return StateFile(path: tmp + "/" + name)
        }
        return nil
    }

    /// True when `path` is a real directory (not a symlink) owned by `uid`, closed to group and others when
    /// `privateOnly`.
    static func ownedDirectory(_ path: String, uid: uid_t, privateOnly: Bool) -> Bool {
        var st = stat()
        guard lstat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR, st.st_uid == uid else { return false }
        return !privateOnly || (st.st_mode & 0o077) == 0
    }

    /// Removes the state file (a clean stop): `--healthcheck` then answers unhealthy at once instead of trusting
    /// the last poll for up to 120 s.
    package func remove() {
        _ = unlink(path)
    }

    /// Replaces the file with `state`, atomically. Returns false (leaving any old file in place) on any failure.
    @discardableResult
    package func write(_ state: ServiceState) -> Bool {
        AtomicFile.write(Array(state.encoded().utf8), to: path, mode: 0o600)
    }

    /// Reads the file, bounded to `ServiceState.maxBytes` + 1 bytes: `.missing` when there is none, `.unreadable`
    /// when it is not a regular file owned by `uid`, cannot be opened or read, is larger than `ServiceState.maxBytes`
    /// or is not a state file (`StateFileRead.classify`).
    package func read(uid: uid_t = geteuid()) -> StateFileRead {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return errno == ENOENT || errno == ENOTDIR ? .missing : .unreadable }
        defer { _ = close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, st.st_uid == uid,
            st.st_size <= ServiceState.maxBytes
        else { return .unreadable }
        var buffer = [UInt8](repeating: 0, count: ServiceState.maxBytes + 1)
        var total = 0
        while total < buffer.count {
            let n = buffer.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress! + total, $0.count - total) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return .unreadable }
            if n == 0 { break }
            total += n
        }
        return StateFileRead.classify(buffer[..<total])
    }
}
