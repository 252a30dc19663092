/// Whether the process that wrote a state file still runs, decided from what a reader found out (`WriterProbe`). Pure:
/// the runtime only gathers the facts (is the lock beside the file held, does the recorded process still exist with
/// the recorded start).

/// The process that writes a state file (`ServiceState.writer`): its id and, where the system says it, when it
/// started, so that a reused process id is never taken for the writer. Neither identifies a person, a device or a
/// path.
package struct ServiceWriter: Sendable, Equatable {
    /// The process id.
    package var pid: Int32
    /// The process's start as the system counts it (Linux: clock ticks since boot, `/proc/<pid>/stat` field 22);
    /// compared only with the same count read again, never turned into a time. Nil where it is not known.
    package var start: Int64?

    package init(pid: Int32, start: Int64?) {
        self.pid = pid
        self.start = start
    }
}

/// What a reader of a state file found out about its writer, at one moment.
package struct WriterProbe: Sendable, Equatable {
    /// The lock beside the state file, which a writer that records `pid` holds for its whole life (the kernel drops
    /// it when the process ends, also by SIGKILL or the OOM killer).
    package enum Lock: Sendable, Equatable {
        /// Some process holds it.
        case held
        /// Nobody holds it.
        case free
        /// It could not be tested (no lock file, not readable, a file system without locks).
        case untestable
    }

    /// The recorded process (`ServiceWriter`).
    package enum Process: Sendable, Equatable {
        /// A process with that id and that start exists.
        case alive
        /// No process with that id exists, or it started at another time (a reused id).
        case gone
        /// It could not be told (no start recorded, the process table not visible).
        case unknown
    }

    package var lock: Lock
    package var process: Process

    package init(lock: Lock, process: Process) {
        self.lock = lock
        self.process = process
    }

    /// Nothing could be found out: the age rule decides.
    package static let unknown = WriterProbe(lock: .untestable, process: .unknown)
}

/// Whether a service runs for a state file.
package enum ServiceLiveness: Sendable, Equatable {
    /// Its writer runs (or, for a file without `pid`, wrote it within `ServiceState.maxPollAge`).
    case running
    /// Its writer ended without removing it: a SIGKILL, the OOM killer, a crash.
    case stoppedWithoutFarewell
    /// A file without `pid` (an older writer) that was not written for longer than `ServiceState.maxPollAge`.
    case outOfDate
}

extension ServiceState {
    /// Whether the writer of this file still runs.
    ///
    /// A file with `pid` was written by a service holding the lock beside it, so: the lock held means a service runs;
    /// the recorded process alive means it runs (its lock file may have been removed under it); the process gone, or
    /// the lock free, means it ended without its farewell (a clean stop removes the file). When neither can be told,
    /// and for a file without `pid`, the age rule (`isRunning(now:)`) decides.
    /// - Parameters:
    ///   - probe: what the reader found out about the writer.
    ///   - now: wall-clock seconds since the Unix epoch.
    package func liveness(_ probe: WriterProbe, now: Int64) -> ServiceLiveness {
        let byAge: ServiceLiveness = isRunning(now: now) ? .running : .outOfDate
        guard writer != nil else { return byAge }
        if probe.lock == .held || probe.process == .alive { return .running }
        if probe.process == .gone || probe.lock == .free { return .stoppedWithoutFarewell }
        return byAge
    }
}
