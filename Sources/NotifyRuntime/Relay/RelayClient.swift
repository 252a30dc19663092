import NotifyCore

/// Talks to the VaultSync relay (SECURITY.md, "What leaves the server"): `GET /api/v1/health` and
/// `POST /api/v1/trigger`. Never follows a redirect; never sends anything but the Device ID.
package struct RelayClient: Sendable {
    /// Relay response bodies are tiny (`{"status":"accepted","devices_notified":2}`); 64 KiB is generous.
    package static let maxBodyBytes = 64 << 10
    package static let connectTimeout: Duration = .seconds(10)
    package static let requestTimeout: Duration = .seconds(20)

    /// The service's fatal line for a 404 before the relay answered at RELAY_URL (exit 78); names no URL.
    package static let notFoundMessage = "the relay answered 404 at start-up: there is no relay API at RELAY_URL"
    /// The fix for a relay 404, for that fatal line and the doctor alike.
    package static let notFoundFix =
        "RELAY_URL must be the relay's base URL, without /api/v1 (e.g. RELAY_URL=https://relay.vaultsync.eu); "
        + "check it for typos."

    private let transport: any HTTPTransport
    private let baseURL: String

    /// - Parameters:
    ///   - baseURL: RELAY_URL without a trailing slash, e.g. `https://relay.vaultsync.eu`.
    package init(transport: any HTTPTransport, baseURL: String) {
        self.transport = transport
        self.baseURL = baseURL
    }

    /// The result of `GET /api/v1/health`.
    package enum Health: Sendable, Equatable {
        /// 200 with `"status":"ok"`, and the relay's `"version"` when it is a short, safe string (see
        /// `safeVersion(_:)`), else nil. Only `status` is validated; the version is for display (`--doctor`).
        case ok(version: String?)
        /// 404: the endpoint is missing (wrong RELAY_URL).
        case endpointMissing
        /// Anything else: another status (`status`), a body without `"status":"ok"`, or a transport failure.
        case unhealthy(status: Int?, error: ErrorCode?)
    }

    /// `version` when it is 1–32 characters of `A–Z a–z 0–9 . _ + -` (e.g. `1.3.2`, `1.3.2-standin`), else nil, so
    /// that a relay's answer can never put control characters or long text into the doctor's output.
    package static func safeVersion(_ version: String?) -> String? {
        guard let version, (1...32).contains(version.utf8.count) else { return nil }
        let ok = version.utf8.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2E
                || b == 0x5F || b == 0x2B || b == 0x2D
        }
        return ok ? version : nil
    }

    package func health() -> Health {
        let request = HTTPRequest(
            method: .get, url: baseURL + "/api/v1/health", headers: [("Accept", "application/json")],
            maxBodyBytes: Self.maxBodyBytes, connectTimeout: Self.connectTimeout, totalTimeout: Self.requestTimeout)
        switch transport.perform(request) {
        case .failure(let error):
            return .unhealthy(status: nil, error: error.code)
        case .success(let response):
            if response.status == 404 { return .endpointMissing }
            guard response.status == 200, let body = decodeJSON(RelayHealthBody.self, from: response.body),
                body.status == "ok"
            else {
                return .unhealthy(status: response.status, error: .relayUnhealthy)
            }
            return .ok(version: Self.safeVersion(body.version))
        }
    }

    /// The exact trigger body: `{"device_id": "<Device ID>"}` and nothing else.
    /// - Precondition: `deviceID` is a Syncthing Device ID (A–Z, 2–7 and dashes), so it needs no JSON escaping.
    package static func triggerBody(deviceID: String) -> [UInt8] {
        Array("{\"device_id\": \"\(deviceID)\"}".utf8)
    }

    /// True for a well-formed Syncthing Device ID: 8 groups of 7 base32 characters, or the 56 characters alone.
    package static func isDeviceID(_ value: String) -> Bool { DeviceID.isWellFormed(value) }

    /// POSTs one wake-up and classifies the answer.
    /// - Parameters:
    ///   - deviceID: this server's Syncthing Device ID.
    ///   - timeout: the whole request's limit (shorter during shutdown).
    package func trigger(deviceID: String, timeout: Duration = RelayClient.requestTimeout) -> RelayOutcome {
        var request = HTTPRequest(
            method: .post, url: baseURL + "/api/v1/trigger",
            headers: [("Content-Type", "application/json"), ("Accept", "application/json")],
            body: Self.triggerBody(deviceID: deviceID), maxBodyBytes: Self.maxBodyBytes,
            connectTimeout: min(Self.connectTimeout, timeout), totalTimeout: timeout)
        // The outcome is the status alone: a 202 with an oversized body was still accepted, and sending it again
        // would be a duplicate wake-up.
        request.keepStatusOfOversizedBody = true
        switch transport.perform(request) {
        case .failure(let error):
            return .transportFailure(error.code)
        case .success(let response):
            return RelayOutcome.classify(
                status: response.status, retryAfter: response.headers["retry-after"], wallClockNow: wallClockSeconds())
        }
    }
}
