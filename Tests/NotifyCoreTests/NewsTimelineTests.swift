import Testing

@testable import NotifyCore

/// PeerTracker and WakePolicy together on virtual time, wired as the shell wires them: an event batch that holds news
/// feeds `.wake(.change)`, a sweep's answers are absorbed and their count feeds `.sweepFinished`. The relay model
/// swallows triggers inside its 30 s window, so these timelines count pushes, not triggers.
@Suite("News timelines: what reaches the phone")
struct NewsTimelineTests {
    typealias T = PeerTrackerTests

    struct Rig {
        var tracker = T.tracker()
        var h: PolicyHarness
        var events = PeerTrackerTests()

        init(sweep: Duration? = nil, window: Duration? = .seconds(30)) {
            h = PolicyHarness(
                .init(
                    debounce: .seconds(2), debounceMax: .seconds(30), startupAnnounce: false, staleRetrigger: sweep,
                    relayWindow: window))
            h.relayPushWindow = .seconds(30)
            h.send(.start)
        }

        mutating func deliver(_ batch: [SyncthingEvent]) {
            if tracker.news(in: batch) > 0 { h.send(.wake(.change)) }
        }
    }

    @Test("120 files to a rate-limited connected peer over 60 s: one wake-up, one push")
    func trickle() {
        var r = Rig()
        r.deliver([r.events.local("notes"), r.events.local("notes")])
        for step in 0..<30 {
            r.h.advance(seconds: 2)
            r.deliver([r.events.completion(T.phone, "notes", need: Int64(120 - 4 * step))])
        }
        r.h.advance(seconds: 2)
        r.deliver([r.events.completion(T.phone, "notes", need: 0)])
        r.h.advance(seconds: 120)
        #expect(r.h.sent.count == 1)
        #expect(r.h.pushes.count == 1)
    }

    @Test("a change in a folder shared with no one, repeated for an hour: no wake-up at all")
    func unsharedFolder() {
        var r = Rig()
        for _ in 0..<360 {
            r.deliver([r.events.local("solo")])
            r.h.advance(seconds: 10)
        }
        #expect(r.h.sent.isEmpty)
    }

    @Test("a folder the phone has not accepted (notSharing): its changes and its need never wake")
    func notAccepted() {
        var r = Rig(sweep: .seconds(60))
        r.deliver([r.events.completion(T.phone, "notes", need: 40, remote: .notSharing)])
        for _ in 0..<30 {
            r.deliver([r.events.local("notes")])
            r.h.advance(seconds: 20)
        }
        #expect(r.h.sent.isEmpty)
        #expect(r.tracker.isDeclined(SweepPair(device: T.phone, folder: "notes")))
    }

    @Test("an offline phone that needs data is woken on every sweep; once connected, the sweep leaves it alone")
    func sweepOfflineThenConnected() {
        var r = Rig(sweep: .seconds(60))
        r.h.sweepScript = []
        let pair = SweepPair(device: T.phone, folder: "vault")
        let offline = [SweepObservation(pair: pair, connected: false, completion: T.answer(need: 9))]
        let online = [SweepObservation(pair: pair, connected: true, completion: T.answer(need: 9))]
        // The harness answers a sweep with a count; the shell computes it with the tracker from these answers.
        for _ in 0..<3 { r.h.sweepScript.append(r.tracker.absorb(offline)) }
        for _ in 0..<3 { r.h.sweepScript.append(r.tracker.absorb(online)) }
        r.h.advance(seconds: 6 * 60 + 30)
        #expect(r.h.reasons == [.stalePeer, .stalePeer, .stalePeer])
        #expect(r.h.pushes.count == 3)
    }
}
