import NotifyCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// METRICS_FILE: the Prometheus text file the service keeps up to date for node_exporter's textfile collector
/// (README.md, "Metrics"). No socket is opened; the file is replaced atomically (`AtomicFile`), mode 0644 so that
/// node_exporter, another user, can read it (it holds counts and times only, never an identifier).
package struct MetricsFile: Sendable, Equatable {
    /// The file's absolute path.
    package let path: String

    package init(path: String) {
        self.path = path
    }

    /// Replaces the file with `text`. Returns false on any failure (a missing or read-only directory).
    func write(_ text: String) -> Bool {
        AtomicFile.write(Array(text.utf8), to: path, mode: 0o644)
    }

    /// Where METRICS_FILE `path` would go, looked at as the write needs it (the decision is
    /// `MetricsFilePlace.problem`): whether the path is a directory, whether its directory exists, and a file created
    /// (`O_EXCL`) and removed there, named as `AtomicFile`'s temporary files (a dot file that node_exporter's `*.prom`
    /// glob never reads). Only a real create sees all that this process meets: permissions, ACLs, a read-only mount,
    /// systemd's `ProtectSystem=` view of the file system.
    /// - Parameter path: an absolute path (`Configuration.metricsFile`).
    package static func place(of path: String) -> MetricsFilePlace {
        var st = stat()
        if stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR {
            return MetricsFilePlace(directory: .exists, isDirectory: true)
        }
        if lstat(path, &st) == 0, (st.st_mode & S_IFMT) != S_IFREG {
            return MetricsFilePlace(directory: .exists, isOtherThanRegularFile: true)
        }
        guard let slash = path.lastIndex(of: "/") else { return MetricsFilePlace(directory: .missing) }
        let directory = slash == path.startIndex ? "/" : String(path[..<slash])
        if stat(directory, &st) != 0 {
            switch errno {
            case ENOENT: return MetricsFilePlace(directory: .missing)
            case ENOTDIR: return MetricsFilePlace(directory: .notADirectory)
            // A directory above that this user may not enter: it cannot write there either.
            case EACCES: return MetricsFilePlace(directory: .exists, creation: .denied)
            default: return MetricsFilePlace(directory: .exists, creation: .failedOtherwise)
            }
        }
        guard (st.st_mode & S_IFMT) == S_IFDIR else { return MetricsFilePlace(directory: .notADirectory) }
        let name = path[path.index(after: slash)...]
        let probe = "\(directory == "/" ? "" : directory)/.\(name).\(getpid()).probe"
        let fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd < 0 else {
            _ = close(fd)
            _ = unlink(probe)
            return MetricsFilePlace(directory: .exists, creation: .succeeded)
        }
        switch errno {
        case EACCES, EPERM: return MetricsFilePlace(directory: .exists, creation: .denied)
        case EROFS: return MetricsFilePlace(directory: .exists, creation: .readOnlyFileSystem)
        default: return MetricsFilePlace(directory: .exists, creation: .failedOtherwise)
        }
    }

    /// When this process started, in milliseconds since the Unix epoch: the wall clock read the first time this is
    /// asked for, which `App.main` does first of all.
    package static let processStart = SystemClock().unixMilliseconds()
}

/// Carries out the metrics for `Service`: hands every engine action to `Metrics`, and writes the file when
/// `MetricsWriteThrottle` says so, on a timer of the service's runtime when a change must wait; the timestamps are
/// the runtime's wall clock. Decides nothing.
///
/// Touched only on the engine queue.
final class MetricsRecorder: @unchecked Sendable {
    // @unchecked: the engine queue is the only thread that touches it (as `Service`'s own fields).
    private let file: MetricsFile
    private let runtime: any ServiceRuntime
    private let logger: Logger
    private var metrics: Metrics
    private var throttle = MetricsWriteThrottle()
    private var timer: (any ScheduledTimer)?

    init(file: MetricsFile, runtime: any ServiceRuntime, logger: Logger, processStart: Int64?) {
        metrics = Metrics(version: Version.current, processStart: processStart)
        self.file = file
        self.runtime = runtime
        self.logger = logger
    }

    /// Before the service performs `action` (and so before the logger filters a record by level).
    func observe(_ action: Engine.Action) {
        metrics.observe(action, unixMilliseconds: runtime.unixMilliseconds())
    }

    /// After the service performed a batch of actions.
    func flush() {
        carryOut(throttle.decide(revision: metrics.revision, now: runtime.now()))
    }

    /// The service ends: the last write (`up 0`), whatever the interval.
    func stop() {
        timer?.cancel()
        timer = nil
        carryOut(throttle.stopping(now: runtime.now()))
    }

    private func carryOut(_ decision: MetricsWriteThrottle.Decision) {
        switch decision {
        case .write:
            let revision = metrics.revision
            let ok = file.write(MetricsExposition.render(metrics))
            if let warning = throttle.written(ok: ok, revision: revision) { logger.log(warning) }
            // A failed write is tried again one interval later (a directory mounted late).
            if !ok { carryOut(throttle.decide(revision: revision, now: runtime.now())) }
        case .writeAt(let at):
            timer = runtime.schedule(at: at, alsoOnWallClock: false) { [self] in
                timer = nil
                carryOut(throttle.timerFired(revision: metrics.revision, now: runtime.now()))
            }
        case .none:
            break
        }
    }
}
