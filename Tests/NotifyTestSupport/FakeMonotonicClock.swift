import Foundation
import NotifyCore
import NotifyRuntime

/// A monotonic timeline (the process's one clock seam) that starts at `.zero` and only moves when something sleeps
/// on it, recording how long each sleep was.
final class FakeMonotonicClock: MonotonicTimeline, @unchecked Sendable {
    private let lock = NSLock()
    private var current = Instant.zero
    private(set) var sleeps: [Duration] = []
    /// Called after each sleep with the new time.
    var onAdvance: (@Sendable (Instant) -> Void)?

    func now() -> Instant { lock.withLock { current } }

    func sleep(until instant: Instant) {
        let now = lock.withLock {
            let slept = max(.zero, instant - current)
            sleeps.append(slept)
            current = current + slept
            return current
        }
        onAdvance?(now)
    }
}
