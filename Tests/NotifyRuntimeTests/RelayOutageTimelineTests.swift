import NotifyCore
import Testing

@testable import NotifyRuntime
@testable import NotifyTestSupport

/// A relay 404 on virtual time, against the real service: before the relay has answered at RELAY_URL it is a wrong
/// RELAY_URL (exit 78); after the relay has answered, it is an outage (a proxy answering 404 while the relay's backend
/// is replaced): backed off up to the 5 min cap, the wake-up kept and delivered once the relay answers again.
@Suite("Relay 404 after the relay answered is an outage")
struct RelayOutageTimelineTests {
    /// A rig with a 1 s debounce and full jitter whose long-polls answer at once; its relay answers its health check
    /// with `health` and its triggers with `script` (then 202); started.
    static func started(
        announce: Bool = false, health: Int = 200, _ script: [FakeRelay.Answer]
    ) -> (ServiceRig, Timeline) {
        let rig = ServiceRig(announce: announce, debounce: .seconds(1))
        rig.syncthing.state.withLock { $0.pollTakes = .zero }
        rig.jitter.withLock { $0 = 0.999_999 }
        rig.relay.state.withLock {
            $0.health = health
            $0.triggers = script
        }
        // Marked before the start: the health check and the announce are part of every timeline here.
        let t = Timeline(rig)
        rig.start()
        return (rig, t)
    }

    static let missing = Array(repeating: FakeRelay.Answer.status(404), count: 12)

    @Test("health ok, then 404 to a change's trigger: no exit, backoff 1, 2, 4 … s, delivered when the relay is back")
    func afterHealthCheck() {
        let (rig, t) = Self.started(Array(Self.missing.prefix(3)))
        #expect(t.logged(.relayHealthy).count == 1)
        rig.change(1)
        rig.advance(seconds: 60)
        #expect(rig.exitStatuses.isEmpty)
        // 0.999 999 of each ceiling, written to the millisecond below.
        #expect(t.triggers == ["1", "1.999", "3.999", "7.999"])
        // Every trigger the relay got was the change's, the three it answered 404 and the one it took.
        #expect(t.logged(.triggerSending).map(\.fields) == Array(repeating: [.reason(.change)], count: 4))
        #expect(t.log(.triggerDelivered) == [#"7.999 level=info msg="wake-up delivered" status=202 reason=change"#])
        let errors = t.records.filter { $0.level == .error }
        #expect(errors.map(\.message) == Array(repeating: .relayEndpointMissingOutage, count: 3))
        #expect(errors.first?.fields.contains(.status(404)) == true)
        #expect(errors.first?.fields.contains(.code(.relayEndpointMissing)) == true)
        // Nothing is left pending.
        rig.advance(seconds: 3600)
        #expect(t.triggers == ["1", "1.999", "3.999", "7.999"])
    }

    @Test("404 for 30 minutes: the wait grows to the 5 min cap and no further; one delivery after it")
    func capsAtFiveMinutes() {
        let (rig, t) = Self.started(Self.missing)
        rig.change(1)
        rig.advance(seconds: 3600)
        #expect(rig.exitStatuses.isEmpty)
        // The ceilings 1, 2, 4 … 256 s, then 300 s (0.999 999 of each).
        #expect(
            t.triggers == [
                "1", "1.999", "3.999", "7.999", "15.999", "31.999", "63.999", "127.999", "255.999", "511.999",
                "811.999", "1111.998", "1411.998",
            ])
        #expect(t.log(.triggerDelivered) == [#"1411.998 level=info msg="wake-up delivered" status=202 reason=change"#])
    }

    @Test(
        "a trigger answered by the relay itself (2xx, 400–403, 429) makes a later 404 an outage",
        arguments: [
            FakeRelay.Answer.status(202), .status(402), .status(400), .status(429, retryAfter: "2"),
        ])
    func afterTriggerAnswer(first: FakeRelay.Answer) {
        // The health check did not answer: only the announce's answer shows the relay is at RELAY_URL.
        let (rig, t) = Self.started(announce: true, health: 503, [first, .status(404)])
        #expect(t.logged(.relayHealthy).isEmpty)
        #expect(t.triggers == ["0"])
        rig.change(1)
        rig.advance(seconds: 200)
        // The same 404 that exits 78 when nothing proved the relay (proxyAnswersProveNothing) is an outage here:
        // logged as one, retried, and the change delivered.
        #expect(rig.exitStatuses.isEmpty)
        #expect(t.logged(.relayEndpointMissing).isEmpty)
        #expect(t.logged(.relayEndpointMissingOutage).count == 1)
        #expect(t.logged(.relayEndpointMissingOutage).first?.fields.contains(.status(404)) == true)
        let records = t.records
        let outage = records.firstIndex { $0.message == .relayEndpointMissingOutage }
        #expect(outage.map { at in records[at...].contains { $0.message == .triggerDelivered } } == true)
        // Nothing is left pending.
        let sent = t.triggers
        rig.advance(seconds: 3600)
        #expect(t.triggers == sent)
    }

    @Test(
        "5xx, 3xx, other 4xx and transport failures prove nothing: a 404 after them still exits 78",
        arguments: [
            FakeRelay.Answer.status(502), .status(503), .status(307), .status(405), .failure(.connect),
            .failure(.timeout),
        ])
    func proxyAnswersProveNothing(first: FakeRelay.Answer) {
        let (rig, t) = Self.started(announce: true, health: 503, [first, .status(404)])
        rig.advance(seconds: 400)
        // The announce, and its retry after the first backoff step.
        #expect(t.triggers == ["0", "0.999"])
        #expect(rig.exitStatuses == [.configuration])
        #expect(t.logged(.relayEndpointMissingOutage).isEmpty)
        #expect(t.logged(.relayEndpointMissing).map(\.level) == [.error])
        #expect(t.logged(.triggerDelivered).isEmpty)
    }

    @Test("stopped during a 404 outage: one last try, then exit 0 with pending=true")
    func stopDuringOutage() {
        let (rig, t) = Self.started(Self.missing)
        rig.change(1)
        rig.advance(seconds: 20)
        let before = t.triggers
        rig.stop()
        rig.advance(seconds: 10)
        #expect(t.triggers == before + ["20"])
        #expect(rig.exitStatuses == [.ok])
        #expect(t.logged(.stopped).last?.fields == [LogField(.pending, .bool(true))])
    }
}
