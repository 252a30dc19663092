import Testing

@testable import NotifyCore

/// A relay 404 on virtual time: before the relay has answered at RELAY_URL it is a wrong RELAY_URL
/// (exit 78); after the relay has answered, it is an outage (a proxy answering 404 while the relay's backend is
/// replaced): backed off up to the 5 min cap, the wake-up kept and delivered once the relay answers again.
@Suite("Relay 404 after the relay answered is an outage")
struct RelayOutageTests {
    static func harness(announce: Bool = false) -> PolicyHarness {
        var h = PolicyHarness(.init(debounce: .seconds(1), startupAnnounce: announce, staleRetrigger: nil))
        h.relayLatency = .zero
        h.jitter = 0.999_999
        return h
    }

    static let missing = Array(repeating: RelayOutcome.endpointMissing, count: 12)

    /// Health check ok, started, and one change whose triggers get `script` (then 202).
    static func changeAfterHealthyStart(_ script: [RelayOutcome]) -> PolicyHarness {
        var h = harness()
        h.relayScript = script
        h.send(.relayHealthy)
        h.send(.start)
        h.send(.wake(.change))
        return h
    }

    @Test("health ok, then 404 to a change's trigger: no exit, backoff 1, 2, 4 … s, delivered when the relay is back")
    func afterHealthCheck() {
        var h = Self.changeAfterHealthyStart(Array(Self.missing.prefix(3)))
        #expect(h.policy.relayHasAnswered)
        h.advance(seconds: 60)
        #expect(h.exitStatus == nil)
        #expect(h.sent.count == 4)
        let s = h.sentSeconds
        #expect(abs(s[1] - s[0] - 1) < 0.01)
        #expect(abs(s[2] - s[1] - 2) < 0.01)
        #expect(abs(s[3] - s[2] - 4) < 0.01)
        #expect(h.reasons == [.change, .change, .change, .change])
        let errors = h.logs.filter { $0.level == .error }
        #expect(errors.map(\.message) == Array(repeating: .relayEndpointMissingOutage, count: 3))
        #expect(errors.first?.fields.contains(.status(404)) == true)
        #expect(errors.first?.fields.contains(.code(.relayEndpointMissing)) == true)
        #expect(h.logs.filter { $0.message == .triggerDelivered }.count == 1)
        #expect(!h.policy.hasPendingWake)
    }

    @Test("404 for 30 minutes: the wait grows to the 5 min cap and no further; one delivery after it")
    func capsAtFiveMinutes() {
        var h = Self.changeAfterHealthyStart(Self.missing)
        h.advance(seconds: 3600)
        #expect(h.exitStatus == nil)
        #expect(h.sent.count == 13)
        let gaps = zip(h.sentSeconds, h.sentSeconds.dropFirst()).map { $1 - $0 }
        #expect(gaps.max()! <= 300.01)
        #expect(abs(gaps.last! - 300) < 0.01)
        #expect(h.logs.filter { $0.message == .triggerDelivered }.count == 1)
    }

    @Test(
        "a trigger answered by the relay itself (2xx, 400–403, 429) makes a later 404 an outage",
        arguments: [
            RelayOutcome.delivered(status: 202), .subscriptionInactive(status: 402), .subscriptionInactive(status: 400),
            .rateLimited(retryAfter: .seconds(2)),
        ])
    func afterTriggerAnswer(first: RelayOutcome) {
        var h = Self.harness(announce: true)
        h.relayScript = [first, .endpointMissing]
        h.send(.start)
        #expect(!h.policy.relayHasAnswered)
        h.advance(by: .zero)  // the announce's answer
        #expect(h.policy.relayHasAnswered)
        h.send(.wake(.change))
        h.advance(seconds: 200)
        #expect(h.exitStatus == nil)
        #expect(h.logs.contains { $0.message == .relayEndpointMissingOutage })
        #expect(h.logs.last { $0.message == .triggerDelivered } != nil)
        #expect(!h.policy.hasPendingWake)
    }

    @Test("without a health answer, the first trigger's 404 still exits 78 (a wrong RELAY_URL)")
    func firstTriggerIsConfiguration() {
        var h = Self.harness(announce: true)
        h.relayScript = [.endpointMissing]
        h.send(.start)
        h.advance(seconds: 10)
        #expect(h.exitStatus == .configuration)
        #expect(h.logs.filter { $0.level == .error }.map(\.message) == [.relayEndpointMissing])
    }

    @Test(
        "5xx, 3xx, other 4xx and transport failures prove nothing: a 404 after them still exits 78",
        arguments: [
            RelayOutcome.transient(status: 502, error: nil), .transient(status: 503, error: nil),
            .transient(status: 307, error: nil), .transient(status: 405, error: nil),
            .transient(status: nil, error: .transportConnect), .transient(status: nil, error: .transportTimeout),
        ])
    func proxyAnswersProveNothing(first: RelayOutcome) {
        var h = Self.harness(announce: true)
        h.relayScript = [first, .endpointMissing]
        h.send(.start)
        h.advance(seconds: 400)
        #expect(!h.policy.relayHasAnswered)
        #expect(h.sent.count == 2)
        #expect(h.exitStatus == .configuration)
        #expect(!h.logs.contains { $0.message == .relayEndpointMissingOutage })
    }

    @Test("stopped during a 404 outage: one last try, then exit 0 with pending=true")
    func stopDuringOutage() {
        var h = Self.changeAfterHealthyStart(Self.missing)
        h.advance(seconds: 20)
        let before = h.sent.count
        h.send(.stop)
        h.advance(seconds: 10)
        #expect(h.sent.count == before + 1)
        #expect(h.exitStatus == .ok)
        let stopped = h.logs.last { $0.message == .stopped }
        #expect(stopped?.fields == [LogField(.pending, .bool(true))])
    }

    @Test(
        "only the relay's own trigger answers count",
        arguments: [
            (RelayOutcome.delivered(status: 200), true), (.subscriptionInactive(status: 403), true),
            (.rateLimited(retryAfter: .seconds(30)), true), (.endpointMissing, false),
            (.transient(status: 500, error: nil), false), (.transient(status: 301, error: nil), false),
            (.transient(status: nil, error: .transportDNS), false),
        ])
    func ownAnswers(outcome: RelayOutcome, own: Bool) {
        #expect(outcome.isRelaysOwnAnswer == own)
    }
}
