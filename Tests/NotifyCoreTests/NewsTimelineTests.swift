import Testing

@testable import NotifyCore

/// What reaches the phone, through the real `Engine`: batches arrive as long-poll answers (each followed by its status
/// read), the config and each sweep's observations are answered as scripted, and the relay model swallows triggers
/// inside its 30 s window, so these timelines count pushes, not triggers.
@Suite("News timelines: what reaches the phone")
struct NewsTimelineTests {
    typealias T = PeerTrackerTests

    struct Rig {
        var engine: Engine
        var now = Instant.zero
        var events = PeerTrackerTests()
        var timers: [Engine.Timer: Instant] = [:]
        /// (time sent, reason) for each trigger.
        var sent: [(Instant, WakeReason)] = []
        /// When the relay pushed: a trigger within 30 s of its last push is accepted but pushes nothing.
        var pushes: [Instant] = []
        /// What each stale-peer sweep observes; nothing when empty.
        var sweepScript: [[SweepObservation]] = []
        private var outcomeDue: Instant?
        private let status = SystemStatus(myID: T.me, startTime: "2026-12-01T00:00:00Z")

        init(sweep: Duration? = nil, window: Duration? = .seconds(30)) {
            engine = Engine(
                settings: Engine.Settings(
                    policy: WakePolicy.Settings(
                        debounce: .seconds(2), debounceMax: .seconds(30), startupAnnounce: false,
                        staleRetrigger: sweep, relayWindow: window)))
            feed(.start)
            feed(.relayHealth(.ok))
            feed(.status(.success(status)))
            feed(.head(.success(0)))
        }

        /// One long-poll answer with these events.
        mutating func deliver(_ batch: [SyncthingEvent]) {
            feed(.polled(.success(batch), elapsed: .seconds(1)))
        }

        mutating func advance(seconds: Double) {
            let target = now + .milliseconds(Int64(seconds * 1000))
            while true {
                let timer = timers.min { $0.value < $1.value }
                let next = [timer?.value, outcomeDue].compactMap { $0 }.min()
                guard let next, next <= target else { break }
                now = next
                if let due = outcomeDue, due == next {
                    outcomeDue = nil
                    feed(.relayOutcome(.delivered(status: 202), jitter: 0.5))
                } else if let timer {
                    timers[timer.key] = nil
                    feed(.timerFired(timer.key))
                }
            }
            now = target
        }

        private mutating func feed(_ input: Engine.Input) {
            for action in engine.handle(input, now: now) {
                switch action {
                case .request(.status): feed(.status(.success(status)))
                case .request(.head): feed(.head(.success(engine.cursor.since)))
                case .readConfig(let kind, let generation):
                    let config = Engine.ConfigSnapshot(devices: T.devices(), folders: T.folders())
                    feed(.configRead(kind, generation: generation, config))
                case .observe(let kind, _):
                    let seen = kind == .sweep && !sweepScript.isEmpty ? sweepScript.removeFirst() : []
                    feed(.observed(kind, seen))
                case .armTimer(let timer, let at): timers[timer] = at
                case .cancelTimer(let timer): timers[timer] = nil
                case .sendTrigger:
                    if let last = pushes.last, now - last < .seconds(30) {} else { pushes.append(now) }
                    outcomeDue = now + .milliseconds(50)
                case .log(let record) where record.message == .triggerSending:
                    if case .reason(let reason)? = record.fields.first?.value { sent.append((now, reason)) }
                default: break
                }
            }
        }

        var reasons: [WakeReason] { sent.map(\.1) }
    }

    @Test("120 files to a rate-limited connected peer over 60 s: one wake-up, one push")
    func trickle() {
        var r = Rig()
        r.deliver([r.events.local("notes"), r.events.local("notes")])
        for step in 0..<30 {
            r.advance(seconds: 2)
            r.deliver([r.events.completion(T.phone, "notes", need: Int64(120 - 4 * step))])
        }
        r.advance(seconds: 2)
        r.deliver([r.events.completion(T.phone, "notes", need: 0)])
        r.advance(seconds: 120)
        #expect(r.sent.count == 1)
        #expect(r.pushes.count == 1)
    }

    @Test("a change in a folder shared with no one, repeated for an hour: no wake-up at all")
    func unsharedFolder() {
        var r = Rig()
        for _ in 0..<360 {
            r.deliver([r.events.local("solo")])
            r.advance(seconds: 10)
        }
        #expect(r.sent.isEmpty)
    }

    @Test("a folder the phone has not accepted (notSharing): its changes and its need never wake")
    func notAccepted() {
        var r = Rig(sweep: .seconds(60))
        r.deliver([r.events.completion(T.phone, "notes", need: 40, remote: .notSharing)])
        for _ in 0..<30 {
            r.deliver([r.events.local("notes")])
            r.advance(seconds: 20)
        }
        #expect(r.sent.isEmpty)
        #expect(r.engine.tracker.isDeclined(SweepPair(device: T.phone, folder: "notes")))
    }

    @Test("an offline phone that needs data is woken on every sweep; once connected, the sweep leaves it alone")
    func sweepOfflineThenConnected() {
        var r = Rig(sweep: .seconds(60))
        let pair = SweepPair(device: T.phone, folder: "vault")
        let offline = [SweepObservation(pair: pair, connected: false, completion: T.answer(need: 9))]
        let online = [SweepObservation(pair: pair, connected: true, completion: T.answer(need: 9))]
        r.sweepScript = Array(repeating: offline, count: 3) + Array(repeating: online, count: 3)
        r.advance(seconds: 6 * 60 + 30)
        #expect(r.reasons == [.stalePeer, .stalePeer, .stalePeer])
        #expect(r.pushes.count == 3)
    }
}
