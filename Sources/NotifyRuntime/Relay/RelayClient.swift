import NotifyCore

/// Talks to the VaultSync relay (SECURITY.md, "What leaves the server"): `GET /api/v1/health` and
/// `POST /api/v1/trigger`. Never follows a redirect; never sends anything but the Device ID.
package struct RelayClient: Sendable {
    /// The service's fatal line for a 404 before the relay answered at RELAY_URL (exit 78); names no URL.
    package static let notFoundMessage = "the relay answered 404 at start-up: there is no relay API at RELAY_URL"
    /// The fix for a relay 404, for that fatal line and the doctor alike.
    package static let notFoundFix =
        "RELAY_URL must be the relay's base URL, without /api/v1 (e.g. RELAY_URL=https://relay.vaultsync.eu); "
        + "check it for typos."

    private let transport: any HTTPTransport
    private let baseURL: String
    private let clock: any HostClock
    private let planted: PlantedDefects

    /// - Parameters:
    ///   - baseURL: RELAY_URL without a trailing slash, e.g. `https://relay.vaultsync.eu`.
    ///   - clock: the process's clocks (the service's runtime); its wall clock, in seconds, is what an HTTP-date
    ///     Retry-After is read against when the answer has no `Date`.
    ///   - planted: planted defects (a simulator build only; none by default).
    package init(
        transport: any HTTPTransport, baseURL: String, clock: any HostClock, planted: PlantedDefects = .none
    ) {
        self.transport = transport
        self.baseURL = baseURL
        self.clock = clock
        self.planted = planted
    }

    /// `GET /api/v1/health`, classified by `RelayHealthAnswer`.
    package func health() -> RelayHealthAnswer {
        let request = HTTPRequest(
            method: .get, url: baseURL + "/api/v1/health", headers: [("Accept", "application/json")],
            maxBodyBytes: ResponseBodyLimits.relay, connectTimeout: RelayTimeouts.connect,
            totalTimeout: RelayTimeouts.request)
        switch transport.perform(request) {
        case .failure(let error): return .transportFailure(error.code)
        case .success(let response): return .classify(status: response.status, body: response.body)
        }
    }

    /// The exact trigger body: `{"device_id": "<Device ID>"}` and nothing else.
    /// - Precondition: `deviceID` is a Syncthing Device ID (A–Z, 2–7 and dashes), so it needs no JSON escaping.
    package static func triggerBody(deviceID: String) -> [UInt8] {
        Array("{\"device_id\": \"\(deviceID)\"}".utf8)
    }

    /// POSTs one wake-up and classifies the answer.
    /// - Parameters:
    ///   - deviceID: this server's Syncthing Device ID.
    ///   - timeout: the whole request's limit (shorter during shutdown).
    package func trigger(deviceID: String, timeout: Duration = RelayTimeouts.request) -> RelayOutcome {
        var request = HTTPRequest(
            method: .post, url: baseURL + "/api/v1/trigger",
            headers: [("Content-Type", "application/json"), ("Accept", "application/json")],
            body: Self.triggerBody(deviceID: deviceID), maxBodyBytes: ResponseBodyLimits.relay,
            connectTimeout: min(RelayTimeouts.connect, timeout), totalTimeout: timeout)
        // The outcome is the status alone: a 202 with an oversized body was still accepted, and sending it again
        // would be a duplicate wake-up.
        request.keepStatusOfOversizedBody = true
        switch transport.perform(request) {
        case .failure(let error):
            return .transportFailure(error.code)
        case .success(let response):
            var retryAfter = response.headers["retry-after"]
            if planted.has(.ignoreRetryAfterDate), let value = retryAfter, RetryAfter.httpDate(value) != nil {
                retryAfter = nil
            }
            return RelayOutcome.classify(
                status: response.status, retryAfter: retryAfter, date: response.headers["date"],
                wallClockNow: clock.unixSeconds())
        }
    }
}
