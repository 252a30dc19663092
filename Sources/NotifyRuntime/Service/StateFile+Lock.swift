import NotifyCore

#if canImport(Glibc)
    import Glibc
    private let systemRead = Glibc.read
#elseif canImport(Darwin)
    import Darwin
    private let systemRead = Darwin.read
#endif

/// The lock beside the state file (`state-<key>.lock`, mode 0600): the running service holds it for its whole life,
/// so that a second service for the same Syncthing instance is refused at start, and a reader knows at once whether
/// the file's writer still runs (`WriterProbe`). The kernel drops the lock when the process ends in any way, a
/// SIGKILL or the OOM killer included, so a lock left behind never blocks a restart. The file itself stays after a
/// clean stop: removing it would let a starting service lock a file that the next one no longer finds.
///
/// Linux: an open-file-description lock (`F_OFD_SETLK`); a reader tests it with `F_OFD_GETLK`, which never takes
/// it, so a `--status` or `--healthcheck` at the moment a service starts can never make that service believe that
/// another one runs. It belongs to the open file, not the process: a test that reads the lock in the process that
/// holds it sees it held, and closing another descriptor of the file does not drop it. Elsewhere (macOS): `flock`,
/// tested with a shared lock taken and given back at once; a starting service tries a few times within 0.5 s, so a
/// reader's moment never refuses it.
extension StateFile {
    /// The lock file's path: the state file's, with `.lock` appended.
    package var lockPath: String { path + ".lock" }

    /// How taking the lock at start went.
    package enum LockAcquisition: Equatable {
        /// The lock is held until the process ends; `descriptor` stays open for that long.
        case acquired(descriptor: Int32)
        /// Another process holds it: another service runs for this Syncthing instance.
        case heldByAnother
        /// No lock could be taken here (the file cannot be made, a file system without locks): the service runs
        /// without one, and its state file carries no `pid` (readers use the age rule).
        case unavailable
    }

    /// Takes the lock for the life of the process (the descriptor is never closed).
    package func acquireLock() -> LockAcquisition {
        let fd = open(lockPath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0o600)
        guard fd >= 0 else { return .unavailable }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, st.st_uid == geteuid() else {
            _ = close(fd)
            return .unavailable
        }
        #if os(Linux)
            var lock = Self.wholeFile(type: F_WRLCK)
            if fcntl(fd, Self.setOFDLock, &lock) == 0 { return .acquired(descriptor: fd) }
            let failure = errno
            _ = close(fd)
            return failure == EAGAIN || failure == EACCES ? .heldByAnother : .unavailable
        #else
            for attempt in 0..<50 {
                if flock(fd, LOCK_EX | LOCK_NB) == 0 { return .acquired(descriptor: fd) }
                guard errno == EWOULDBLOCK, attempt < 49 else { break }
                usleep(10_000)
            }
            let failure = errno
            _ = close(fd)
            return failure == EWOULDBLOCK ? .heldByAnother : .unavailable
        #endif
    }

    /// Whether some process holds the lock now; never takes it for longer than the test (Linux: not at all).
    /// - Parameter owner: the uid the lock file must belong to (the state file's owner).
    func lockState(owner: uid_t) -> WriterProbe.Lock {
        let fd = open(lockPath, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return .untestable }
        defer { _ = close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, st.st_uid == owner else { return .untestable }
        #if os(Linux)
            var lock = Self.wholeFile(type: F_WRLCK)
            guard fcntl(fd, Self.getOFDLock, &lock) == 0 else { return .untestable }
            return lock.l_type == Int16(F_UNLCK) ? .free : .held
        #else
            if flock(fd, LOCK_SH | LOCK_NB) == 0 {
                _ = flock(fd, LOCK_UN)
                return .free
            }
            return errno == EWOULDBLOCK ? .held : .untestable
        #endif
    }

    /// What can be found out now about the writer of `state` (the lock, and the recorded process).
    /// - Parameter owner: the uid the state file belongs to.
    package func probeWriter(of state: ServiceState, owner: uid_t = geteuid()) -> WriterProbe {
        guard let writer = state.writer else { return .unknown }
        return WriterProbe(lock: lockState(owner: owner), process: Self.process(writer))
    }

    /// This process, as it records itself in its state file.
    package static func currentWriter() -> ServiceWriter {
        let pid = getpid()
        return ServiceWriter(pid: pid, start: processStart(pid: pid))
    }

    /// Whether `writer` is a process that exists now with the recorded start.
    static func process(_ writer: ServiceWriter) -> WriterProbe.Process {
        guard let recorded = writer.start else { return .unknown }
        #if os(Linux)
            guard let start = processStart(pid: writer.pid) else {
                // No entry: gone, when the process table is there to look at (a /proc mounted).
                return access("/proc/self/stat", R_OK) == 0 ? .gone : .unknown
            }
            return start == recorded ? .alive : .gone
        #else
            return .unknown
        #endif
    }

    /// The process's start in clock ticks since boot (`/proc/<pid>/stat` field 22); nil when there is no such
    /// process, it has ended (a zombie its parent has not reaped), or there is no /proc (and on systems without one).
    static func processStart(pid: Int32) -> Int64? {
        #if os(Linux)
            let fd = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { return nil }
            defer { _ = close(fd) }
            var buffer = [UInt8](repeating: 0, count: 1024)
            let n = buffer.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { return nil }
            return ProcessStat.runningStartTicks(buffer[..<n])
        #else
            return nil
        #endif
    }

    #if os(Linux)
        /// `F_OFD_GETLK` and `F_OFD_SETLK` (Linux 3.15; the same numbers on every architecture), which the C library
        /// declares only under _GNU_SOURCE.
        static let getOFDLock: Int32 = 36
        static let setOFDLock: Int32 = 37

        /// A lock request over the whole file; `l_pid` must be 0 for the OFD commands.
        static func wholeFile(type: Int32) -> flock {
            var lock = flock()
            lock.l_type = Int16(type)
            lock.l_whence = Int16(SEEK_SET)
            lock.l_start = 0
            lock.l_len = 0
            lock.l_pid = 0
            return lock
        }
    #endif
}
