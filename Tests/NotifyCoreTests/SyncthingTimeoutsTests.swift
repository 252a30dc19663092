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

    @Test("localhost's two addresses: the bound announced to the watchdog covers a fail-over that the limit does not")
    func localhost() throws {
        let endpoint = try #require(SyncthingEndpoint.fromGUIAddress("localhost:8384", tls: true))
        let addresses = endpoint.baseURLs.count
        for limit in [SyncthingTimeouts.request, SyncthingTimeouts.pollRequest] {
            let longest = Self.longest(
                SyncthingAttempts(addresses: addresses, preferred: 0), limit: limit, addresses: addresses)
            // A watchdog told only `limit` would kill a service that is still trying its second address.
            #expect(longest > limit)
            #expect(SyncthingTimeouts.worstCase(limit, addresses: addresses) >= longest)
        }
    }
}
