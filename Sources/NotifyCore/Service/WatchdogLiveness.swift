/// Whether the event loop is making progress, for the systemd watchdog (`WATCHDOG=1`). Pure: callers pass `now`.
///
/// The poll thread announces every blocking step with its bound (`stepStarted(now:bound:)`: a long-poll, a
/// status or head read, the relay health check, and at start the wait for config.xml) and its end
/// (`stepFinished(now:)`); a backoff is an engine timer, so it is time between steps. It counts as alive
/// while it is inside a step whose bound (plus `grace`) has not passed, or, between steps, for `idleLimit` after
/// the last one ended. A poll thread stuck inside libcurl past the long-poll's 65 s, or never coming back from a
/// step, is therefore dead within its bound plus `grace`.
///
/// The other half of liveness, the engine queue answering, is structural: the watchdog tick runs on the engine
/// queue, so a wedged engine sends no ping at all.
package struct WatchdogLiveness: Sendable, Equatable {
    /// Slack past a step's bound (libcurl's own timeout firing late, scheduling).
    package var grace: Duration
    /// Longest the thread may spend between steps (CPU work, a quick engine hand-off).
    package var idleLimit: Duration
    private(set) var stepDeadline: Instant?
    private(set) var lastProgress: Instant
    /// Set after `stopped()`: the poll thread ended on purpose (shutdown); alive stays true.
    private(set) var finished = false

    /// The service's `grace`: 5 s of slack covers libcurl's timer and thread scheduling on a loaded NAS.
    package static let defaultGrace: Duration = .seconds(5)
    /// The service's `idleLimit`: 10 s. Between steps the poll thread only hands an answer to the engine, which
    /// takes milliseconds; the engine's waits between steps (the Syncthing backoff, capped below this) count too.
    package static let defaultIdleLimit: Duration = .seconds(10)

    package init(now: Instant, grace: Duration = defaultGrace, idleLimit: Duration = defaultIdleLimit) {
        self.grace = grace
        self.idleLimit = idleLimit
        lastProgress = now
    }

    /// A blocking step begins that returns within `bound`.
    package mutating func stepStarted(now: Instant, bound: Duration) {
        stepDeadline = now + bound
    }

    /// The current step ended (whatever its outcome: a failed poll that returned is progress too).
    package mutating func stepFinished(now: Instant) {
        stepDeadline = nil
        lastProgress = now
    }

    /// The thread ended on purpose (shutdown); the process exits on its own.
    package mutating func stopped() {
        finished = true
        stepDeadline = nil
    }

    /// True when a ping is deserved at `now`.
    package func isAlive(now: Instant) -> Bool {
        if finished { return true }
        if let stepDeadline { return now <= stepDeadline + grace }
        return now - lastProgress <= idleLimit
    }
}
