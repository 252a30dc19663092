/// What the sweep learned of one pair: its completion answer and whether its device is connected
/// (`/rest/system/connections`).
package struct SweepObservation: Sendable, Equatable {
    package var pair: SweepPair
    package var connected: Bool
    package var completion: Completion

    package init(pair: SweepPair, connected: Bool, completion: Completion) {
        self.pair = pair
        self.connected = connected
        self.completion = completion
    }
}
