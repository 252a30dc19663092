/// Decides when the service rewrites METRICS_FILE: at once the first time, then only when the metrics changed
/// (`Metrics.revision`) and at least `minInterval` after the last write (monotonic time), so that a busy event
/// stream costs one small write per interval and an idle service none; and always at the stop, so that the file
/// ends with `up 0`.
///
/// A change inside the interval is not lost: `decide` answers `.writeAt` once, and the caller calls
/// `timerFired(revision:now:)` then. A failed write is retried one interval later, and warned about once per run of
/// failures (`written(ok:revision:)`).
package struct MetricsWriteThrottle: Sendable, Equatable {
    package enum Decision: Sendable, Equatable {
        /// Write now; report the result with `written(ok:revision:)`.
        case write
        /// Nothing to do now; arm a timer for this instant and call `timerFired(revision:now:)` then.
        case writeAt(Instant)
        /// Nothing to do (nothing changed, or a timer is already armed).
        case none
    }

    /// Least time between two writes. Default 5 s.
    package var minInterval: Duration
    private var lastWrite: Instant?
    private var writtenRevision: Int?
    private var timer: Instant?
    private var failing = false
    private var stopped = false

    package init(minInterval: Duration = .seconds(5)) {
        self.minInterval = minInterval
    }

    /// After the service performed some actions: whether to write the metrics at `revision` now.
    package mutating func decide(revision: Int, now: Instant) -> Decision {
        guard revision != writtenRevision, !stopped else { return .none }
        // A clock that went back (never on the monotonic clock) must not hold writes back for good.
        if let last = lastWrite, now - last < minInterval, now >= last {
            guard timer == nil else { return .none }
            let at = last + minInterval
            timer = at
            return .writeAt(at)
        }
        lastWrite = now
        return .write
    }

    /// The timer `decide` asked for fired.
    package mutating func timerFired(revision: Int, now: Instant) -> Decision {
        timer = nil
        return decide(revision: revision, now: now)
    }

    /// The service stops: write now whatever the interval (the file then says `up 0`), and never again.
    package mutating func stopping(now: Instant) -> Decision {
        guard !stopped else { return .none }
        stopped = true
        timer = nil
        lastWrite = now
        return .write
    }

    /// The result of the write `decide` asked for.
    /// - Returns: the warning to log: on the first failure after a success (or after the start), else nil.
    package mutating func written(ok: Bool, revision: Int) -> LogRecord? {
        if ok {
            writtenRevision = revision
            failing = false
            return nil
        }
        defer { failing = true }
        return failing ? nil : LogRecord(.warn, .metricsFileUnwritable)
    }
}
