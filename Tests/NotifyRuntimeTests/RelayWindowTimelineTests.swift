import NotifyCore
import Testing

@testable import NotifyRuntime
@testable import NotifyTestSupport

/// The relay's push window on virtual time: the real service against a relay that answers 50 ms after each trigger
/// and swallows a trigger within 30 s of its last push (README.md, "When the phone is woken, and when it is not").
/// What counts is the push, not the trigger: every change must have a push after it, and no trigger may be wasted
/// inside the window. Times are from the rig's start.
@Suite("Relay push window timelines of the real service")
struct RelayWindowTimelineTests {
    /// A rig with a 2 s debounce and a 30 s window (nil: RELAY_WINDOW off), whose long-polls answer at once, started.
    static func started(
        announce: Bool = true, debounce: Double = 2, window: Duration? = .seconds(30), sweep: Duration? = nil,
        setUp: (ServiceRig) -> Void = { _ in }
    ) -> (ServiceRig, Timeline) {
        let rig = ServiceRig(
            announce: announce, debounce: .milliseconds(Int64(debounce * 1000)), sweep: sweep, window: window)
        rig.syncthing.state.withLock { $0.pollTakes = .zero }
        rig.relayAnswers(after: .milliseconds(50))
        rig.relayPushWindow(.seconds(30))
        setUp(rig)
        // Marked before the start: the announce is part of every timeline here.
        let t = Timeline(rig)
        rig.start()
        return (rig, t)
    }

    /// Syncthing's event ids, consecutive from 1.
    struct Events {
        var last = 0
        /// `times` changes `apart` seconds apart, the first one now.
        mutating func edit(_ rig: ServiceRig, times: Int, apart: Double) {
            for i in 0..<times {
                if i > 0 { rig.advance(seconds: apart) }
                last += 1
                rig.change(last)
            }
        }
        /// Events were lost: a re-sync.
        mutating func gap(_ rig: ServiceRig) {
            rig.gap(after: last)
            last += 2
        }
    }

    @Test("three edits 12 s apart after the announce: every edit has a push after it, no trigger is swallowed")
    func editsTwelveSecondsApart() {
        let (rig, t) = Self.started()
        var events = Events()
        rig.advance(seconds: 12)
        events.edit(rig, times: 3, apart: 12)
        rig.advance(seconds: 120)
        // The announce at 0; edits at 12 and 24 go out together when the window ends (30.05 s); the edit at 36 waits
        // for the next window (60.1 s). Each trigger pushed: every edit has a push after it.
        #expect(t.pushes == ["0", "30.050", "60.100"])
        #expect(t.swallowed.isEmpty)
        #expect(
            t.log(.triggerDelivered) == [
                #"0.050 level=info msg="wake-up delivered" status=202 reason=announce"#,
                #"30.100 level=info msg="wake-up delivered" status=202 reason=change"#,
                #"60.150 level=info msg="wake-up delivered" status=202 reason=change"#,
            ])
        #expect(t.triggers == ["0", "30.050", "60.100"])
    }

    @Test("edits 12 s apart with the window disabled: 3 triggers, 1 push, the last two edits left without a push")
    func windowDisabledWastesTriggers() {
        // Scenario a of docs/benchmarks.md, "Precision" (measured on Syncthing 1.19.2 and 1.29.5, a 2 s debounce),
        // replayed without the window.
        let (rig, t) = Self.started(announce: false, window: nil)
        var events = Events()
        events.edit(rig, times: 3, apart: 12)
        rig.advance(seconds: 120)
        #expect(t.triggers == ["2", "14", "26"])
        // The only push is the first edit's: the relay swallows the others, and the edits at 12 and 24 s have none
        // after them.
        #expect(t.pushes == ["2"])
        #expect(t.swallowed == ["14", "26"])
    }

    @Test("the same edits with the window: 2 triggers, 2 pushes, every edit has a push after it")
    func windowEnabledSameEdits() {
        let (rig, t) = Self.started(announce: false)
        var events = Events()
        events.edit(rig, times: 3, apart: 12)
        rig.advance(seconds: 120)
        #expect(t.triggers == ["2", "32.050"])
        #expect(t.swallowed.isEmpty)
        // The edits at 0, 12 and 24 s each have a push after them.
        #expect(t.pushes == ["2", "32.050"])
    }

    @Test("a change right after the announce waits for the window, then goes out once")
    func changeInsideTheAnnounceWindow() {
        let (rig, t) = Self.started()
        rig.advance(seconds: 1)
        rig.change(1)
        rig.advance(seconds: 29)
        #expect(t.triggers == ["0"])
        rig.advance(seconds: 1)
        #expect(t.triggers == ["0", "30.050"])
        #expect(t.logged(.triggerHeldForWindow).count == 1)
        rig.advance(seconds: 600)
        #expect(t.triggers == ["0", "30.050"])
    }

    @Test("the debounce and its maximum still apply before the window: a change stream ends its batch at 30 s")
    func debounceBeforeWindow() {
        let (rig, t) = Self.started(announce: false, debounce: 5)
        rig.change(1)
        rig.advance(seconds: 4)
        rig.change(2)
        rig.advance(seconds: 10)
        #expect(t.triggers == ["9"])
        // Changes every 2 s from 20 s to 80 s: the window (from 9.05 s) is over long before their batch's maximum.
        rig.advance(to: 20)
        rig.changes(3...32, every: 2)
        rig.advance(seconds: 120)
        #expect(t.swallowed.isEmpty)
        // Their batch goes out at its maximum (50 s, 30 s after its first change), the rest when that window ends.
        #expect(t.triggers == ["9", "50", "80.050"])
    }

    /// What makes the service re-sync every 5 s.
    enum Resync: String, CustomStringConvertible, CaseIterable {
        /// Events were lost: the next answer skips an id.
        case gap
        /// Syncthing restarted: a new startTime in /rest/system/status, its event ids from 1 again.
        case restart
        var description: String { rawValue }
    }

    @Test(
        "a Syncthing that loses events or restarts every 5 s for 10 minutes: at most one trigger per window",
        arguments: Resync.allCases)
    func resyncLoopOneTriggerPerWindow(_ cause: Resync) {
        let (rig, t) = Self.started(sweep: .seconds(21600)) { $0.phoneOfflineNeedingData() }
        var events = Events()
        for round in 1...120 {
            rig.advance(seconds: 5)
            switch cause {
            case .gap: events.gap(rig)
            case .restart:
                // A new start each time, and the ids it sends begin again at 1, below the cursor of the last run.
                let minutes = round / 60
                let seconds = round % 60
                let startTime = "2026-12-01T0\(minutes):\(seconds < 10 ? "0" : "")\(seconds):00Z"
                rig.syncthing.state.withLock { ($0.startTime, $0.head) = (startTime, 1) }
                rig.answer([(1, "Starting")])
            }
        }
        rig.advance(seconds: 60)
        // Syncthing settles: its next answer is an ordinary one.
        rig.answer("[]")
        rig.advance(seconds: 60)
        let restarts = t.logged(.syncthingRestarted).count
        #expect(cause == .restart ? restarts == 120 : restarts == 0)
        #expect(t.swallowed.isEmpty)
        // Each trigger's answer (50 ms later) comes before the next trigger: one at a time.
        switch cause {
        case .gap:
            // One trigger per window, back to back: each window runs 30 s from the relay's answer, which comes 50 ms
            // after the send, so the k-th trigger goes out at 30.05 k s. The last gap (600 s) came before the
            // trigger at 601 s, whose push fetches what it lost: it adds none, nor does the ordinary answer at 660 s.
            #expect(t.triggers == (0...20).map { Timeline.seconds(30.05 * Double($0)) })
            #expect(t.answers == (0...20).map { Timeline.seconds(30.05 * Double($0) + 0.05) })
        case .restart:
            // The announce; the first restart (5 s, due at 7 s) when the announce's window ends; the 119 restarts
            // after it back off and owe one wake-up, sent once Syncthing answers normally (660 s, due at 662 s).
            #expect(t.triggers == ["0", "30.050", "662"])
            #expect(t.answers == ["0.050", "30.100", "662.050"])
        }
    }

    @Test("an event stream that keeps failing (a wake per fault) still sends at most one trigger per window")
    func failingStreamOneTriggerPerWindow() {
        let (rig, t) = Self.started(announce: false, debounce: 0)
        var events = Events()
        for _ in 0..<600 {
            events.gap(rig)
            rig.advance(seconds: 1)
        }
        rig.advance(seconds: 60)
        #expect(t.swallowed.isEmpty)
        // One trigger per window, back to back: 30 s from each answer, which comes 50 ms after its trigger.
        #expect(t.triggers == (0...20).map { Timeline.seconds(30.05 * Double($0)) })
    }

    @Test("a trigger that never reached the relay (connection refused) opens no window: the retry follows the backoff")
    func unreachedOpensNoWindow() {
        let (rig, t) = Self.started(announce: false, debounce: 1) {
            $0.relay.state.withLock { $0.triggers = [.failure(.connect)] }
            $0.jitter.withLock { $0 = 0.999 }
        }
        rig.change(1)
        rig.advance(seconds: 10)
        // Sent at 1 s, refused 50 ms later, retried after the first backoff step: jitter 0.999 × 1 s.
        #expect(t.triggers == ["1", "2.049"])
    }

    @Test(
        "a trigger whose answer was lost (timeout, 5xx, cut) may have been pushed: the retry waits for the window",
        arguments: [FakeRelay.Answer.failure(.timeout), .status(502), .failure(.truncated)])
    func lostAnswer(_ failure: FakeRelay.Answer) {
        let (rig, t) = Self.started(announce: false) {
            $0.relayPushWindow(.seconds(30), receivesFailures: true)
            // The relay receives the trigger at 2 s and pushes; its answer fails only after 20 s.
            $0.relay.state.withLock { $0.triggers = [failure] }
            $0.relayAnswers(after: .seconds(20))
        }
        rig.change(1)
        rig.advance(seconds: 5)
        rig.relayAnswers(after: .milliseconds(50))
        rig.change(2)
        rig.advance(seconds: 120)
        // The window is counted from the failed answer (22 s), the latest the relay may have pushed: 22 + 30.
        #expect(t.triggers == ["2", "52"])
        #expect(t.swallowed.isEmpty)
        // The changes at 0 and 5 s each have a push after them.
        #expect(t.pushes == ["2", "52"])
    }

    @Test("a 429 whose Retry-After ends after the window is honoured")
    func retryAfterBeyondTheWindow() {
        let (rig, t) = Self.started {
            $0.relay.state.withLock { $0.triggers = [.status(202), .status(429, retryAfter: "90")] }
        }
        rig.advance(seconds: 1)
        rig.change(1)
        rig.advance(seconds: 100)
        #expect(t.triggers == ["0", "30.050"])
        rig.advance(seconds: 100)
        // The 429 came back at 30.1 s (50 ms latency): its 90 s Retry-After ends at 120.1 s, after the window.
        #expect(t.triggers == ["0", "30.050", "120.100"])
    }

    /// The announce at 0, a change at 1 s held for the announce's window (until 30.05 s), and a stop at `seconds`.
    static func stopped(at seconds: Double) -> (ServiceRig, Timeline) {
        let (rig, t) = Self.started()
        rig.advance(seconds: 1)
        rig.change(1)
        rig.advance(to: seconds)
        rig.stop()
        return (rig, t)
    }

    @Test("SIGTERM while a wake-up waits for a window that ends after the grace: exit at once, pending, nothing sent")
    func stopInsideLongWindow() {
        let (rig, t) = Self.stopped(at: 6)
        #expect(rig.exitStatuses == [.ok])
        #expect(t.triggers == ["0"])
        #expect(t.records.last?.message == .stopped)
        #expect(t.records.last?.level == .warn)
    }

    @Test("SIGTERM while the window ends within the grace: the wake-up goes out when it ends, then exit")
    func stopNearWindowEnd() {
        let (rig, t) = Self.stopped(at: 28)
        rig.advance(seconds: 10)
        #expect(rig.exitStatuses == [.ok])
        #expect(t.triggers == ["0", "30.050"])
        #expect(t.swallowed.isEmpty)
    }

    @Test("the stale-peer sweep's wake-up respects the window too")
    func sweepInsideWindow() {
        let (rig, t) = Self.started(sweep: .seconds(20)) { $0.phoneOfflineNeedingData() }
        rig.advance(seconds: 70)
        #expect(t.swallowed.isEmpty)
        // Sweeps at 20 and 40 s find a peer needing data; their wake-ups (due at 22 and 42 s) wait for the windows
        // that the announce (answered at 0.05 s) and then the first sweep's trigger opened. The third sweep's (due at
        // 62 s) waits for 90.15 s, after the test ends.
        #expect(t.triggers == ["0", "30.050", "60.100"])
        #expect(
            t.log(.triggerDelivered) == [
                #"0.050 level=info msg="wake-up delivered" status=202 reason=announce"#,
                #"30.100 level=info msg="wake-up delivered" status=202 reason=stale-peer"#,
                #"60.150 level=info msg="wake-up delivered" status=202 reason=stale-peer"#,
            ])
    }
}
