import Dispatch
import NotifyCore

/// The production runtime: one serial queue owns the engine and every timer; the poll loop runs on its own queue,
/// the relay POST and the config reads on theirs.
final class DispatchRuntime: ServiceRuntime {
    let engine = DispatchQueue(label: "vaultsync-notify.engine")
    private let poll = DispatchQueue(label: "vaultsync-notify.poll")
    private let relay = DispatchQueue(label: "vaultsync-notify.relay")
    private let peers = DispatchQueue(label: "vaultsync-notify.peers")

    var engineQueue: DispatchQueue? { engine }

    func now() -> Instant { MonotonicClock.now() }

    func sleep(until instant: Instant) { MonotonicClock().sleep(until: instant) }

    func onEngine(_ body: @escaping @Sendable () -> Void) { engine.async(execute: body) }

    func onLane(_ lane: ServiceLane, _ body: @escaping @Sendable () -> Void) {
        switch lane {
        case .longPoll, .pollLoop: poll.async(execute: body)
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
