/// The fixed `STATUS=` texts sent to systemd (shown by `systemctl status`). Never carries an identifier.
package enum ServiceStatusText: String, Sendable, CaseIterable {
    case starting = "starting"
    case connecting = "connecting to Syncthing"
    case watching = "watching Syncthing events"
    case syncthingUnavailable = "Syncthing not reachable, retrying"
    case relayInactive = "watching; no active relay subscription for this server yet"
    case relayRateLimited = "watching; relay rate limit, waiting"
    case relayFailing = "watching; relay not reachable, retrying"
    case stopping = "stopping"

    /// The status for a running service: Syncthing's state first, then the relay's.
    /// - Parameters:
    ///   - connected: the last Syncthing call succeeded.
    ///   - relay: the last relay answer.
    package static func running(connected: Bool, relay: RelayOutcomeCategory) -> ServiceStatusText {
        guard connected else { return .syncthingUnavailable }
        switch relay {
        case .none, .delivered: return .watching
        case .inactive: return .relayInactive
        case .rateLimited: return .relayRateLimited
        case .transient: return .relayFailing
        }
    }
}
