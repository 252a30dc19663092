/// The process exit statuses, in one table (BSD sysexits where one fits). README.md "Exit statuses" mirrors it,
/// meaning and restart advice (a test compares them).
///
/// A service manager must not restart on `usage` or `configuration`: the same input fails the same way again
/// (systemd: `RestartPreventExitStatus=64 78`).
package enum ExitStatus: Int32, Sendable, CaseIterable {
    /// Clean stop (SIGTERM, SIGINT or SIGQUIT: `SignalPolicy`), or a mode that succeeded.
    case ok = 0
    /// `--doctor`, `--healthcheck` or `--status` found a failure. Never the service's own exit status.
    case checkFailed = 1
    /// Bad command line (EX_USAGE).
    case usage = 64
    /// A temporary failure (EX_TEMPFAIL); restarting later may help: config.xml not there yet, or another service
    /// running for the same Syncthing instance (the service manager's restarts start this one once it has stopped).
    case temporary = 75
    /// Configuration error (EX_CONFIG): an invalid environment variable, no usable config.xml, a rejected API key,
    /// or a relay 404 at start-up, before the relay answered at RELAY_URL (the URL points at something that is not
    /// the relay; README.md, "Relay answers"). A later 404 is a relay outage and is retried.
    case configuration = 78

    /// What the status means, as README.md's "Exit statuses" table says it (a test keeps the two equal).
    package var meaning: String {
        switch self {
        case .ok:
            "stopped by SIGTERM, SIGINT or SIGQUIT (a pending wake-up is sent first, within 5 s, or 6 s when a "
                + "stop in a busy sync's pause first reads what came in it; also during the config.xml wait or "
                + "while Syncthing is unreachable, with the same `stopped` record), or a mode that succeeded"
        case .checkFailed:
            "`--doctor`, `--healthcheck` or `--status` found a failure (never the service's own exit)"
        case .usage:
            "usage error"
        case .temporary:
            "temporary failure: config.xml not there yet when the wait ended; also at the path "
                + "`SYNCTHING_CONFIG` names, when that path is an empty directory, or its directory exists, or "
                + "the nearest directory above it that exists is empty (a late mount); or another "
                + "vaultsync-notify already runs for the same Syncthing instance (it holds the state file's lock); "
                + "or Syncthing answered with a malformed Device ID (logged as such; a restart may meet a sane "
                + "Syncthing)"
        case .configuration:
            "configuration error: invalid variable, unusable config.xml (a `SYNCTHING_CONFIG` that cannot "
                + "be one: a directory that holds other files but no config.xml, a path below a missing "
                + "directory whose nearest existing ancestor is not empty, a foreign file; unreadable), wrong "
                + "API key, or the relay answered 404 at start-up"
        }
    }

    /// True when a service manager should not restart the process after this status.
    package var preventsRestart: Bool { self == .usage || self == .configuration }
}
