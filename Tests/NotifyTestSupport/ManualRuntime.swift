import Dispatch
import NotifyCore
import NotifyRuntime
import Synchronization

/// The service's runtime on virtual time: nothing runs until the test drains the queued work or advances the clock.
/// Every lane runs inline, in the order its work was queued; a long-poll is held until the test releases it, as
/// Syncthing holds one until an event comes. The unit suites' one clock: its monotonic clock starts at 1000 s
/// (`ServiceRig.t0`), its wall clock then reads Unix time 1_718_000_000 s and moves with it unless stepped.
final class ManualRuntime: ServiceRuntime {
    private final class Timer: ScheduledTimer {
        let at: Instant
        let order: Int
        let body: @Sendable () -> Void
        let cancelled = Atomic<Bool>(false)
        init(at: Instant, order: Int, body: @escaping @Sendable () -> Void) {
            self.at = at
            self.order = order
            self.body = body
        }
        func cancel() { cancelled.store(true, ordering: .relaxed) }
    }

    private struct State {
        var now = Instant.seconds(1000)
        /// The wall clock at the monotonic origin (`stepWallClock`).
        var wallAtOrigin = Duration.seconds(1_717_999_000)
        var sleeps: [Duration] = []
        var work: [@Sendable () -> Void] = []
        var held: [@Sendable () -> Void] = []
        var timers: [Timer] = []
        var order = 0
        var scheduled = 0
        /// The next engine work waits this long on the virtual clock (`deferNextEngineWork`).
        var deferNext: Duration?
        /// Asked whenever a long-poll is held with no work queued: true when Syncthing has its answer ready (events
        /// that came while no poll was out), and the poll is then released at once.
        var answerReady: (@Sendable () -> Bool)?
    }
    private let state = ThreadSafe(State())

    var engineQueue: DispatchQueue? { nil }

    func now() -> Instant { state.withLock { $0.now } }

    func unixMilliseconds() -> Int64 {
        let (seconds, attoseconds) = state.withLock { $0.wallAtOrigin + $0.now.sinceOrigin }.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    /// Steps the wall clock by `offset` (negative: back), as NTP does; the monotonic clock stays where it is.
    func stepWallClock(by offset: Duration) { state.withLock { $0.wallAtOrigin += offset } }

    func onEngine(_ body: @escaping @Sendable () -> Void) {
        state.withLock { s in
            guard let delay = s.deferNext else { return s.work.append(body) }
            s.deferNext = nil
            s.order += 1
            s.timers.append(Timer(at: s.now + delay, order: s.order, body: body))
        }
    }

    /// Holds the next work queued for the engine for `delay` on the virtual clock, firing timers meanwhile: a lane's
    /// answer that takes that long (a slow relay), while the engine goes on.
    func deferNextEngineWork(by delay: Duration) { state.withLock { $0.deferNext = delay } }

    func onLane(_ lane: ServiceLane, _ body: @escaping @Sendable () -> Void) {
        state.withLock { lane == .longPoll ? $0.held.append(body) : $0.work.append(body) }
    }

    func schedule(at: Instant, alsoOnWallClock: Bool, _ body: @escaping @Sendable () -> Void) -> any ScheduledTimer {
        state.withLock { s in
            s.order += 1
            s.scheduled += 1
            let timer = Timer(at: at, order: s.order, body: body)
            s.timers.append(timer)
            return timer
        }
    }

    /// Releases a held long-poll as soon as `ready` says its answer is there (`answerReady`).
    func answerHeldPolls(when ready: @escaping @Sendable () -> Bool) { state.withLock { $0.answerReady = ready } }

    /// Runs queued work until none is left; a held long-poll too, when its answer is ready (`answerHeldPolls`).
    func drain() {
        for _ in 0..<100_000 {
            let (next, ready) = state.withLock { s in
                (s.work.isEmpty ? nil : s.work.removeFirst(), s.held.isEmpty ? nil : s.answerReady)
            }
            if let next {
                next()
            } else if let ready, ready() {
                releaseLongPoll()
            } else {
                return
            }
        }
        preconditionFailure("the service never went idle")
    }

    /// Moves the clock forward by `duration`, firing due timers in order and draining after each.
    func advance(by duration: Duration) {
        drain()
        let end = now() + duration
        while true {
            let due = state.withLock { s -> Timer? in
                s.timers.removeAll { $0.cancelled.load(ordering: .relaxed) }
                guard let first = s.timers.filter({ $0.at <= end }).min(by: { ($0.at, $0.order) < ($1.at, $1.order) })
                else { return nil }
                s.timers.removeAll { $0 === first }
                s.now = max(s.now, first.at)
                return first
            }
            guard let due else { break }
            due.body()
            drain()
        }
        state.withLock { $0.now = end }
        drain()
    }

    /// Moves the clock without firing timers (time spent inside a blocking request).
    func skip(_ duration: Duration) { state.withLock { $0.now = $0.now + duration } }

    /// A blocking wait on the timeline (the config.xml wait): the clock moves to `instant`, firing the timers due on
    /// the way (what happens meanwhile, as a file that appears), and the wait is recorded in `sleeps`.
    func sleep(until instant: Instant) {
        let wait = state.withLock { s in
            let wait = max(.zero, instant - s.now)
            s.sleeps.append(wait)
            return wait
        }
        advance(by: wait)
    }

    /// How long each `sleep(until:)` waited, in order.
    var sleeps: [Duration] { state.withLock { $0.sleeps } }

    /// A long-poll is waiting for Syncthing's answer.
    var holdsLongPoll: Bool { state.withLock { !$0.held.isEmpty } }

    /// Lets the held long-poll run (against what the fake Syncthing now answers), then drains.
    func releaseLongPoll() {
        let job = state.withLock { s -> (@Sendable () -> Void)? in s.held.isEmpty ? nil : s.held.removeFirst() }
        guard let job else { preconditionFailure("no long-poll is held") }
        job()
        drain()
    }

    /// How many timers were scheduled so far.
    var scheduled: Int { state.withLock { $0.scheduled } }

    /// When the earliest live timer fires; nil when none is armed.
    var nextTimer: Instant? {
        state.withLock { s in s.timers.filter { !$0.cancelled.load(ordering: .relaxed) }.map(\.at).min() }
    }
}
