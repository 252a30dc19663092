import Testing

@testable import NotifyCore

/// The trigger gate alone, as timelines on virtual time: one trigger in flight, the waits after the relay's answers,
/// the push window, the 404, and the shutdown flush.
@Suite("The trigger gate")
struct TriggerGateTests {
    typealias Action = TriggerGate.Action

    static func gate(window: Duration? = nil, backoff: Backoff = Backoff()) -> TriggerGate {
        TriggerGate(settings: TriggerGate.Settings(relayWindow: window, backoff: backoff))
    }

    /// The reason of the trigger `actions` send; nil when they send none.
    static func sent(_ actions: [Action]) -> WakeReason? {
        actions.lazy.compactMap { if case .sendTrigger(let reason) = $0 { reason } else { nil } }.first
    }

    /// When `actions` arm the retry timer.
    static func retryAt(_ actions: [Action]) -> Instant? {
        actions.lazy.compactMap { if case .armTimer(.retry, let at) = $0 { at } else { nil } }.last
    }

    /// The end of the run, as `finish` gives it.
    static func stopped(pending: Bool) -> [Action] {
        [
            .cancelTimer(.debounce), .cancelTimer(.retry), .cancelTimer(.sweep), .cancelTimer(.shutdown),
            .log(pending ? LogRecord(.warn, .stopped, [LogField(.pending, .bool(true))]) : LogRecord(.info, .stopped)),
            .exit(.stopped),
        ]
    }

    @Test("one trigger in flight: news at 1 s and 1.5 s waits for the answer at 2 s, then goes as one")
    func oneInFlight() {
        var g = Self.gate()
        #expect(
            g.submit(.change, now: .zero) == [
                .log(LogRecord(.debug, .triggerSending, [.reason(.change)])), .sendTrigger(.change),
            ])
        #expect(g.inFlight == .change && g.lastSent == .zero)
        #expect(g.submit(.resync, now: .seconds(1)).isEmpty)
        #expect(g.submit(.change, now: .seconds(1.5)).isEmpty)
        #expect(g.dueReason == .resync)
        let answered = g.answer(.delivered(status: 202), jitter: 0.5, now: .seconds(2))
        #expect(Self.sent(answered) == .resync)
        #expect(g.lastSent == .seconds(2) && g.dueReason == nil)
        #expect(g.lastWake == LastWake(at: .seconds(2), reason: .change, answer: .delivered))
        // An answer nobody waits for changes nothing.
        _ = g.answer(.delivered(status: 202), jitter: 0.5, now: .seconds(3))
        #expect(g.answer(.delivered(status: 202), jitter: 0.5, now: .seconds(4)).isEmpty)
    }

    @Test("accepted at 1 s with a 30 s window: news at 5 s and 10 s is held once and goes at 31 s")
    func pushWindow() {
        var g = Self.gate(window: .seconds(30))
        _ = g.submit(.change, now: .zero)
        _ = g.answer(.delivered(status: 202), jitter: 0.5, now: .seconds(1))
        #expect(
            g.submit(.change, now: .seconds(5)) == [
                .log(LogRecord(.debug, .triggerHeldForWindow, [.reason(.change), .delay(.seconds(26))])),
                .armTimer(.retry, at: .seconds(31)),
            ])
        #expect(g.submit(.resync, now: .seconds(10)) == [.armTimer(.retry, at: .seconds(31))])
        #expect(g.relayState(now: .seconds(10)) == .window(until: .seconds(31)))
        #expect(g.heldUntil(now: .seconds(10)) == .seconds(31))
        #expect(Self.sent(g.retry(now: .seconds(30.9))) == nil)
        #expect(Self.sent(g.retry(now: .seconds(31))) == .change)
        #expect(g.relayState(now: .seconds(31)) == .open)
    }

    @Test("503s with full jitter 1: retries after 1 s, 2 s, 4 s; a 2xx resets the backoff")
    func backoffDoubles() {
        var g = Self.gate()
        _ = g.submit(.change, now: .zero)
        var now = Instant.zero
        for wait in [1.0, 2, 4] {
            now = now + .seconds(1)
            let failed = g.answer(.transient(status: 503, error: nil), jitter: 1, now: now)
            let millis = Int64(wait * 1000)
            let end = now + .milliseconds(millis)
            #expect(Self.retryAt(failed) == end)
            #expect(g.relayState(now: now) == .waiting(.backoff, until: end))
            // The failed wake-up is kept and goes when the wait ends, not before.
            #expect(g.dueReason == .change)
            #expect(Self.sent(g.retry(now: now + .milliseconds(millis - 1))) == nil)
            now = end
            #expect(Self.sent(g.retry(now: now)) == .change)
        }
        _ = g.answer(.delivered(status: 202), jitter: 1, now: now + .seconds(1))
        _ = g.submit(.change, now: now + .seconds(2))
        #expect(
            Self.retryAt(g.answer(.transient(status: 503, error: nil), jitter: 1, now: now + .seconds(3))) == now
                + .seconds(4))
    }

    @Test("a 5xx may have pushed: its 1 s backoff at 1 s still waits for the window's end at 31 s")
    func failureOpensWindow() {
        var g = Self.gate(window: .seconds(30))
        _ = g.submit(.change, now: .zero)
        let failed = g.answer(.transient(status: 502, error: nil), jitter: 1, now: .seconds(1))
        #expect(Self.retryAt(failed) == .seconds(31))
        #expect(g.relayState(now: .seconds(1)) == .waiting(.backoff, until: .seconds(2)))
        #expect(g.heldUntil(now: .seconds(1)) == .seconds(31))
        // A DNS failure never reached the relay: no window.
        var dns = Self.gate(window: .seconds(30))
        _ = dns.submit(.change, now: .zero)
        #expect(Self.retryAt(dns.answer(.transportFailure(.transportDNS), jitter: 1, now: .seconds(1))) == .seconds(2))
    }

    @Test("no subscription: re-checked after 60 s; a 429: after its Retry-After")
    func relayWaits() {
        var g = Self.gate()
        _ = g.submit(.change, now: .zero)
        #expect(Self.retryAt(g.answer(.subscriptionInactive(status: 402), jitter: 0, now: .seconds(1))) == .seconds(61))
        #expect(g.relayState(now: .seconds(1)) == .waiting(.inactiveRecheck, until: .seconds(61)))
        #expect(Self.sent(g.retry(now: .seconds(61))) == .change)
        let limited = g.answer(.rateLimited(retryAfter: .seconds(120)), jitter: 0, now: .seconds(62))
        #expect(Self.retryAt(limited) == .seconds(182))
        #expect(g.relayState(now: .seconds(62)) == .waiting(.rateLimited, until: .seconds(182)))
        #expect(g.relayState(now: .seconds(182)) == .open)
    }

    @Test("a 404 before the relay answered ends the run; after its health check or a 429 it is an outage")
    func notFound() {
        var wrong = Self.gate()
        _ = wrong.submit(.change, now: .zero)
        #expect(wrong.answer(.endpointMissing, jitter: 1, now: .seconds(1)) == WakePolicy.relayNotFound)
        #expect(wrong.finished && !wrong.relayAnswered)

        var healthy = Self.gate()
        healthy.relayHealthy()
        _ = healthy.submit(.change, now: .zero)
        let outage = healthy.answer(.endpointMissing, jitter: 1, now: .seconds(1))
        #expect(Self.retryAt(outage) == .seconds(2))
        #expect(!healthy.finished && healthy.dueReason == .change)

        var limited = Self.gate()
        _ = limited.submit(.change, now: .zero)
        _ = limited.answer(.rateLimited(retryAfter: .seconds(1)), jitter: 1, now: .seconds(1))
        #expect(limited.relayAnswered)
        _ = limited.retry(now: .seconds(2))
        #expect(Self.retryAt(limited.answer(.endpointMissing, jitter: 1, now: .seconds(3))) == .seconds(4))
    }

    @Test("a stop with nothing waiting ends the run at once")
    func stopIdle() {
        var g = Self.gate()
        #expect(g.stop(flushing: nil, now: .zero) == Self.stopped(pending: false))
        #expect(g.stopping && g.finished)
    }

    @Test("a stop at 2 s skips a backoff until 11 s: the flush goes at once, and its answer ends the run")
    func stopSkipsBackoff() {
        var g = Self.gate(backoff: Backoff(base: .seconds(10)))
        _ = g.submit(.change, now: .zero)
        _ = g.answer(.transient(status: 503, error: nil), jitter: 1, now: .seconds(1))
        #expect(
            g.stop(flushing: .resync, now: .seconds(2)) == [
                .log(LogRecord(.info, .shutdownFlushing)), .armTimer(.shutdown, at: .seconds(7)),
                .log(LogRecord(.debug, .triggerSending, [.reason(.change)])), .sendTrigger(.change),
            ])
        // News while the flush is in flight starts no second trigger; the answer still ends the run, the news pending.
        #expect(g.submit(.stalePeer, now: .seconds(2.5)).isEmpty)
        let answered = g.answer(.delivered(status: 202), jitter: 1, now: .seconds(3))
        #expect(answered.suffix(6) == ArraySlice(Self.stopped(pending: true)))
        #expect(g.finished)
    }

    @Test("a stop inside a Retry-After: honoured when it ends within the 5 s grace, given up when it ends after")
    func stopAndRetryAfter() {
        var g = Self.gate()
        _ = g.submit(.change, now: .zero)
        _ = g.answer(.rateLimited(retryAfter: .seconds(2)), jitter: 1, now: .seconds(1))
        #expect(Self.retryAt(g.stop(flushing: nil, now: .seconds(1.5))) == .seconds(3))
        #expect(Self.sent(g.retry(now: .seconds(3))) == .change)
        // A second Retry-After that still ends by 6.5 s is waited for; one that ends after it is not.
        #expect(
            Self.retryAt(g.answer(.rateLimited(retryAfter: .seconds(2)), jitter: 1, now: .seconds(3.1)))
                == .seconds(5.1))
        _ = g.retry(now: .seconds(5.1))
        let late = g.answer(.rateLimited(retryAfter: .seconds(2)), jitter: 1, now: .seconds(5.2))
        #expect(late.suffix(6) == ArraySlice(Self.stopped(pending: true)))

        var far = Self.gate()
        _ = far.submit(.change, now: .zero)
        _ = far.answer(.rateLimited(retryAfter: .seconds(120)), jitter: 1, now: .seconds(1))
        let stop = far.stop(flushing: nil, now: .seconds(2))
        #expect(Self.sent(stop) == nil)
        #expect(stop.suffix(6) == ArraySlice(Self.stopped(pending: true)))
    }
}
