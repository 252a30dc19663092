import Dispatch
import NotifyCore

/// Where the service's work runs, and its clock: Dispatch in production (`DispatchRuntime`), a manual virtual clock
/// in tests, so that the real `Service` runs on virtual time.
package protocol ServiceRuntime: MonotonicTimeline {
    /// Runs `body` on the engine queue, after what is already queued there.
    func onEngine(_ body: @escaping @Sendable () -> Void)
    /// Runs blocking `body` on `lane`, off the engine queue; a lane runs one job at a time, in order.
    func onLane(_ lane: ServiceLane, _ body: @escaping @Sendable () -> Void)
    /// Runs `body` once on the engine queue at `at` (monotonic), unless cancelled first; with `alsoOnWallClock`, at
    /// the wall-clock time `at` has now instead if that comes first (a host suspend, a step forward).
    func schedule(at: Instant, alsoOnWallClock: Bool, _ body: @escaping @Sendable () -> Void) -> any ScheduledTimer
    /// The engine queue, for the watchdog's timer; nil when there is none (tests).
    var engineQueue: DispatchQueue? { get }
}

package protocol ScheduledTimer: Sendable {
    func cancel()
}
