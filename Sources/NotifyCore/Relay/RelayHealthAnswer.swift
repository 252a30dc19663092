/// What the relay's `GET /api/v1/health` came to, classified purely from its status and body: the verdict the engine
/// reads at start-up, and the relay's version for `--doctor` to show.
package struct RelayHealthAnswer: Sendable, Equatable {
    /// The verdict: `.ok` for a 200 whose body is `RelayHealthBody` with `"status":"ok"`; `.endpointMissing` for a
    /// 404; else `.unhealthy` with the status (nil after a transport failure) and why.
    package var health: Engine.RelayHealth
    /// The relay's `"version"` when the verdict is `.ok` and the version is safe to show (`safeVersion(_:)`), else
    /// nil. Display only: it never changes the verdict.
    package var version: String?

    package init(_ health: Engine.RelayHealth, version: String? = nil) {
        self.health = health
        self.version = version
    }

    /// Classifies an answer.
    /// - Parameters:
    ///   - status: the HTTP status code.
    ///   - body: the whole (bounded) response body.
    /// - Returns: `.ok` with the safe version; `.endpointMissing` for a 404; `.unhealthy(status:error:)` with
    ///   `ErrorCode.relayUnhealthy` for any other status, or a 200 whose body is not JSON with `"status":"ok"`.
    package static func classify(status: Int, body: [UInt8]) -> RelayHealthAnswer {
        if status == 404 { return RelayHealthAnswer(.endpointMissing) }
        guard status == 200, let parsed = decodeJSON(RelayHealthBody.self, from: body), parsed.status == "ok" else {
            return RelayHealthAnswer(.unhealthy(status: status, error: .relayUnhealthy))
        }
        return RelayHealthAnswer(.ok, version: safeVersion(parsed.version))
    }

    /// A request that got no answer (DNS, connect, TLS, timeout, cut body): unhealthy without a status, with the
    /// transport failure's code.
    package static func transportFailure(_ code: ErrorCode) -> RelayHealthAnswer {
        RelayHealthAnswer(.unhealthy(status: nil, error: code))
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
}
