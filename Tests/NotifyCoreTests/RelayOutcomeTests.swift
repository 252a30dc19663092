import Testing

@testable import NotifyCore

@Suite("Relay outcomes and Retry-After")
struct RelayOutcomeTests {
    // 2026-11-30T02:00:00Z
    static let now: Int64 = 1_796_004_000

    @Test(
        "status classification",
        arguments: [
            (202, RelayOutcome.delivered(status: 202)), (200, .delivered(status: 200)), (204, .delivered(status: 204)),
            (400, .subscriptionInactive(status: 400)), (401, .subscriptionInactive(status: 401)),
            (402, .subscriptionInactive(status: 402)), (403, .subscriptionInactive(status: 403)),
            (404, .endpointMissing), (301, .transient(status: 301, error: nil)),
            (307, .transient(status: 307, error: nil)),
            (405, .transient(status: 405, error: nil)), (409, .transient(status: 409, error: nil)),
            (500, .transient(status: 500, error: nil)), (503, .transient(status: 503, error: nil)),
            (429, .rateLimited(retryAfter: .seconds(30))),
        ])
    func classify(status: Int, expected: RelayOutcome) {
        #expect(RelayOutcome.classify(status: status, retryAfter: nil, wallClockNow: Self.now) == expected)
    }

    @Test(
        "Retry-After values",
        arguments: [
            ("17", 17), (" 17 ", 17), ("0", 1), ("1", 1), ("3600", 3600), ("3601", 3600),
            ("99999999999999999999", 3600),
            ("Mon, 30 Nov 2026 02:01:30 GMT", 90),  // IMF-fixdate, 90 s ahead
            ("Monday, 30-Nov-26 02:00:45 GMT", 45),  // RFC 850
            ("Mon Nov 30 02:00:10 2026", 10),  // asctime
            ("Mon Nov  3 02:00:10 2026", 1),  // asctime, single-digit day, in the past → clamped
            ("Sun, 06 Nov 1994 08:49:37 GMT", 1),  // long past → 1 s
            ("Fri, 31 Dec 2100 23:59:59 GMT", 3600),  // far future → 1 h
            ("", 30), ("soon", 30), ("-5", 30), ("1.5", 30), ("Mon, 32 Nov 2026 02:01:30 GMT", 30),
            ("Mon, 30 Foo 2026 02:01:30 GMT", 30), ("Mon, 30 Nov 2026 25:01:30 GMT", 30), ("\u{0}\u{1}", 30),
        ])
    func retryAfter(header: String, seconds: Int64) {
        #expect(RetryAfter.delay(header: header, wallClockNow: Self.now) == .seconds(seconds))
        #expect(
            RelayOutcome.classify(status: 429, retryAfter: header, wallClockNow: Self.now)
                == .rateLimited(retryAfter: .seconds(seconds)))
    }

    @Test("missing Retry-After → 30 s")
    func missing() {
        #expect(RetryAfter.delay(header: nil, wallClockNow: Self.now) == .seconds(30))
    }

    @Test("HTTP-date arithmetic matches the Unix epoch")
    func epoch() {
        #expect(RetryAfter.httpDate("Thu, 01 Jan 1970 00:00:00 GMT") == 0)
        #expect(RetryAfter.httpDate("Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
        #expect(RetryAfter.httpDate("Mon, 30 Nov 2026 02:00:00 GMT") == Self.now)
        #expect(RetryAfter.httpDate("Tue, 29 Feb 2028 00:00:00 GMT") == 1_835_395_200)
    }

    @Test("exit statuses: a service manager must not restart on 64 or 78")
    func exitTable() {
        #expect(ExitStatus.allCases.filter(\.preventsRestart).map(\.rawValue) == [64, 78])
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
