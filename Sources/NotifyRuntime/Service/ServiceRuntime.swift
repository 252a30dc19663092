import Dispatch
import NotifyCore

/// Where the service's work runs, and its clock: Dispatch in production (`DispatchRuntime`), a manual virtual clock
/// in tests, so that the real `Service` runs on virtual time.
protocol ServiceRuntime: Sendable {
    /// The one monotonic timeline of the process (also the monitor's).
    func now() -> Instant
    /// Runs `body` on the engine queue, after what is already queued there.
    func onEngine(_ body: @escaping @Sendable () -> Void)
    /// Runs blocking `body` on `lane`, off the engine queue; a lane runs one job at a time, in order.
    func onLane(_ lane: ServiceLane, _ body: @escaping @Sendable () -> Void)
    /// Runs `body` on the engine queue at `at`, unless cancelled first.
    func schedule(at: Instant, onWallClock: Bool, _ body: @escaping @Sendable () -> Void) -> any ScheduledTimer
    /// The engine queue, for the watchdog's timer; nil when there is none (tests).
    var engineQueue: DispatchQueue? { get }
}

protocol ScheduledTimer: Sendable {
    func cancel()
}

/// The threads off the engine queue. In production the poll loop's requests and the long-poll share one thread, so
/// that the poll loop has one request in flight at a time.
enum ServiceLane: Sendable, Equatable {
    /// The event long-poll.
    case longPoll
    /// The poll loop's other requests (relay health, status, head).
    case syncthing
    /// The relay POST.
    case relay
    /// Config and peer reads (they may run while a long-poll is held).
    case peers
}

extension Duration {
    /// Whole nanoseconds, for Dispatch.
    var nanoseconds: Int {
        let (s, atto) = components
        return Int(s) * 1_000_000_000 + Int(atto / 1_000_000_000)
    }
}

/// Monotonic time since boot (CLOCK_MONOTONIC through Dispatch): the process's one `Instant` timeline.
enum MonotonicClock {
    @Sendable static func now() -> Instant {
        Instant(.nanoseconds(Int64(clamping: DispatchTime.now().uptimeNanoseconds)))
    }
}
