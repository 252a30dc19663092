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
    ) -> ServiceRig {
        let rig = ServiceRig(
            announce: announce, debounce: .milliseconds(Int64(debounce * 1000)), sweep: sweep, window: window)
        rig.syncthing.state.withLock { $0.pollTakes = .zero }
        rig.relayAnswers(after: .milliseconds(50))
        rig.relayPushWindow(.seconds(30))
        setUp(rig)
        rig.start()
        return rig
    }

    /// Syncthing's event ids, consecutive from 1.
    struct Events {
        var last = 0
        /// `times` changes `apart` seconds apart, the first one now; returns when each reached the service.
        mutating func edit(_ rig: ServiceRig, times: Int, apart: Double) -> [Duration] {
            var edits: [Duration] = []
            for i in 0..<times {
                if i > 0 { rig.advance(seconds: apart) }
                edits.append(rig.elapsed)
                last += 1
                rig.change(last)
            }
            return edits
        }
        /// Events were lost: a re-sync.
        mutating func gap(_ rig: ServiceRig) {
            rig.gap(after: last)
            last += 2
        }
    }

    static func gaps(_ times: [Double]) -> [Double] { zip(times, times.dropFirst()).map { $1 - $0 } }

    @Test("three edits 12 s apart after the announce: every edit has a push after it, no trigger is swallowed")
    func editsTwelveSecondsApart() {
        let rig = Self.started()
        var events = Events()
        rig.advance(seconds: 12)
        let edits = events.edit(rig, times: 3, apart: 12)
        rig.advance(seconds: 120)
        #expect(rig.unpushed(edits).isEmpty)
        #expect(rig.swallowedTimes.isEmpty)
        // The announce at 0; edits at 12 and 24 go out together when the window ends (30.05 s); the edit at 36 waits
        // for the next window (60.1 s).
        #expect(rig.reasons == [.announce, .change, .change])
        #expect(rig.triggerSeconds == [0, 30.05, 60.1])
    }

    @Test("edits 12 s apart with the window disabled: 3 triggers, 1 push, the last two edits left without a push")
    func windowDisabledWastesTriggers() {
        // Scenario a of docs/benchmarks.md, "Precision" (measured on Syncthing 1.19.2 and 1.29.5, a 2 s debounce),
        // replayed without the window.
        let rig = Self.started(announce: false, window: nil)
        var events = Events()
        let edits = events.edit(rig, times: 3, apart: 12)
        rig.advance(seconds: 120)
        #expect(rig.triggerSeconds == [2, 14, 26])
        #expect(rig.pushTimes.count == 1)
        #expect(rig.unpushed(edits).count == 2)
    }

    @Test("the same edits with the window: 2 triggers, 2 pushes, every edit has a push after it")
    func windowEnabledSameEdits() {
        let rig = Self.started(announce: false)
        var events = Events()
        let edits = events.edit(rig, times: 3, apart: 12)
        rig.advance(seconds: 120)
        #expect(rig.triggerSeconds == [2, 32.05])
        #expect(rig.swallowedTimes.isEmpty)
        #expect(rig.unpushed(edits).isEmpty)
    }

    @Test("a change right after the announce waits for the window, then goes out once")
    func changeInsideTheAnnounceWindow() {
        let rig = Self.started()
        rig.advance(seconds: 1)
        rig.change(1)
        rig.advance(seconds: 29)
        #expect(rig.triggers == 1)
        rig.advance(seconds: 1)
        #expect(rig.triggerSeconds == [0, 30.05])
        #expect(rig.logged(.triggerHeldForWindow).count == 1)
        rig.advance(seconds: 600)
        #expect(rig.triggers == 2)
    }

    @Test("the debounce and its maximum still apply before the window: a change stream ends its batch at 30 s")
    func debounceBeforeWindow() {
        let rig = Self.started(announce: false, debounce: 5)
        rig.change(1)
        rig.advance(seconds: 4)
        rig.change(2)
        rig.advance(seconds: 10)
        #expect(rig.triggerSeconds == [9])
        // Changes every 2 s from 20 s to 80 s: the window (from 9.05 s) is over long before their batch's maximum.
        rig.advance(to: 20)
        rig.changes(3...32, every: 2)
        rig.advance(seconds: 120)
        #expect(rig.swallowedTimes.isEmpty)
        #expect(rig.triggers > 1)
        for gap in Self.gaps(rig.triggerSeconds) { #expect(gap >= 30) }
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
        let rig = Self.started(sweep: .seconds(21600)) { $0.phoneOfflineNeedingData() }
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
        let restarts = rig.logged(.syncthingRestarted).count
        #expect(cause == .restart ? restarts == 120 : restarts == 0)
        #expect(rig.swallowedTimes.isEmpty)
        for gap in Self.gaps(rig.triggerSeconds) { #expect(gap >= 30) }
        switch cause {
        case .gap:
            // One trigger per window, back to back: each window runs 30 s from the relay's answer, which comes 50 ms
            // after the send, so the k-th trigger goes out at 30.05 k s. The last gap (600 s) came before the
            // trigger at 601 s, whose push fetches what it lost: it adds none, nor does the ordinary answer at 660 s.
            #expect(rig.triggerTimes == (0...20).map { .milliseconds(30_050 * $0) })
        case .restart:
            // The announce; the first restart (5 s, due at 7 s) when the announce's window ends; the 119 restarts
            // after it back off and owe one wake-up, sent once Syncthing answers normally (660 s, due at 662 s).
            #expect(rig.triggerTimes == [.zero, .milliseconds(30_050), .seconds(662)])
        }
        #expect(rig.overlappingTriggers == 0)
    }

    @Test("an event stream that keeps failing (a wake per fault) still sends at most one trigger per window")
    func failingStreamOneTriggerPerWindow() {
        let rig = Self.started(announce: false, debounce: 0)
        var events = Events()
        for _ in 0..<600 {
            events.gap(rig)
            rig.advance(seconds: 1)
        }
        rig.advance(seconds: 60)
        #expect(rig.swallowedTimes.isEmpty)
        #expect(rig.triggers == 21)
        for gap in Self.gaps(rig.triggerSeconds) { #expect(gap >= 30) }
    }

    @Test("a trigger that never reached the relay (connection refused) opens no window: the retry follows the backoff")
    func unreachedOpensNoWindow() {
        let rig = Self.started(announce: false, debounce: 1) {
            $0.relay.state.withLock { $0.triggers = [.failure(.connect)] }
            $0.jitter.withLock { $0 = 0.999 }
        }
        rig.change(1)
        rig.advance(seconds: 10)
        // Sent at 1 s, refused 50 ms later, retried after the first backoff step: jitter 0.999 × 1 s.
        #expect(rig.triggerSeconds == [1, 2.049])
    }

    @Test(
        "a trigger whose answer was lost (timeout, 5xx, cut) may have been pushed: the retry waits for the window",
        arguments: [FakeRelay.Answer.failure(.timeout), .status(502), .failure(.truncated)])
    func lostAnswer(_ failure: FakeRelay.Answer) {
        let rig = Self.started(announce: false) {
            $0.relayPushWindow(.seconds(30), receivesFailures: true)
            // The relay receives the trigger at 2 s and pushes; its answer fails only after 20 s.
            $0.relay.state.withLock { $0.triggers = [failure] }
            $0.relayAnswers(after: .seconds(20))
        }
        var changes = [rig.elapsed]
        rig.change(1)
        rig.advance(seconds: 5)
        rig.relayAnswers(after: .milliseconds(50))
        changes.append(rig.elapsed)
        rig.change(2)
        rig.advance(seconds: 120)
        // The window is counted from the failed answer (22 s), the latest the relay may have pushed: 22 + 30.
        #expect(rig.triggerSeconds == [2, 52])
        #expect(rig.swallowedTimes.isEmpty)
        #expect(rig.unpushed(changes).isEmpty)
    }

    @Test("a 429 whose Retry-After ends after the window is honoured")
    func retryAfterBeyondTheWindow() {
        let rig = Self.started {
            $0.relay.state.withLock { $0.triggers = [.status(202), .status(429, retryAfter: "90")] }
        }
        rig.advance(seconds: 1)
        rig.change(1)
        rig.advance(seconds: 100)
        #expect(rig.triggerSeconds == [0, 30.05])
        rig.advance(seconds: 100)
        // The 429 came back at 30.1 s (50 ms latency): its 90 s Retry-After ends at 120.1 s, after the window.
        #expect(rig.triggerSeconds == [0, 30.05, 120.1])
    }

    /// The announce at 0, a change at 1 s held for the announce's window (until 30.05 s), and a stop at `seconds`.
    static func stopped(at seconds: Double) -> ServiceRig {
        let rig = Self.started()
        rig.advance(seconds: 1)
        rig.change(1)
        rig.advance(to: seconds)
        rig.stop()
        return rig
    }

    @Test("SIGTERM while a wake-up waits for a window that ends after the grace: exit at once, pending, nothing sent")
    func stopInsideLongWindow() {
        let rig = Self.stopped(at: 6)
        #expect(rig.exitStatuses == [.ok])
        #expect(rig.triggers == 1)
        #expect(rig.records.last?.message == .stopped)
        #expect(rig.records.last?.level == .warn)
    }

    @Test("SIGTERM while the window ends within the grace: the wake-up goes out when it ends, then exit")
    func stopNearWindowEnd() {
        let rig = Self.stopped(at: 28)
        rig.advance(seconds: 10)
        #expect(rig.exitStatuses == [.ok])
        #expect(rig.triggerSeconds == [0, 30.05])
        #expect(rig.swallowedTimes.isEmpty)
    }

    @Test("the stale-peer sweep's wake-up respects the window too")
    func sweepInsideWindow() {
        let rig = Self.started(sweep: .seconds(20)) { $0.phoneOfflineNeedingData() }
        rig.advance(seconds: 70)
        #expect(rig.swallowedTimes.isEmpty)
        // Sweeps at 20 and 40 s find a peer needing data; their wake-ups (due at 22 and 42 s) wait for the windows
        // that the announce (answered at 0.05 s) and then the first sweep's trigger opened. The third sweep's (due at
        // 62 s) waits for 90.15 s, after the test ends.
        #expect(rig.triggerSeconds == [0, 30.05, 60.1])
        #expect(rig.reasons == [.announce, .stalePeer, .stalePeer])
    }
}
