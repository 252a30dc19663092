import Dispatch
import NotifyCore

/// The production runtime: one serial queue owns the engine and every timer; the poll loop runs on its own queue,
/// the relay POST and the config reads on theirs. Its clocks are the system's (`SystemClock`).
final class DispatchRuntime: ServiceRuntime {
    private let clock = SystemClock()
    let engine = DispatchQueue(label: "vaultsync-notify.engine")
    private let poll = DispatchQueue(label: "vaultsync-notify.poll")
    private let relay = DispatchQueue(label: "vaultsync-notify.relay")
    private let peers = DispatchQueue(label: "vaultsync-notify.peers")

    var engineQueue: DispatchQueue? { engine }

    func now() -> Instant { clock.now() }

    func sleep(until instant: Instant) { clock.sleep(until: instant) }

    func unixMilliseconds() -> Int64 { clock.unixMilliseconds() }

    func onEngine(_ body: @escaping @Sendable () -> Void) { engine.async(execute: body) }

    func onLane(_ lane: ServiceLane, _ body: @escaping @Sendable () -> Void) {
        switch lane {
        case .longPoll, .pollLoop: poll.async(execute: body)
        case .relay: relay.async(execute: body)
        case .peers: peers.async(execute: body)
        }
    }

    func schedule(at: Instant, alsoOnWallClock: Bool, _ body: @escaping @Sendable () -> Void) -> any ScheduledTimer {
        let ns = max(.zero, at - now()).nanoseconds
        let timer = DispatchTimer()
        let fire: @Sendable () -> Void = { [timer] in
            // Whichever source comes first runs the body; the other is cancelled (both are on the engine queue).
            guard timer.fire() else { return }
            body()
        }
        let monotonic = DispatchSource.makeTimerSource(queue: engine)
        monotonic.schedule(deadline: .now() + .nanoseconds(ns), leeway: .nanoseconds(0))
        monotonic.setEventHandler(handler: fire)
        timer.sources.append(monotonic)
        if alsoOnWallClock {
            let wall = DispatchSource.makeTimerSource(queue: engine)
            wall.schedule(wallDeadline: .now() + .nanoseconds(ns), leeway: .seconds(1))
            wall.setEventHandler(handler: fire)
            timer.sources.append(wall)
        }
        for source in timer.sources { source.resume() }
        return timer
    }

    /// One timer: its monotonic source, and its wall-clock one when asked for; the first to fire cancels both.
    private final class DispatchTimer: ScheduledTimer, @unchecked Sendable {
        // @unchecked: Dispatch sources are thread-safe but not marked Sendable; `sources` is filled before any
        // source is resumed, and `fired` is only touched on the engine queue.
        var sources: [any DispatchSourceTimer] = []
        private var fired = false

        /// True the first time: the body runs then.
        func fire() -> Bool {
            guard !fired else { return false }
            fired = true
            cancel()
            return true
        }

        func cancel() { for source in sources { source.cancel() } }
    }
}
