/// What `--healthcheck` found (and `--status` shows): healthy, or the first reason it is not. Each reason other
/// than `.healthy` exits 1 (`ExitStatus.checkFailed`).
package enum HealthVerdict: String, Sendable, Equatable, CaseIterable {
    case healthy
    /// The environment is invalid (the service would not run either).
    case configuration
    /// No state file, or no usable state directory, or a malformed file.
    case noState = "no-state"
    /// The last successful poll is too old (or too far in the future), or there was none yet.
    case stale
    /// config.xml or the environment gives no usable Syncthing access.
    case noAccess = "no-access"
    /// Syncthing did not answer `/rest/system/status` with 200 and a status document.
    case syncthingDown = "syncthing-down"
    /// The whole check did not finish within its bound.
    case timedOut = "timed-out"

    /// `.ok` when healthy, `.checkFailed` otherwise.
    package var exitStatus: ExitStatus { self == .healthy ? .ok : .checkFailed }
}
