import Testing

@testable import NotifyCore

@Suite("WakePolicy timelines on virtual time")
struct WakePolicyTests {
    @Test("two changes 3 s apart with a 5 s debounce → one trigger at t = 8 s")
    func trailingDebounce() {
        var h = PolicyHarness(.quiet())
        h.send(.start)
        h.send(.wake(.change))
        h.advance(seconds: 3)
        h.send(.wake(.change))
        h.advance(seconds: 4.9)
        #expect(h.sent.isEmpty)
        h.advance(seconds: 0.2)
        #expect(h.sentSeconds == [8])
        h.advance(seconds: 600)
        #expect(h.sent.count == 1)
    }

    @Test("a change every 2 s for 2 minutes wakes every 30 s (DEBOUNCE_MAX_SECONDS), not never")
    func maximumWait() {
        var h = PolicyHarness(.quiet())
        h.send(.start)
        for _ in 0..<60 {
            h.send(.wake(.change))
            h.advance(seconds: 2)
        }
        h.advance(seconds: 60)
        // Each batch goes out 30 s after its first change. The change at 30 s comes as the first batch goes out and
        // opens the next one, and so on; the last change (118 s) falls into the batch sent at 120 s.
        #expect(h.sentSeconds == [30, 60, 90, 120])
        #expect(h.maxInFlight == 1)
    }

    @Test("a burst of 200 changes within a second → exactly one trigger")
    func burst() {
        var h = PolicyHarness(.quiet())
        h.send(.start)
        for _ in 0..<200 {
            h.send(.wake(.change))
            h.advance(seconds: 0.005)
        }
        h.advance(seconds: 120)
        #expect(h.sent.count == 1)
    }

    @Test("startup announce is sent at once, exactly once, and not debounced")
    func announce() {
        var h = PolicyHarness(.init(startupAnnounce: true, staleRetrigger: nil))
        h.send(.start)
        #expect(h.reasons == [.announce])
        #expect(h.sentSeconds == [0])
        h.advance(seconds: 3600)
        #expect(h.sent.count == 1)
    }

    @Test("STARTUP_ANNOUNCE=false sends nothing at start")
    func noAnnounce() {
        var h = PolicyHarness(.quiet())
        h.send(.start)
        h.advance(seconds: 3600)
        #expect(h.sent.isEmpty)
    }

    @Test("a change during the announce's flight waits for it, then goes after its own debounce")
    func oneInFlight() {
        var h = PolicyHarness(.init(startupAnnounce: true, staleRetrigger: nil))
        h.relayLatency = .seconds(8)
        h.send(.start)
        h.advance(seconds: 1)
        h.send(.wake(.change))
        h.advance(seconds: 5)  // debounce ends at 6 s while the announce is still in flight (until 8 s)
        #expect(h.sent.count == 1)
        h.advance(seconds: 2.5)
        #expect(h.sentSeconds == [0, 8])
        #expect(h.reasons == [.announce, .change])
        #expect(h.maxInFlight == 1)
    }

    @Test("503 three times → retries with backoff 1, 2, 4 s (full jitter at 1.0) → one delivery, no storm")
    func transientBackoff() {
        var h = PolicyHarness(.quiet(debounce: 1))
        h.jitter = 0.999_999
        h.relayLatency = .zero
        h.relayScript = [
            .transient(status: 503, error: nil), .transient(status: 503, error: nil),
            .transient(status: 503, error: nil),
        ]
        h.send(.start)
        h.send(.wake(.change))
        h.advance(seconds: 100)
        #expect(h.sent.count == 4)
        let s = h.sentSeconds
        #expect(abs(s[1] - s[0] - 1) < 0.01)
        #expect(abs(s[2] - s[1] - 2) < 0.01)
        #expect(abs(s[3] - s[2] - 4) < 0.01)
        #expect(h.logs.filter { $0.message == .triggerDelivered }.count == 1)
    }

    @Test("backoff resets after a success")
    func backoffReset() {
        var h = PolicyHarness(.quiet(debounce: 1))
        h.jitter = 0.999_999
        h.relayLatency = .zero
        h.relayScript = [.transient(status: 500, error: nil), .transient(status: 500, error: nil)]
        h.send(.start)
        h.send(.wake(.change))
        h.advance(seconds: 60)
        #expect(h.sent.count == 3)
        h.relayScript = [.transient(status: nil, error: .transportConnect)]
        h.send(.wake(.change))
        h.advance(seconds: 60)
        // After the success the first retry waits the first ceiling again (1 s), not 4 s.
        #expect(h.sent.count == 5)
        #expect(abs(h.sentSeconds[4] - h.sentSeconds[3] - 1) < 0.01)
    }

    @Test(
        "backoff ceilings double from 1 s to a 5 min cap",
        arguments: [
            (1, 1), (2, 2), (3, 4), (4, 8), (8, 128), (9, 256), (10, 300), (50, 300),
        ])
    func backoffTable(failures: Int, ceilingSeconds: Int64) {
        #expect(Backoff().ceiling(afterFailures: failures) == .seconds(ceilingSeconds))
        #expect(
            Backoff().delay(afterFailures: failures, jitter: 0.5)
                == max(.milliseconds(100), .seconds(ceilingSeconds) / 2))
        #expect(Backoff().delay(afterFailures: failures, jitter: 0) == .milliseconds(100))
    }

    @Test("transient failures keep retrying for hours without exceeding the 5 min cap")
    func longOutage() {
        var h = PolicyHarness(.quiet(debounce: 1))
        h.jitter = 0.999_999
        h.relayLatency = .zero
        h.relayScript = Array(repeating: .transient(status: 502, error: nil), count: 40)
        h.send(.start)
        h.send(.wake(.change))
        h.advance(seconds: 4 * 3600)
        let gaps = zip(h.sentSeconds, h.sentSeconds.dropFirst()).map { $1 - $0 }
        #expect(gaps.max()! <= 300.01)
        #expect(h.sent.count == 41)
        #expect(h.exitStatus == nil)
    }

    @Test(
        "subscription inactive (400–403): keep running, re-check every 60 s, resume by itself",
        arguments: [400, 401, 402, 403])
    func inactive(status: Int) {
        var h = PolicyHarness(.quiet(debounce: 1))
        h.relayLatency = .zero
        h.relayScript = Array(repeating: .subscriptionInactive(status: status), count: 3)
        h.send(.start)
        h.send(.wake(.change))
        // Changes keep arriving; they merge into the pending wake-up instead of adding sends.
        for _ in 0..<10 {
            h.advance(seconds: 20)
            h.send(.wake(.change))
        }
        h.advance(seconds: 120)
        let s = h.sentSeconds
        #expect(s[0] == 1)
        #expect(abs(s[1] - 61) < 0.01)
        #expect(abs(s[2] - 121) < 0.01)
        #expect(abs(s[3] - 181) < 0.01)  // subscription active again: delivered
        #expect(h.exitStatus == nil)
        #expect(h.logs.contains { $0.message == .triggerDelivered })
    }

    @Test("404 → one error record and exit 78")
    func endpointMissing() {
        var h = PolicyHarness(.init(startupAnnounce: true, staleRetrigger: nil))
        h.relayScript = [.endpointMissing]
        h.send(.start)
        h.advance(seconds: 10)
        #expect(h.exitStatus == .configuration)
        #expect(h.exitStatus?.rawValue == 78)
        #expect(h.logs.filter { $0.level == .error }.map(\.message) == [.relayEndpointMissing])
        #expect(h.sent.count == 1)
    }

    @Test("429 waits exactly Retry-After, then sends once")
    func rateLimited() {
        var h = PolicyHarness(.quiet(debounce: 1))
        h.relayLatency = .zero
        h.relayScript = [.rateLimited(retryAfter: .seconds(17))]
        h.send(.start)
        h.send(.wake(.change))
        h.advance(seconds: 100)
        #expect(h.sentSeconds == [1, 18])
    }

    @Test("stale-peer sweep runs every STALE_RETRIGGER_SECONDS and wakes only when a peer needs data")
    func sweep() {
        var h = PolicyHarness(.init(debounce: .seconds(5), startupAnnounce: false, staleRetrigger: .seconds(600)))
        h.sweepScript = [0, 2, 0, nil]
        h.send(.start)
        h.advance(seconds: 2400.5)
        #expect(h.sweeps.map { Int($0.sinceOrigin.components.seconds) } == [600, 1200, 1800, 2400])
        #expect(h.reasons == [.stalePeer])
        #expect(h.sent.count == 1)
        #expect(abs(h.sentSeconds[0] - 1205.01) < 0.02)
    }

    @Test("STALE_RETRIGGER_SECONDS=0 never sweeps, not even after a re-sync")
    func sweepDisabled() {
        var h = PolicyHarness(.quiet())
        h.send(.start)
        h.send(.wake(.resync))
        h.advance(seconds: 86400)
        #expect(h.sweeps.isEmpty)
        #expect(h.reasons == [.resync])
    }

    @Test("a re-sync wakes once (debounced) and starts no sweep (the shell re-reads the peers itself)")
    func resync() {
        var h = PolicyHarness(.init(startupAnnounce: false, staleRetrigger: .seconds(21600)))
        h.sweepScript = [1]
        h.send(.start)
        h.advance(seconds: 10)
        h.send(.wake(.resync))
        h.advance(seconds: 60)
        #expect(h.sweeps.isEmpty)
        #expect(h.reasons == [.resync])
        #expect(h.sentSeconds == [15])
    }

    @Test("SIGTERM with nothing pending exits 0 at once")
    func stopIdle() {
        var h = PolicyHarness(.quiet())
        h.send(.start)
        h.advance(seconds: 10)
        h.send(.stop)
        #expect(h.exitStatus == .ok)
        #expect(h.sent.isEmpty)
    }

    @Test("SIGTERM during a debounce sends the pending wake-up at once, then exits 0")
    func stopFlushes() {
        var h = PolicyHarness(.quiet())
        h.send(.start)
        h.send(.wake(.change))
        h.advance(seconds: 1)
        h.send(.stop)
        #expect(h.sentSeconds == [1])
        h.advance(seconds: 1)
        #expect(h.exitStatus == .ok)
    }

    @Test("SIGTERM while backing off makes one last attempt, and exits 0 even if it fails")
    func stopDuringBackoff() {
        var h = PolicyHarness(.quiet(debounce: 1))
        h.jitter = 0.999
        h.relayLatency = .zero
        h.relayScript = Array(repeating: .transient(status: 503, error: nil), count: 20)
        h.send(.start)
        h.send(.wake(.change))
        h.advance(seconds: 20)
        let before = h.sent.count
        h.send(.stop)
        #expect(h.sent.count == before + 1)
        h.advance(seconds: 1)
        #expect(h.exitStatus == .ok)
    }

    @Test("SIGTERM when the relay hangs exits 0 within the 5 s grace")
    func stopWithAHungRelayExitsInTheGrace() {
        var h = PolicyHarness(.quiet())
        h.relayLatency = .seconds(60)
        h.send(.start)
        h.send(.wake(.change))
        h.advance(seconds: 6)  // in flight until 65 s
        h.send(.stop)
        h.advance(seconds: 10)
        #expect(h.exitStatus == .ok)
        #expect(h.now == .seconds(11))
    }

    @Test("SIGTERM under a long Retry-After does not wait past the grace")
    func stopRateLimited() {
        var h = PolicyHarness(.quiet(debounce: 1))
        h.relayLatency = .zero
        h.relayScript = [.rateLimited(retryAfter: .seconds(600))]
        h.send(.start)
        h.send(.wake(.change))
        h.advance(seconds: 5)
        h.send(.stop)
        // Nothing can be sent before the grace ends: it stops at once, saying a wake-up was left pending.
        #expect(h.exitStatus == .ok)
        #expect(h.now == .seconds(5))
        #expect(h.sent.count == 1)
        #expect(h.logs.filter { $0.message == .stopped }.count == 1)
        #expect(h.logs.last { $0.message == .stopped }?.fields == [LogField(.pending, .bool(true))])
    }

    @Test("a 429 answering the shutdown flush with a Retry-After past the grace stops at once")
    func stopFlushRateLimited() {
        var h = PolicyHarness(.quiet())
        h.relayLatency = .milliseconds(100)
        h.relayScript = [.rateLimited(retryAfter: .seconds(60))]
        h.send(.start)
        h.send(.wake(.change))
        h.advance(seconds: 1)
        h.send(.stop)
        h.advance(seconds: 10)
        #expect(h.exitStatus == .ok)
        #expect(h.now == Instant(.milliseconds(1100)))
        #expect(h.logs.filter { $0.message == .stopped }.count == 1)
    }

    @Test("a 429 answering the shutdown flush with a short Retry-After is retried within the grace")
    func stopFlushShortRetryAfter() {
        var h = PolicyHarness(.quiet())
        h.relayLatency = .milliseconds(100)
        h.relayScript = [.rateLimited(retryAfter: .seconds(2))]
        h.send(.start)
        h.send(.wake(.change))
        h.advance(seconds: 1)
        h.send(.stop)
        h.advance(seconds: 10)
        #expect(h.exitStatus == .ok)
        #expect(h.sent.count == 2)
        #expect(h.logs.filter { $0.message == .triggerDelivered }.count == 1)
    }

    @Test("a run with a failure, a 429 and sweeps logs fixed messages and typed fields, line for line")
    func logsAreTyped() {
        var h = PolicyHarness(.init(startupAnnounce: true, staleRetrigger: .seconds(60)))
        h.relayScript = [.transient(status: 500, error: nil), .rateLimited(retryAfter: .seconds(2))]
        h.sweepScript = [1]
        h.send(.start)
        h.advance(seconds: 200)
        // Every line, exactly: fixed messages and typed fields (numbers, codes, reasons), nothing else.
        #expect(
            h.logs.map { $0.textLine() } == [
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
