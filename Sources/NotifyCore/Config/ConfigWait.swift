/// The first-boot wait for config.xml, decided on the monotonic timeline before any engine exists: Syncthing writes
/// config.xml a moment after both containers start, so a missing file is looked for again every `pollInterval`
/// until `wait` (SYNCTHING_CONFIG_WAIT_SECONDS) has passed. Pure: the shell probes the file system, reports what it
/// found with the time, and sleeps until the instant it is given.
///
/// - A config.xml found, or something this process may not read (EACCES: waiting does not change permissions), ends
///   the wait at once.
/// - Nothing there: look again at `min(now + pollInterval, start + wait)`; the first such answer says to announce the
///   wait (`configWaiting`). Once `wait` has passed, the wait is over. `wait == .zero` looks exactly once.
/// - How a wait that found no usable config.xml ends is `exitStatus(mayStillAppear:)`.
package struct ConfigWait: Sendable {
    /// What one look at the candidates found: a config.xml, something this process may not read, or nothing.
    package enum Look: Sendable, Equatable { case found, blocked, missing }

    package enum Step: Sendable, Equatable {
        /// Stop waiting; the last look's result stands.
        case stop
        /// Look again at this instant. `announce`: the first time the wait goes on (log it once).
        case lookAgain(at: Instant, announce: Bool)
    }

    /// The time between looks unless a caller sets its own: 1 s, so that a config.xml Syncthing has just written is
    /// read within a second, at the cost of one small directory probe a second while waiting.
    package static let defaultPollInterval: Duration = .seconds(1)

    package let wait: Duration
    package let pollInterval: Duration
    private let start: Instant
    private var announced = false

    /// - Parameters:
    ///   - wait: how long a missing config.xml is waited for (SYNCTHING_CONFIG_WAIT_SECONDS).
    ///   - pollInterval: time between looks (`defaultPollInterval`, 1 s).
    ///   - start: the instant of the first look.
    package init(wait: Duration, pollInterval: Duration = defaultPollInterval, start: Instant) {
        self.wait = wait
        self.pollInterval = pollInterval
        self.start = start
    }

    /// What to do after a look at `now`.
    package mutating func next(after look: Look, now: Instant) -> Step {
        guard look == .missing, now - start < wait else { return .stop }
        defer { announced = true }
        return .lookAgain(at: min(now + pollInterval, start + wait), announce: !announced)
    }

    /// How the start-up ends when no usable config.xml was found: 75 (`.temporary`) when it may still appear (nothing
    /// there yet: a late mount, a Syncthing on its first boot; the service manager starts the sidecar again), else 78
    /// (`.configuration`: a path that cannot be a config.xml, an unreadable one, a wrong file; the same start fails
    /// the same way, so a service manager must not restart it).
    package static func exitStatus(mayStillAppear: Bool) -> ExitStatus {
        mayStillAppear ? .temporary : .configuration
    }
}
