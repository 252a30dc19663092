/// Decides when the service rewrites the state file: the first time; at once when something an operator reads
/// changed (`ServiceState.significant`: the relay's answer or state, a wake-up becoming pending, sent or answered,
/// Syncthing becoming reachable or not, the shared counts, the next sweep); and otherwise at most once per
/// `minInterval` (monotonic time), so that a busy event stream costs at most one small write every 10 s and an idle
/// one a write per long-poll (50 s). A successful poll is never held back by a write made just before it: when the
/// file's `lastPoll` is `minInterval` or more behind, it is written at once (else an idle service's file could lag a
/// whole long-poll more, close to `--healthcheck`'s 120 s).
///
/// The significant changes come at most once per relay answer, poll-loop request or config read (a busy stream
/// moves a pending wake-up's debounce end at every batch, which is not significant), so they cannot raise the rate
/// beyond the requests the service makes anyway.
package struct StateWriteThrottle: Sendable {
    package var minInterval: Duration
    private var lastWrite: Instant?
    /// The state last written (compared by `ServiceState.isSignificantlyEqual(to:)`).
    private var lastWritten: ServiceState?
    /// `lastPoll` of the last write (wall-clock seconds).
    private var lastWrittenPoll: Int64?

    package init(minInterval: Duration = .seconds(10)) {
        self.minInterval = minInterval
    }

    /// Whether `state` should be written now; when true, the write is assumed to happen.
    package mutating func shouldWrite(_ state: ServiceState, now: Instant) -> Bool {
        let due =
            lastWrite.map { now - $0 >= minInterval || now < $0 } ?? true
        let interval = minInterval.components.seconds
        let pollBehind = state.lastPoll.map { poll in lastWrittenPoll.map { poll - $0 >= interval } ?? true } ?? false
        guard due || pollBehind || lastWritten.map({ !state.isSignificantlyEqual(to: $0) }) ?? true else {
            return false
        }
        lastWrite = now
        lastWritten = state
        lastWrittenPoll = state.lastPoll
        return true
    }

    /// Forgets the last write, so the next `shouldWrite` is true (after a failed write).
    package mutating func reset() {
        lastWrite = nil
        lastWritten = nil
        lastWrittenPoll = nil
    }
}
