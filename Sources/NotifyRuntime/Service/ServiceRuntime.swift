import Dispatch
import NotifyCore

/// Where the service's work runs, and its clocks (`HostClock`): Dispatch and the system's clocks in production
/// (`DispatchRuntime`), virtual time in tests and the simulator, so that the real `Service` runs there as it runs in
/// production.
package protocol ServiceRuntime: HostClock {
    /// Runs `body` on the engine queue, after what is already queued there.
    func onEngine(_ body: @escaping @Sendable () -> Void)
    /// Runs blocking `body` on `lane`, off the engine queue; a lane runs one job at a time, in order.
    func onLane(_ lane: ServiceLane, _ body: @escaping @Sendable () -> Void)
    /// Runs `body` once on the engine queue at `at` (monotonic), unless cancelled first; with `alsoOnWallClock`, at
    /// the wall-clock time `at` has now instead if that comes first (a host suspend, a step forward).
    func schedule(at: Instant, alsoOnWallClock: Bool, _ body: @escaping @Sendable () -> Void) -> any ScheduledTimer
    /// The engine queue, for the signal sources; nil when there is none (tests, the simulator).
    var engineQueue: DispatchQueue? { get }
}

package protocol ScheduledTimer: Sendable {
    func cancel()
}
