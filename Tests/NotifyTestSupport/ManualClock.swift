import NotifyCore
import NotifyRuntime

/// A clock the test moves by hand.
package final class ManualClock: Sendable {
    private let state = ThreadSafe<(mono: Instant, wall: Int64)>((.zero, 1_718_000_000))
    package var mono: Instant { state.withLock { $0.mono } }
    package func advance(_ d: Duration) {
        state.withLock {
            $0.mono = $0.mono + d
            $0.wall += d.components.seconds
        }
    }
    package var monotonic: @Sendable () -> Instant { { [self] in state.withLock { $0.mono } } }
    package var wall: @Sendable () -> Int64 { { [self] in state.withLock { $0.wall } } }
}
