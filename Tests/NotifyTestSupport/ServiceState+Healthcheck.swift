import NotifyCore

extension ServiceState {
    /// The two keys `--healthcheck` reads (the rest is for `--status`).
    var healthcheckFields: ServiceState { ServiceState(lastPoll: lastPoll, relay: relay) }
}
