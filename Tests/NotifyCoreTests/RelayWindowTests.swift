import Testing

@testable import NotifyCore

/// The relay's push window on virtual time, against a relay model that swallows a trigger within 30 s of its last push
/// (README.md, "When the phone is woken, and when it is not"). What counts is the push, not the trigger: every change
/// must have a push after it, and no trigger may be wasted inside the window.
@Suite("Relay push window timelines on virtual time")
struct RelayWindowTests {
    static func settings(
        announce: Bool = true, debounce: Double = 2, max: Double = 30, window: Duration? = .seconds(30),
        sweep: Duration? = nil
    ) -> WakePolicy.Settings {
        .init(
            debounce: .milliseconds(Int64(debounce * 1000)), debounceMax: .milliseconds(Int64(max * 1000)),
            startupAnnounce: announce, staleRetrigger: sweep, relayWindow: window)
    }

    /// Feeds `times` changes `apart` seconds apart, the first one now; returns when each reached the policy.
    static func edit(_ h: inout PolicyHarness, times: Int, apart: Double) -> [Instant] {
        var edits: [Instant] = []
        for i in 0..<times {
            if i > 0 { h.advance(seconds: apart) }
            edits.append(h.now)
            h.send(.wake(.change))
        }
        return edits
    }

    static func harness(_ settings: WakePolicy.Settings) -> PolicyHarness {
        var h = PolicyHarness(settings)
        h.relayPushWindow = .seconds(30)
        return h
    }

    @Test("three edits 12 s apart after the announce: every edit has a push after it, no trigger is swallowed")
    func editsTwelveSecondsApart() {
        var h = Self.harness(Self.settings())
        h.send(.start)
        h.advance(seconds: 12)
        let edits = Self.edit(&h, times: 3, apart: 12)
        h.advance(seconds: 120)
        #expect(h.unpushed(edits).isEmpty)
        #expect(h.swallowed.isEmpty)
        // The announce at 0; edits at 12 and 24 go out together when the window ends (30.05 s); the edit at 36 waits
        // for the next window (60.1 s).
        #expect(h.reasons == [.announce, .change, .change])
        #expect(h.sentSeconds == [0, 30.05, 60.1])
    }

    @Test("edits 12 s apart with the window disabled: 3 triggers, 1 push, the last two edits left without a push")
    func windowDisabledWastesTriggers() {
        // Scenario a of docs/benchmarks.md, "Precision" (measured on Syncthing 1.19.2 and 1.29.5, a 2 s debounce),
        // replayed without the window.
        var h = Self.harness(Self.settings(announce: false, window: nil))
        h.send(.start)
        let edits = Self.edit(&h, times: 3, apart: 12)
        h.advance(seconds: 120)
        #expect(h.sentSeconds == [2, 14, 26])
        #expect(h.pushes.count == 1)
        #expect(h.unpushed(edits).count == 2)
    }

    @Test("the same edits with the window: 2 triggers, 2 pushes, every edit has a push after it")
    func windowEnabledSameEdits() {
        var h = Self.harness(Self.settings(announce: false))
        h.send(.start)
        let edits = Self.edit(&h, times: 3, apart: 12)
        h.advance(seconds: 120)
        #expect(h.sentSeconds == [2, 32.05])
        #expect(h.swallowed.isEmpty)
        #expect(h.unpushed(edits).isEmpty)
    }

    @Test("a change right after the announce waits for the window, then goes out once")
    func changeInsideTheAnnounceWindow() {
        var h = Self.harness(Self.settings())
        h.send(.start)
        h.advance(seconds: 1)
        h.send(.wake(.change))
        h.advance(seconds: 29)
        #expect(h.sent.count == 1)
        h.advance(seconds: 1)
        #expect(h.sentSeconds == [0, 30.05])
        #expect(h.logs.filter { $0.message == .triggerHeldForWindow }.count == 1)
        h.advance(seconds: 600)
        #expect(h.sent.count == 2)
    }

    @Test("the debounce and its maximum still apply before the window: a change stream ends its batch at 30 s")
    func debounceBeforeWindow() {
        var h = Self.harness(Self.settings(announce: false, debounce: 5, max: 30))
        h.send(.start)
        h.send(.wake(.change))
        h.advance(seconds: 4)
        h.send(.wake(.change))
        h.advance(seconds: 10)
        #expect(h.sentSeconds == [9])
        // Changes every 2 s from 20 s to 80 s: the window (from 9.05 s) is over long before their batch's maximum.
        h.advance(to: Instant(.seconds(20)))
        for _ in 0..<30 {
            h.send(.wake(.change))
            h.advance(seconds: 2)
        }
        h.advance(seconds: 120)
        #expect(h.swallowed.isEmpty)
        for (a, b) in zip(h.sentSeconds, h.sentSeconds.dropFirst()) { #expect(b - a >= 30) }
    }

    @Test("a Syncthing that restarts every 5 s for 10 minutes: at most one trigger per window, none swallowed")
    func restartLoopOneTriggerPerWindow() {
        var h = Self.harness(Self.settings(sweep: .seconds(21600)))
        h.sweepScript = Array(repeating: 1, count: 200)
        h.send(.start)
        for _ in 0..<120 {
            h.advance(seconds: 5)
            h.send(.wake(.resync))
        }
        h.advance(seconds: 60)
        #expect(h.swallowed.isEmpty)
        for (a, b) in zip(h.sentSeconds, h.sentSeconds.dropFirst()) { #expect(b - a >= 30) }
        // One trigger per window, back to back: each window runs 30 s from the relay's answer, which comes 50 ms
        // (the harness's latency) after the send, so the k-th trigger goes out at 30.05 k s. The last re-sync (600 s)
        // is due at 605 and goes out when the 21st window ends, at 631.05 s.
        #expect(h.sent.map(\.0) == (0...21).map { Instant(.milliseconds(30_050 * $0)) })
        #expect(h.maxInFlight == 1)
    }

    @Test("an event stream that keeps failing (a wake per fault) still sends at most one trigger per window")
    func failingStreamOneTriggerPerWindow() {
        var h = Self.harness(Self.settings(announce: false, debounce: 0))
        h.send(.start)
        for _ in 0..<600 {
            h.send(.wake(.resync))
            h.advance(seconds: 1)
        }
        h.advance(seconds: 60)
        #expect(h.swallowed.isEmpty)
        #expect(h.sent.count == 21)
        for (a, b) in zip(h.sentSeconds, h.sentSeconds.dropFirst()) { #expect(b - a >= 30) }
    }

    @Test("a trigger that never reached the relay (connection refused) opens no window: the retry follows the backoff")
    func unreachedOpensNoWindow() {
        var h = Self.harness(Self.settings(announce: false, debounce: 1))
        h.relayScript = [.transient(status: nil, error: .transportConnect)]
        h.jitter = 0.999
        h.send(.start)
        h.send(.wake(.change))
        h.advance(seconds: 10)
        // Sent at 1 s, refused 50 ms later, retried after the first backoff step: jitter 0.999 × 1 s.
        #expect(h.sentSeconds == [1, 2.049])
    }

    @Test(
        "a trigger whose answer was lost (timeout, 5xx, cut) may have been pushed: the retry waits for the window",
        arguments: [
            RelayOutcome.transient(status: nil, error: .transportTimeout), .transient(status: 502, error: nil),
            .transient(status: nil, error: .transportTruncated),
        ])
    func lostAnswer(_ failure: RelayOutcome) {
        var h = Self.harness(Self.settings(announce: false, debounce: 2))
        h.relayReceivesFailures = true
        h.send(.start)
        // The relay receives the trigger at 2 s and pushes; its answer fails only after 20 s.
        h.relayScript = [failure]
        h.relayLatency = .seconds(20)
        var changes = [h.now]
        h.send(.wake(.change))
        h.advance(seconds: 5)
        h.relayLatency = .milliseconds(50)
        changes.append(h.now)
        h.send(.wake(.change))
        h.advance(seconds: 120)
        // The window is counted from the failed answer (22 s), the latest the relay may have pushed: 22 + 30.
        #expect(h.sentSeconds == [2, 52])
        #expect(h.swallowed.isEmpty)
        #expect(h.unpushed(changes).isEmpty)
    }

    @Test("a 429 whose Retry-After ends after the window is honoured")
    func retryAfterBeyondTheWindow() {
        var h = Self.harness(Self.settings(announce: true))
        h.relayScript = [.delivered(status: 202), .rateLimited(retryAfter: .seconds(90))]
        h.send(.start)
        h.advance(seconds: 1)
        h.send(.wake(.change))
        h.advance(seconds: 100)
        #expect(h.sentSeconds == [0, 30.05])
        h.advance(seconds: 100)
        // The 429 came back at 30.1 s (50 ms latency): its 90 s Retry-After ends at 120.1 s, after the window.
        #expect(h.sentSeconds == [0, 30.05, 120.1])
    }

    @Test("SIGTERM while a wake-up waits for a window that ends after the grace: exit at once, pending, nothing sent")
    func stopInsideLongWindow() {
        var h = Self.harness(Self.settings())
        h.send(.start)
        h.advance(seconds: 1)
        h.send(.wake(.change))
        h.advance(seconds: 5)
        h.send(.stop)
        #expect(h.exitStatus == .ok)
        #expect(h.sent.count == 1)
        #expect(h.logs.last?.message == .stopped)
        #expect(h.logs.last?.level == .warn)
    }

    @Test("SIGTERM while the window ends within the grace: the wake-up goes out when it ends, then exit")
    func stopNearWindowEnd() {
        var h = Self.harness(Self.settings())
        h.send(.start)
        h.advance(seconds: 1)
        h.send(.wake(.change))
        h.advance(seconds: 27)
        h.send(.stop)
        h.advance(seconds: 10)
        #expect(h.exitStatus == .ok)
        #expect(h.sentSeconds == [0, 30.05])
        #expect(h.swallowed.isEmpty)
    }

    @Test("the stale-peer sweep's wake-up respects the window too")
    func sweepInsideWindow() {
        var h = Self.harness(Self.settings(sweep: .seconds(20)))
        h.sweepScript = [1, 1, 1]
        h.send(.start)
        h.advance(seconds: 70)
        #expect(h.swallowed.isEmpty)
        // Sweeps at 20 and 40 s find a peer needing data; their wake-ups (due at 25 and 45 s) wait for the windows
        // that the announce (answered at 0.05 s) and then the first sweep's trigger opened. The third sweep's (due at
        // 65 s) waits for 90.15 s, after the test ends.
        #expect(h.sentSeconds == [0, 30.05, 60.1])
        #expect(h.reasons == [.announce, .stalePeer, .stalePeer])
    }
}
