import NotifyCore
import Testing

@testable import NotifyRuntime
@testable import NotifyTestSupport

/// When the real service wakes the phone, on virtual time (`ServiceRig`): the debounce and its maximum, the announce,
/// the relay backoff, the stale-peer sweep and the shutdown flush. Changes reach the service the instant the test
/// answers the held long-poll; times are from the rig's start.
@Suite("Wake-up timelines of the real service")
struct WakeTimelineTests {
    /// A rig whose long-polls answer at once (a change arrives when the test says), started.
    static func started(
        announce: Bool = false, debounce: Double = 5, sweep: Duration? = nil, setUp: (ServiceRig) -> Void = { _ in }
    ) -> (ServiceRig, Timeline) {
        let rig = ServiceRig(announce: announce, debounce: .milliseconds(Int64(debounce * 1000)), sweep: sweep)
        rig.syncthing.state.withLock { $0.pollTakes = .zero }
        setUp(rig)
        // Marked before the start: the announce and the start-up's records are part of every timeline here.
        let t = Timeline(rig)
        rig.start()
        return (rig, t)
    }

    @Test("two changes 3 s apart with a 5 s debounce → one trigger at t = 8 s")
    func trailingDebounce() {
        let (rig, t) = Self.started()
        rig.change(1)
        rig.advance(seconds: 3)
        rig.change(2)
        rig.advance(seconds: 4.9)
        #expect(t.triggers.isEmpty)
        rig.advance(seconds: 0.2)
        #expect(t.triggers == ["8"])
        rig.advance(seconds: 600)
        #expect(t.triggers == ["8"], "nothing more")
    }

    @Test("a change every 2 s for 2 minutes wakes every 30 s (DEBOUNCE_MAX_SECONDS), not never")
    func maximumWait() {
        let (rig, t) = Self.started()
        rig.relayAnswers(after: .milliseconds(50))
        rig.changes(1...60, every: 2)
        rig.advance(seconds: 60)
        // Each batch goes out 30 s after its first change. The change at 30 s comes as the first batch goes out and
        // opens the next one, and so on; the last change (118 s) falls into the batch sent at 120 s. Each answer
        // comes before the next trigger: one at a time.
        #expect(t.triggers == ["30", "60", "90", "120"])
        #expect(t.answers == ["30.050", "60.050", "90.050", "120.050"])
    }

    @Test("a burst of 200 changes within a second → exactly one trigger")
    func burst() {
        let (rig, t) = Self.started()
        rig.changes(1...200, every: 0.005)
        rig.advance(seconds: 120)
        // 5 s after the last change was read: the stream's polls are paced (PollLoop.busyPace), so the last one, at
        // 0.995 s, was read as the pause ended, at 1.015 s.
        #expect(t.triggers == ["6.015"])
    }

    @Test("events that come during a pause are collected by the next poll, in one answer, at the pause's end")
    func pauseCollects() {
        let (rig, t) = Self.started(debounce: 1)
        // Ten changes 5 ms apart: four answers at once (each 0 ms after its poll here), then a 100 ms pause, and the
        // six that came meanwhile in one answer. Each change is news when its answer comes; "events received" is
        // logged when its batch is applied, after the status read, which the pause goes before.
        rig.changes(1...10, every: 0.005)
        rig.advance(seconds: 5)
        #expect(
            t.log(.eventsReceived) == [
                #"0 level=debug msg="events received" count=1 events=1"#,
                #"0.005 level=debug msg="events received" count=1 events=1"#,
                #"0.010 level=debug msg="events received" count=1 events=1"#,
                #"0.115 level=debug msg="events received" count=1 events=1"#,
                #"0.215 level=debug msg="events received" count=6 events=6"#,
            ])
        #expect(t.triggers == ["1.115"], "the debounce counted from the last change's read, at the pause's end")
    }

    @Test("startup announce is sent at once, exactly once, and not debounced")
    func announce() {
        let (rig, t) = Self.started(announce: true)
        #expect(t.log(.triggerDelivered) == [#"0 level=info msg="wake-up delivered" status=202 reason=announce"#])
        #expect(t.triggers == ["0"])
        rig.advance(seconds: 3600)
        #expect(
            t.log(.triggerDelivered) == [#"0 level=info msg="wake-up delivered" status=202 reason=announce"#], "once")
        #expect(t.triggers == ["0"], "once")
    }

    @Test("STARTUP_ANNOUNCE=false sends nothing at start")
    func noAnnounce() {
        let (rig, t) = Self.started()
        rig.advance(seconds: 3600)
        #expect(t.triggers.isEmpty)
    }

    @Test("a change during the announce's flight waits for it, then goes after its own debounce")
    func oneInFlight() {
        let (rig, t) = Self.started(announce: true) { $0.relayAnswers(after: .seconds(8)) }
        rig.advance(seconds: 1)
        rig.change(1)
        rig.advance(seconds: 5)  // debounce ends at 6 s while the announce is still in flight (until 8 s)
        #expect(t.triggers == ["0"])
        rig.advance(seconds: 2.5)
        #expect(t.triggers == ["0", "8"])
        #expect(t.log(.triggerDelivered) == [#"8 level=info msg="wake-up delivered" status=202 reason=announce"#])
        #expect(t.answers == ["8", "16"])
        rig.advance(seconds: 8)
        #expect(
            t.log(.triggerDelivered) == [
                #"8 level=info msg="wake-up delivered" status=202 reason=announce"#,
                #"16 level=info msg="wake-up delivered" status=202 reason=change"#,
            ])
    }

    /// A 1 s debounce, a change at 0, and a relay that answers its first `times` triggers with `failure` (or a
    /// 429, or a 400–403); the backoff's jitter at (nearly) its full ceiling.
    static func changeToFailingRelay(
        _ failure: FakeRelay.Answer, times: Int, jitter: Double = 0.999_999
    ) -> (ServiceRig, Timeline) {
        let (rig, t) = Self.started(debounce: 1) {
            $0.jitter.withLock { $0 = jitter }
            $0.relay.state.withLock { $0.triggers = Array(repeating: failure, count: times) }
        }
        rig.change(1)
        return (rig, t)
    }

    @Test("503 three times → retries with backoff 1, 2, 4 s (full jitter at 1.0) → one delivery, no storm")
    func transientBackoff() {
        let (rig, t) = Self.changeToFailingRelay(.status(503), times: 3)
        rig.advance(seconds: 100)
        // 0.999 999 of each ceiling, written to the millisecond below.
        #expect(t.triggers == ["1", "1.999", "3.999", "7.999"])
        #expect(t.log(.triggerDelivered) == [#"7.999 level=info msg="wake-up delivered" status=202 reason=change"#])
    }

    @Test("backoff resets after a success")
    func backoffReset() {
        let (rig, t) = Self.changeToFailingRelay(.status(500), times: 2)
        rig.advance(seconds: 60)
        #expect(t.triggers == ["1", "1.999", "3.999"])
        rig.relay.state.withLock { $0.triggers = [.failure(.connect)] }
        rig.change(2)
        rig.advance(seconds: 60)
        // After the success the first retry waits the first ceiling again (1 s), not 4 s.
        #expect(t.triggers == ["1", "1.999", "3.999", "61", "61.999"])
    }

    @Test("transient failures keep retrying for hours without exceeding the 5 min cap")
    func longOutage() {
        let (rig, t) = Self.changeToFailingRelay(.status(502), times: 40)
        rig.advance(seconds: 4 * 3600)
        // The ceilings 1, 2, 4 … 256 s, then 300 s (0.999 999 of each), until the relay takes the 41st.
        #expect(
            t.triggers == [
                "1", "1.999", "3.999", "7.999", "15.999", "31.999", "63.999", "127.999", "255.999", "511.999",
                "811.999", "1111.998", "1411.998", "1711.998", "2011.997", "2311.997", "2611.997", "2911.997",
                "3211.996", "3511.996", "3811.996", "4111.995", "4411.995", "4711.995", "5011.994", "5311.994",
                "5611.994", "5911.994", "6211.993", "6511.993", "6811.993", "7111.992", "7411.992", "7711.992",
                "8011.991", "8311.991", "8611.991", "8911.991", "9211.990", "9511.990", "9811.990",
            ])
        #expect(rig.exitStatuses.isEmpty)
    }

    @Test(
        "subscription inactive (400–403): keep running, re-check every 60 s, resume by itself",
        arguments: [400, 401, 402, 403])
    func inactive(status: Int) {
        let (rig, t) = Self.changeToFailingRelay(.status(status), times: 3)
        // Changes keep arriving; they merge into the pending wake-up instead of adding sends.
        for id in 2...11 {
            rig.advance(seconds: 20)
            rig.change(id)
        }
        rig.advance(seconds: 120)
        // Sent at 1 s, re-checked at 61 and 121 s; at 181 s the subscription is active again: delivered. The
        // change at 200 s then goes out after its own debounce.
        #expect(t.triggers == ["1", "61", "121", "181", "201"])
        #expect(rig.exitStatuses.isEmpty)
        #expect(
            t.log(.triggerDelivered) == [
                #"181 level=info msg="wake-up delivered" status=202 reason=change"#,
                #"201 level=info msg="wake-up delivered" status=202 reason=change"#,
            ])
    }

    @Test("429 waits exactly Retry-After, then sends once")
    func rateLimited() {
        let (rig, t) = Self.changeToFailingRelay(.status(429, retryAfter: "17"), times: 1)
        rig.advance(seconds: 100)
        #expect(t.triggers == ["1", "18"])
    }

    @Test("a retry sent while a batch still debounces takes the batch along: no second trigger")
    func retryTakesTheOpenBatch() {
        // Found by the simulator: the batch went out again when its own debounce ended, a trigger with no news.
        let (rig, t) = Self.started { $0.relay.state.withLock { $0.triggers = [.status(402)] } }
        rig.change(1)
        rig.advance(to: 62)
        rig.change(2)  // its debounce would end at 67 s
        rig.advance(seconds: 120)
        // The 402 at 5 s is re-checked at 65 s; that trigger's push fetches the change from 62 s too.
        #expect(t.triggers == ["5", "65"])
        #expect(t.log(.triggerDelivered) == [#"65 level=info msg="wake-up delivered" status=202 reason=change"#])
    }

    @Test("stale-peer sweep runs every STALE_RETRIGGER_SECONDS and wakes only when a peer needs data")
    func sweep() {
        let (rig, t) = Self.started(sweep: .seconds(600)) {
            $0.syncthing.state.withLock { $0.phoneConnected = false }
        }
        // What each sweep finds of the offline phone: it needs nothing, it needs data, nothing, and a completion
        // answer that cannot be read.
        let finds: [(inout FakeSyncthingTransport.State) -> Void] = [
            { $0.phoneNeedBytes = 0 }, { $0.phoneNeedBytes = 4096 }, { $0.phoneNeedBytes = 0 },
            { $0.completionBody = "{" },
        ]
        for (i, find) in finds.enumerated() {
            let at = Double(600 * (i + 1))
            rig.syncthing.state.withLock { find(&$0) }
            rig.advance(to: at - 0.1)
            #expect(t.logged(.sweepStarted).count == i)
            rig.advance(to: at)
            #expect(t.logged(.sweepStarted).count == i + 1)
        }
        rig.advance(to: 2400.5)
        #expect(
            t.logged(.sweepFinished).map(\.fields) == [
                [LogField(.needing, .int(0))], [LogField(.needing, .int(1))], [LogField(.needing, .int(0))], [],
            ])
        #expect(t.log(.triggerDelivered) == [#"1205 level=info msg="wake-up delivered" status=202 reason=stale-peer"#])
        #expect(t.triggers == ["1205"])
    }

    @Test("a push sent while the sweep runs already woke the phone: the sweep that finds it needing data adds none")
    func sweepAfterAPushDuringIt() {
        // Found by the simulator: a stale-peer wake-up followed the change's push, with nothing new for the phone.
        let (rig, t) = Self.started(debounce: 2, sweep: .seconds(60)) { $0.phoneOfflineNeedingData() }
        // The sweep at 60 s gets its completion answer 10 s later; a change comes meanwhile and goes out at 64 s.
        let needs = #"{"needBytes":4096,"needItems":1,"needDeletes":0,"remoteState":"valid","sequence":5}"#
        rig.script(.completion(folder: "vault"), [.body(needs, takes: .seconds(10))])
        rig.advance(to: 62)
        rig.change(1)
        rig.advance(to: 100)
        #expect(t.logged(.sweepFinished).map(\.fields) == [[LogField(.needing, .int(1))]])
        #expect(t.triggers == ["64"])
        #expect(t.log(.triggerDelivered) == [#"64 level=info msg="wake-up delivered" status=202 reason=change"#])
    }

    /// Events lost at `seconds` (a re-sync) while the phone needs data; the clock then runs on for `runFor`.
    static func resynced(at seconds: Double, sweep: Duration?, runFor: Double) -> Timeline {
        let (rig, t) = Self.started(sweep: sweep) { $0.syncthing.state.withLock { $0.phoneNeedBytes = 4096 } }
        rig.advance(to: seconds)
        rig.gap(after: 0)
        rig.advance(seconds: runFor)
        return t
    }

    @Test("STALE_RETRIGGER_SECONDS=0 never sweeps, not even after a re-sync")
    func sweepDisabled() {
        let t = Self.resynced(at: 0, sweep: nil, runFor: 86400)
        #expect(t.logged(.sweepStarted).isEmpty)
        #expect(t.log(.triggerDelivered) == [#"5 level=info msg="wake-up delivered" status=202 reason=resync"#])
    }

    @Test("a re-sync wakes once (debounced) and starts no sweep (the engine re-reads the peers itself)")
    func resync() {
        let t = Self.resynced(at: 10, sweep: .seconds(21600), runFor: 60)
        #expect(t.logged(.sweepStarted).isEmpty)
        #expect(t.log(.triggerDelivered) == [#"15 level=info msg="wake-up delivered" status=202 reason=resync"#])
        #expect(t.triggers == ["15"])
    }

    @Test("SIGTERM with nothing pending exits 0 at once")
    func stopIdle() {
        let (rig, t) = Self.started()
        rig.advance(seconds: 10)
        rig.stop()
        #expect(rig.exitStatuses == [.ok])
        #expect(t.triggers.isEmpty)
    }

    @Test("SIGTERM during a debounce sends the pending wake-up at once, then exits 0")
    func stopFlushes() {
        let (rig, t) = Self.started()
        rig.change(1)
        rig.advance(seconds: 1)
        rig.stop()
        #expect(t.triggers == ["1"])
        rig.advance(seconds: 1)
        #expect(rig.exitStatuses == [.ok])
    }

    @Test("SIGTERM in a steady stream's pause reads what came during it first: a change there still wakes")
    func stopInPause() {
        let (rig, t) = Self.started(debounce: 0)
        // Changes 1-4 are read at once and each wakes; change 5 comes during the pause after the fourth answer.
        rig.changes(1...5, every: 0.005)
        #expect(t.triggers == ["0", "0.005", "0.010", "0.015"])
        rig.stop()
        #expect(t.requests.suffix(1) == ["0.025 poll since=4"], "the last read, with no wait")
        #expect(t.triggers == ["0", "0.005", "0.010", "0.015", "0.025"])
        rig.advance(seconds: 1)
        #expect(rig.exitStatuses == [.ok])
        // With nothing new in the pause, the last read finds nothing and the stop wakes no one.
        let (quiet, q) = Self.started(debounce: 0)
        quiet.changes(1...4, every: 0.005)
        quiet.stop()
        #expect(q.triggers == ["0", "0.005", "0.010", "0.015"])
        quiet.advance(seconds: 1)
        #expect(quiet.exitStatuses == [.ok])
    }

    @Test("SIGTERM while backing off makes one last attempt, and exits 0 even if it fails")
    func stopDuringBackoff() {
        let (rig, t) = Self.changeToFailingRelay(.status(503), times: 20, jitter: 0.999)
        rig.advance(seconds: 20)
        let before = t.triggers
        rig.stop()
        #expect(t.triggers == before + ["20"])
        rig.advance(seconds: 1)
        #expect(rig.exitStatuses == [.ok])
    }

    @Test("SIGTERM when the relay hangs exits 0 within the 5 s grace")
    func stopWithAHungRelayExitsInTheGrace() {
        let (rig, t) = Self.started { $0.relayAnswers(after: .seconds(60)) }
        rig.change(1)
        rig.advance(seconds: 6)  // sent at 5 s; no answer before the request's time limit
        rig.stop()
        rig.advance(to: 10.9)
        #expect(rig.exitStatuses.isEmpty)
        rig.advance(to: 11)
        #expect(rig.exitStatuses == [.ok])
        #expect(t.triggers == ["5"])
    }

    @Test("SIGTERM under a long Retry-After does not wait past the grace")
    func stopRateLimited() {
        let (rig, t) = Self.changeToFailingRelay(.status(429, retryAfter: "600"), times: 1)
        rig.advance(seconds: 5)
        rig.stop()
        // Nothing can be sent before the grace ends: it stops at once, saying a wake-up was left pending.
        #expect(rig.exitStatuses == [.ok])
        #expect(t.now == "5")
        #expect(t.triggers == ["1"])
        #expect(t.logged(.stopped).map(\.fields) == [[LogField(.pending, .bool(true))]])
    }

    /// A change at 0 and a stop at 1 s, in its debounce: the flush goes out at once and the relay answers it 100 ms
    /// later with a 429 and this Retry-After.
    static func stoppedWhileFlushing(retryAfter: String) -> (ServiceRig, Timeline) {
        let (rig, t) = Self.started {
            $0.relayAnswers(after: .milliseconds(100))
            $0.relay.state.withLock { $0.triggers = [.status(429, retryAfter: retryAfter)] }
        }
        rig.change(1)
        rig.advance(seconds: 1)
        rig.stop()
        return (rig, t)
    }

    @Test("a 429 answering the shutdown flush with a Retry-After past the grace stops at once")
    func stopFlushRateLimited() {
        let (rig, t) = Self.stoppedWhileFlushing(retryAfter: "60")
        rig.advance(to: 1.09)
        #expect(rig.exitStatuses.isEmpty)
        rig.advance(to: 1.1)
        #expect(rig.exitStatuses == [.ok])
        rig.advance(seconds: 10)
        #expect(t.logged(.stopped).count == 1)
        #expect(t.triggers == ["1"])
    }

    @Test("a 429 answering the shutdown flush with a short Retry-After is retried within the grace")
    func stopFlushShortRetryAfter() {
        let (rig, t) = Self.stoppedWhileFlushing(retryAfter: "2")
        rig.advance(seconds: 10)
        #expect(rig.exitStatuses == [.ok])
        // The 429 came back at 1.1 s: retried 2 s later, and answered 100 ms after that.
        #expect(t.triggers == ["1", "3.100"])
        #expect(t.log(.triggerDelivered) == [#"3.200 level=info msg="wake-up delivered" status=202 reason=change"#])
    }

    @Test("a run with a failure, a 429 and sweeps logs fixed messages and typed fields, line for line")
    func logsAreTyped() {
        let (rig, t) = Self.started(announce: true, sweep: .seconds(60)) {
            $0.relay.state.withLock { $0.triggers = [.status(500), .status(429, retryAfter: "2")] }
            $0.phoneOfflineNeedingData()
        }
        rig.advance(seconds: 61)
        rig.syncthing.state.withLock { $0.phoneNeedBytes = 0 }
        rig.advance(seconds: 139)
        let wake: Set<LogMessage> = [
            .triggerSending, .triggerFailed, .triggerRateLimited, .triggerDelivered, .wakeScheduled, .sweepStarted,
            .sweepFinished,
        ]
        // Every line, exactly: fixed messages and typed fields (numbers, codes, reasons), nothing else.
        #expect(
            t.records.filter { wake.contains($0.message) }.map { $0.textLine() } == [
                #"level=debug msg="sending wake-up" reason=announce"#,
                #"level=warn msg="wake-up failed; backing off" status=500 attempt=1 delay=0.500 code=relay.transient"#,
                #"level=debug msg="sending wake-up" reason=announce"#,
                #"level=warn msg="relay rate limit; waiting for Retry-After" status=429 code=relay.rate-limited"#
                    + " delay=2.000",
                #"level=debug msg="sending wake-up" reason=announce"#,
                #"level=info msg="wake-up delivered" status=202 reason=announce"#,
                #"level=debug msg="stale-peer sweep started""#,
                #"level=debug msg="stale-peer sweep finished" needing=1"#,
                #"level=debug msg="wake-up scheduled" reason=stale-peer"#,
                #"level=debug msg="sending wake-up" reason=stale-peer"#,
                #"level=info msg="wake-up delivered" status=202 reason=stale-peer"#,
                #"level=debug msg="stale-peer sweep started""#,
                #"level=debug msg="stale-peer sweep finished" needing=0"#,
                #"level=debug msg="stale-peer sweep started""#,
                #"level=debug msg="stale-peer sweep finished" needing=0"#,
            ])
    }
}
