import Testing

@testable import NotifyCore

/// METRICS_FILE's pure parts: the counters the engine's actions add up to, the exposition text, and when it is
/// written (README.md, "Metrics").
@Suite("Metrics: counters from the engine's actions, the exposition text, the write throttle")
struct MetricsTests {
    static let t0: Int64 = 1_718_000_000_000

    static func sending(_ reason: WakeReason) -> Engine.Action {
        .log(LogRecord(.debug, .triggerSending, [.reason(reason)]))
    }

    static func outcome(_ outcome: RelayOutcome) -> Engine.Action { .monitor(.relayOutcome(outcome)) }

    @Test("each wake-up is counted under the reason it was sent for and the relay's answer to it")
    func wakeUpsByReasonAndOutcome() {
        var m = Metrics()
        let actions: [Engine.Action] = [
            Self.sending(.announce), Self.outcome(.delivered(status: 202)),
            Self.sending(.change), Self.outcome(.transient(status: 503, error: nil)),
            // The retry of the same change (WakePolicy keeps the reason), then its answer.
            Self.sending(.change), Self.outcome(.subscriptionInactive(status: 403)),
            Self.sending(.resync), Self.outcome(.rateLimited(retryAfter: .seconds(60))),
            Self.sending(.stalePeer), Self.outcome(.endpointMissing),
            Self.sending(.change), Self.outcome(.delivered(status: 200)),
            // An answer with no trigger in flight (never sent by the engine) counts nothing.
            Self.outcome(.delivered(status: 202)),
        ]
        for (i, action) in actions.enumerated() { m.observe(action, unixMilliseconds: Self.t0 + Int64(i) * 1000) }
        #expect(
            m.wakeUps == [
                .init(.announce, .delivered): 1, .init(.change, .transient): 1, .init(.change, .inactive): 1,
                .init(.resync, .rateLimited): 1, .init(.stalePeer, .transient): 1, .init(.change, .delivered): 1,
            ])
        // The last delivery is the one with no trigger in flight: the relay did accept it.
        #expect(m.lastWakeUpDelivered == Self.t0 + 12_000)
    }

    @Test("events read, poll failures by code, window deferrals and the last poll, from the engine's records")
    func countersFromRecords() {
        var m = Metrics()
        let actions: [Engine.Action] = [
            .log(LogRecord(.debug, .eventsReceived, [.count(3), LogField(.events, .int(1))])),
            .log(LogRecord(.debug, .eventsReceived, [.count(2), LogField(.events, .int(0))])),
            .log(LogRecord(.warn, .eventPollFailed, [.code(.transportTimeout), .attempt(1), .delay(.seconds(1))])),
            .log(LogRecord(.warn, .eventPollFailed, [.code(.transportTimeout), .attempt(2)])),
            .log(LogRecord(.warn, .eventPollFailed, [.code(.syncthingMalformed), .attempt(3)])),
            // Syncthing unreachable (the level drops to debug on repeats: counted all the same), a rejected key.
            .log(LogRecord(.warn, .syncthingUnavailable, [.code(.transportConnect), .attempt(1)])),
            .log(LogRecord(.debug, .syncthingUnavailable, [.code(.transportConnect), .attempt(2)])),
            .log(LogRecord(.error, .syncthingAuthFailed, [.code(.syncthingUnauthorized), .attempt(1)])),
            // Early empty answers: Syncthing answered; not a failure.
            .log(LogRecord(.debug, .eventPollFailed, [.count(2)])),
            .log(LogRecord(.debug, .triggerHeldForWindow, [.reason(.change), .delay(.seconds(12))])),
            .monitor(.pollSucceeded),
            // Records that count nothing.
            .log(LogRecord(.info, .relayHealthy)), .log(LogRecord(.debug, .wakeScheduled, [.reason(.change)])),
        ]
        for action in actions { m.observe(action, unixMilliseconds: Self.t0 + 1_500) }
        #expect(m.eventsRead == 5)
        #expect(
            m.pollFailures == [
                .transportTimeout: 2, .syncthingMalformed: 1, .transportConnect: 2, .syncthingUnauthorized: 1,
            ])
        #expect(m.windowDeferrals == 1)
        #expect(m.lastPollSuccess == Self.t0 + 1_500)
        #expect(m.lastWakeUpDelivered == nil)
        #expect(m.up)
        m.observe(.exit(.stopped), unixMilliseconds: Self.t0 + 2_000)
        #expect(!m.up)
    }

    @Test("the revision moves with what a reader sees, not with what it does not")
    func revisionMovesOnlyOnVisibleChange() {
        var m = Metrics()
        #expect(m.revision == 0)
        for action: Engine.Action in [
            .request(.status), .armTimer(.backoff, at: .seconds(3)), .log(LogRecord(.info, .relayHealthy)),
            Self.sending(.announce),
        ] {
            m.observe(action, unixMilliseconds: Self.t0)
        }
        #expect(m.revision == 0)
        m.observe(Self.outcome(.delivered(status: 202)), unixMilliseconds: Self.t0)
        #expect(m.revision == 1)
        m.observe(.monitor(.pollSucceeded), unixMilliseconds: Self.t0)
        m.observe(.monitor(.pollSucceeded), unixMilliseconds: Self.t0)
        #expect(m.revision == 2, "the same time again is no change")
    }

    // MARK: - Exposition

    static let fresh = """
        # HELP vaultsync_notify_up 1 while vaultsync-notify runs, 0 after it stopped.
        # TYPE vaultsync_notify_up gauge
        vaultsync_notify_up 1
        # HELP vaultsync_notify_wakeups_total Wake-ups sent to the relay, by reason and by the relay's answer.
        # TYPE vaultsync_notify_wakeups_total counter
        vaultsync_notify_wakeups_total{reason="announce",outcome="delivered"} 0
        vaultsync_notify_wakeups_total{reason="announce",outcome="inactive"} 0
        vaultsync_notify_wakeups_total{reason="announce",outcome="rate-limited"} 0
        vaultsync_notify_wakeups_total{reason="announce",outcome="transient"} 0
        vaultsync_notify_wakeups_total{reason="change",outcome="delivered"} 0
        vaultsync_notify_wakeups_total{reason="change",outcome="inactive"} 0
        vaultsync_notify_wakeups_total{reason="change",outcome="rate-limited"} 0
        vaultsync_notify_wakeups_total{reason="change",outcome="transient"} 0
        vaultsync_notify_wakeups_total{reason="resync",outcome="delivered"} 0
        vaultsync_notify_wakeups_total{reason="resync",outcome="inactive"} 0
        vaultsync_notify_wakeups_total{reason="resync",outcome="rate-limited"} 0
        vaultsync_notify_wakeups_total{reason="resync",outcome="transient"} 0
        vaultsync_notify_wakeups_total{reason="stale-peer",outcome="delivered"} 0
        vaultsync_notify_wakeups_total{reason="stale-peer",outcome="inactive"} 0
        vaultsync_notify_wakeups_total{reason="stale-peer",outcome="rate-limited"} 0
        vaultsync_notify_wakeups_total{reason="stale-peer",outcome="transient"} 0
        # HELP vaultsync_notify_events_read_total Syncthing events read.
        # TYPE vaultsync_notify_events_read_total counter
        vaultsync_notify_events_read_total 0
        # HELP vaultsync_notify_poll_failures_total Failed requests of the Syncthing event poll loop, by error code.
        # TYPE vaultsync_notify_poll_failures_total counter
        # HELP vaultsync_notify_relay_window_deferrals_total Wake-ups held until the relay's push window ended.
        # TYPE vaultsync_notify_relay_window_deferrals_total counter
        vaultsync_notify_relay_window_deferrals_total 0
        # HELP vaultsync_notify_decisions_total Decisions on what was read, by the rule that applied (--status shows the last ones).
        # TYPE vaultsync_notify_decisions_total counter
        vaultsync_notify_decisions_total{decision="announce"} 0
        vaultsync_notify_decisions_total{decision="change"} 0
        vaultsync_notify_decisions_total{decision="change-sharing-unknown"} 0
        vaultsync_notify_decisions_total{decision="change-unwatched"} 0
        vaultsync_notify_decisions_total{decision="change-unshared"} 0
        vaultsync_notify_decisions_total{decision="change-declined"} 0
        vaultsync_notify_decisions_total{decision="peer-needs-data"} 0
        vaultsync_notify_decisions_total{decision="peer-progress"} 0
        vaultsync_notify_decisions_total{decision="peer-declined"} 0
        vaultsync_notify_decisions_total{decision="events-lost"} 0
        vaultsync_notify_decisions_total{decision="syncthing-restarted"} 0
        vaultsync_notify_decisions_total{decision="syncthing-back"} 0
        vaultsync_notify_decisions_total{decision="sweep-offline"} 0
        vaultsync_notify_decisions_total{decision="sweep-connected"} 0
        vaultsync_notify_decisions_total{decision="sweep-in-sync"} 0
        vaultsync_notify_decisions_total{decision="wake-answered"} 0
        # HELP vaultsync_notify_last_poll_success_timestamp_seconds Unix time of the last successful Syncthing event poll (0 before the first).
        # TYPE vaultsync_notify_last_poll_success_timestamp_seconds gauge
        vaultsync_notify_last_poll_success_timestamp_seconds 0
        # HELP vaultsync_notify_last_wakeup_delivered_timestamp_seconds Unix time the relay last accepted a wake-up (0 before the first).
        # TYPE vaultsync_notify_last_wakeup_delivered_timestamp_seconds gauge
        vaultsync_notify_last_wakeup_delivered_timestamp_seconds 0
        # HELP vaultsync_notify_build_info Always 1; the release of vaultsync-notify that runs, in the version label.
        # TYPE vaultsync_notify_build_info gauge
        vaultsync_notify_build_info{version="1.2.3"} 1
        # HELP process_start_time_seconds Start time of the process since unix epoch in seconds.
        # TYPE process_start_time_seconds gauge
        process_start_time_seconds 1717999999.250

        """

    /// A fresh service's metrics, of release 1.2.3 started 0.75 s before `t0`.
    static func started() -> Metrics { Metrics(version: "1.2.3", processStart: t0 - 750) }

    @Test("a fresh service: up, every wake-up series at 0, no poll-failure series, times 0")
    func renderFresh() {
        #expect(MetricsExposition.render(Self.started()) == Self.fresh)
    }

    @Test("counts, codes in order, and times in seconds with milliseconds")
    func renderCounts() {
        var m = Self.started()
        m.up = false
        m.wakeUps = [.init(.change, .delivered): 7, .init(.stalePeer, .transient): 2]
        m.eventsRead = 1234
        m.pollFailures = [.transportTimeout: 3, .syncthingMalformed: 1]
        m.windowDeferrals = 5
        m.decisions = [.changeUnshared: 4]
        m.lastPollSuccess = 1_718_000_123_045
        m.lastWakeUpDelivered = 1_718_000_100_000
        var expected = Self.fresh
        for (old, new) in [
            ("\nvaultsync_notify_up 1\n", "\nvaultsync_notify_up 0\n"),
            (#"{reason="change",outcome="delivered"} 0"#, #"{reason="change",outcome="delivered"} 7"#),
            (#"{reason="stale-peer",outcome="transient"} 0"#, #"{reason="stale-peer",outcome="transient"} 2"#),
            ("vaultsync_notify_events_read_total 0", "vaultsync_notify_events_read_total 1234"),
            (
                "# TYPE vaultsync_notify_poll_failures_total counter\n",
                "# TYPE vaultsync_notify_poll_failures_total counter\n"
                    + "vaultsync_notify_poll_failures_total{code=\"syncthing.malformed-response\"} 1\n"
                    + "vaultsync_notify_poll_failures_total{code=\"transport.timeout\"} 3\n"
            ),
            ("vaultsync_notify_relay_window_deferrals_total 0", "vaultsync_notify_relay_window_deferrals_total 5"),
            (#"{decision="change-unshared"} 0"#, #"{decision="change-unshared"} 4"#),
            (
                "vaultsync_notify_last_poll_success_timestamp_seconds 0",
                "vaultsync_notify_last_poll_success_timestamp_seconds 1718000123.045"
            ),
            (
                "vaultsync_notify_last_wakeup_delivered_timestamp_seconds 0",
                "vaultsync_notify_last_wakeup_delivered_timestamp_seconds 1718000100"
            ),
        ] {
            #expect(expected.contains(old))
            expected = expected.replacing(old, with: new)
        }
        #expect(MetricsExposition.render(m) == expected)
    }

    @Test("the build's version is the one label value that is escaped; an unknown start time is written as 0")
    func versionEscaped() {
        let text = MetricsExposition.render(Metrics(version: "1.0\\\"x\"\n", processStart: nil))
        #expect(text.contains("\nvaultsync_notify_build_info{version=\"1.0\\\\\\\"x\\\"\\n\"} 1\n"))
        #expect(text.contains("\nprocess_start_time_seconds 0\n"))
    }

    @Test("label values come from closed enums and never need escaping")
    func labelValuesNeedNoEscaping() {
        let values =
            WakeReason.allCases.map(\.rawValue) + RelayOutcomeCategory.allCases.map(\.rawValue)
            + ErrorCode.allCases.map(\.rawValue)
        for value in values {
            #expect(value.utf8.allSatisfy { $0 == 0x2D || $0 == 0x2E || (0x61...0x7A).contains($0) }, "\(value)")
        }
    }

    @Test(
        "seconds from milliseconds",
        arguments: [(Int64?.none, "0"), (0, "0"), (1_500, "1.500"), (7, "0.007"), (-250, "-0.250"), (42_000, "42")])
    func secondsText(ms: Int64?, text: String) {
        #expect(MetricsExposition.seconds(ms) == text)
    }

    // MARK: - Throttle

    @Test("written at once the first time, then at most every 5 s and only after a change; a change waits for a timer")
    func throttleTimeline() {
        var throttle = MetricsWriteThrottle()
        // t = 0: the start.
        #expect(throttle.decide(revision: 0, now: .seconds(0)) == .write)
        #expect(throttle.written(ok: true, revision: 0) == nil)
        #expect(throttle.decide(revision: 0, now: .seconds(1)) == .none, "nothing changed")
        // t = 2: a change inside the interval waits for t = 5, with one timer however many changes come.
        #expect(throttle.decide(revision: 1, now: .seconds(2)) == .writeAt(.seconds(5)))
        #expect(throttle.decide(revision: 2, now: .seconds(3)) == .none)
        #expect(throttle.timerFired(revision: 2, now: .seconds(5)) == .write)
        #expect(throttle.written(ok: true, revision: 2) == nil)
        // Quiet until t = 60: nothing to write; then a change is written at once.
        #expect(throttle.decide(revision: 2, now: .seconds(60)) == .none)
        #expect(throttle.decide(revision: 3, now: .seconds(61)) == .write)
        #expect(throttle.written(ok: true, revision: 3) == nil)
        // The stop writes at once, inside the interval, and then nothing more.
        #expect(throttle.decide(revision: 4, now: .seconds(62)) == .writeAt(.seconds(66)))
        #expect(throttle.stopping(now: .seconds(62)) == .write)
        #expect(throttle.written(ok: true, revision: 5) == nil)
        #expect(throttle.timerFired(revision: 6, now: .seconds(66)) == .none)
        #expect(throttle.stopping(now: .seconds(67)) == .none)
    }

    @Test("a failed write warns once, is retried an interval later, and warns again only after a success")
    func throttleFailures() {
        var throttle = MetricsWriteThrottle()
        #expect(throttle.decide(revision: 0, now: .seconds(0)) == .write)
        #expect(throttle.written(ok: false, revision: 0) == LogRecord(.warn, .metricsFileUnwritable))
        #expect(throttle.decide(revision: 0, now: .seconds(0)) == .writeAt(.seconds(5)))
        #expect(throttle.timerFired(revision: 0, now: .seconds(5)) == .write)
        #expect(throttle.written(ok: false, revision: 0) == nil, "one warning for a run of failures")
        #expect(throttle.decide(revision: 0, now: .seconds(5)) == .writeAt(.seconds(10)))
        #expect(throttle.timerFired(revision: 1, now: .seconds(10)) == .write)
        #expect(throttle.written(ok: true, revision: 1) == nil)
        #expect(throttle.decide(revision: 2, now: .seconds(20)) == .write)
        #expect(throttle.written(ok: false, revision: 2) == LogRecord(.warn, .metricsFileUnwritable))
    }
}
