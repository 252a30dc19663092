/// The process exit statuses, in one table (BSD sysexits where one fits). README.md "Exit statuses" mirrors it
/// (a test compares them).
///
/// A service manager must not restart on `usage` or `configuration`: the same input fails the same way again
/// (systemd: `RestartPreventExitStatus=64 78`).
public enum ExitStatus: Int32, Sendable, CaseIterable {
    /// Clean stop (SIGTERM/SIGINT), or a mode that succeeded.
    case ok = 0
    /// `--doctor` or `--healthcheck` found a failure. Never the service's own exit status.
    case checkFailed = 1
    /// Bad command line (EX_USAGE).
    case usage = 64
    /// A temporary failure (EX_TEMPFAIL); restarting later may help.
    case temporary = 75
    /// Configuration error (EX_CONFIG): an invalid environment variable, no usable config.xml, a rejected API key,
    /// or a relay 404 at start-up, before the relay answered at RELAY_URL (wrong RELAY_URL; relay spec, "Error
    /// responses"). A later 404 is a relay outage and is retried.
    case configuration = 78

    /// True when a service manager should not restart the process after this status.
    public var preventsRestart: Bool { self == .usage || self == .configuration }
}
