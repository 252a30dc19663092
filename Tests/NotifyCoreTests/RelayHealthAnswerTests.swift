import Testing

@testable import NotifyCore

@Suite("Relay health answers classified")
struct RelayHealthAnswerTests {
    @Test(
        "only a 200 with status ok is healthy; 404 is the missing endpoint; the rest is unhealthy with its status",
        arguments: [
            (200, #"{"status":"ok","version":"1.3.2"}"#, RelayHealthAnswer(.ok, version: "1.3.2")),
            (200, #"{"status":"ok"}"#, RelayHealthAnswer(.ok)),
            (200, #"{"status":"ok","version":null}"#, RelayHealthAnswer(.ok)),
            (
                200, #"{"status":"degraded","version":"1.3.2"}"#,
                RelayHealthAnswer(.unhealthy(status: 200, error: .relayUnhealthy))
            ),
            (200, "<html>", RelayHealthAnswer(.unhealthy(status: 200, error: .relayUnhealthy))),
            (200, "", RelayHealthAnswer(.unhealthy(status: 200, error: .relayUnhealthy))),
            (200, #"{"version":"1.3.2"}"#, RelayHealthAnswer(.unhealthy(status: 200, error: .relayUnhealthy))),
            (404, #"{"status":"ok"}"#, RelayHealthAnswer(.endpointMissing)),
            (404, "", RelayHealthAnswer(.endpointMissing)),
            (204, #"{"status":"ok"}"#, RelayHealthAnswer(.unhealthy(status: 204, error: .relayUnhealthy))),
            (301, "", RelayHealthAnswer(.unhealthy(status: 301, error: .relayUnhealthy))),
            (403, "", RelayHealthAnswer(.unhealthy(status: 403, error: .relayUnhealthy))),
            (503, #"{"status":"ok"}"#, RelayHealthAnswer(.unhealthy(status: 503, error: .relayUnhealthy))),
        ])
    func classify(status: Int, body: String, expected: RelayHealthAnswer) {
        #expect(RelayHealthAnswer.classify(status: status, body: Array(body.utf8)) == expected)
    }

    @Test("the version is display-only: an unsafe one is dropped and the relay is still healthy")
    func unsafeVersion() {
        let answer = RelayHealthAnswer.classify(
            status: 200, body: Array(#"{"status":"ok","version":"1.3\u001b[31m"}"#.utf8))
        #expect(answer == RelayHealthAnswer(.ok, version: nil))
    }

    @Test("a transport failure is unhealthy without a status, with the failure's code")
    func transportFailure() {
        #expect(
            RelayHealthAnswer.transportFailure(.transportTLS)
                == RelayHealthAnswer(.unhealthy(status: nil, error: .transportTLS)))
    }
}
