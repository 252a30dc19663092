/// Decides when the service rewrites the state file: the first time, whenever the relay category changed, and
/// otherwise at most once per `minInterval` (monotonic time), so that a busy event stream costs at most one small
/// write every 10 s and an idle one a write per long-poll (50 s).
package struct StateWriteThrottle: Sendable {
    package var minInterval: Duration
    private var lastWrite: Instant?
    private var lastRelay: RelayOutcomeCategory?

    package init(minInterval: Duration = .seconds(10)) {
        self.minInterval = minInterval
    }

    /// Whether `state` should be written now; when true, the write is assumed to happen.
    package mutating func shouldWrite(_ state: ServiceState, now: Instant) -> Bool {
        let due =
            lastWrite.map { now - $0 >= minInterval || now < $0 } ?? true
        guard due || lastRelay != state.relay else { return false }
        lastWrite = now
        lastRelay = state.relay
        return true
    }

    /// Forgets the last write, so the next `shouldWrite` is true (after a failed write).
    package mutating func reset() {
        lastWrite = nil
        lastRelay = nil
    }
}
