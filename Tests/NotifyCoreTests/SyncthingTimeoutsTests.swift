import Testing

@testable import NotifyCore

@Suite("Syncthing time limits: the worst case of one request over its addresses")
struct SyncthingTimeoutsTests {
    /// What a send can come to, and what it may cost: a failure to connect or resolve ends within the connect limit,
    /// anything else (an answer, a timeout, a TLS failure, a cut body) within the request's own limit.
    static let outcomes: [(TransportError?, costsOnlyConnect: Bool)] = [
        (nil, false), (.connect, true), (.dns, true), (.tls, false), (.timeout, false), (.truncated, false),
    ]

    /// The longest run of `SyncthingAttempts` over every possible sequence of outcomes and pin re-reads.
    static func longest(_ attempts: SyncthingAttempts, limit: Duration, addresses: Int) -> Duration {
        switch attempts.step {
        case .finished: return .zero
        case .rereadPin:
            return [true, false].map { changed in
                var next = attempts
                next.pinReread(changed: changed, addresses: addresses, preferred: 0)
                return longest(next, limit: limit, addresses: addresses)
            }.max()!
        case .send:
            return outcomes.map { error, costsOnlyConnect in
                var next = attempts
                if let error { next.failed(error) } else { next.answered(status: 200, body: []) }
                let cost = costsOnlyConnect ? min(SyncthingTimeouts.connect, limit) : limit
                return cost + longest(next, limit: limit, addresses: addresses)
            }.max()!
        }
    }

    @Test(
        "the bound announced to the watchdog covers every path through the addresses and the pin re-read, exactly",
        arguments: [1, 2, 3], [SyncthingTimeouts.request, SyncthingTimeouts.pollRequest])
    func worstCaseIsTight(addresses: Int, limit: Duration) {
        let longest = Self.longest(
            SyncthingAttempts(addresses: addresses, preferred: 0), limit: limit, addresses: addresses)
        #expect(longest == SyncthingTimeouts.worstCase(limit, addresses: addresses))
    }

    @Test("localhost's two addresses: a status read may take 40 s, a long-poll 140 s, not the 15 s and 65 s limits")
    func localhost() {
        #expect(SyncthingTimeouts.worstCase(SyncthingTimeouts.request, addresses: 2) == .seconds(40))
        #expect(SyncthingTimeouts.worstCase(SyncthingTimeouts.pollRequest, addresses: 2) == .seconds(140))
        #expect(SyncthingTimeouts.worstCase(SyncthingTimeouts.request, addresses: 0) == .seconds(30))
    }
}
