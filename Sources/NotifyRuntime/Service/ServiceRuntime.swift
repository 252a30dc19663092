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

/// The production runtime: one serial queue owns the engine and every timer; the poll loop runs on its own queue,
/// the relay POST and the config reads on theirs.
final class DispatchRuntime: ServiceRuntime {
    let engine = DispatchQueue(label: "vaultsync-notify.engine")
    private let poll = DispatchQueue(label: "vaultsync-notify.poll")
    private let relay = DispatchQueue(label: "vaultsync-notify.relay")
    private let peers = DispatchQueue(label: "vaultsync-notify.peers")

    var engineQueue: DispatchQueue? { engine }

    func now() -> Instant { MonotonicClock.now() }

    func onEngine(_ body: @escaping @Sendable () -> Void) { engine.async(execute: body) }

    func onLane(_ lane: ServiceLane, _ body: @escaping @Sendable () -> Void) {
        switch lane {
        case .longPoll, .syncthing: poll.async(execute: body)
        case .relay: relay.async(execute: body)
        case .peers: peers.async(execute: body)
        }
    }

    func schedule(at: Instant, onWallClock: Bool, _ body: @escaping @Sendable () -> Void) -> any ScheduledTimer {
        let ns = max(.zero, at - now()).nanoseconds
        let source = DispatchSource.makeTimerSource(queue: engine)
        if onWallClock {
            source.schedule(wallDeadline: .now() + .nanoseconds(ns), leeway: .seconds(1))
        } else {
            source.schedule(deadline: .now() + .nanoseconds(ns), leeway: .nanoseconds(0))
        }
        source.setEventHandler(handler: body)
        source.resume()
        return DispatchTimer(source: source)
    }

    private final class DispatchTimer: ScheduledTimer, @unchecked Sendable {
        // @unchecked: a Dispatch source is thread-safe, but not marked Sendable.
        let source: any DispatchSourceTimer
        init(source: any DispatchSourceTimer) { self.source = source }
        func cancel() { source.cancel() }
    }
}
