/// What the relay's `GET /api/v1/health` came to, classified purely from its status and body: the verdict the engine
/// reads at start-up, and the relay's version for `--doctor` to show.
package struct RelayHealthAnswer: Sendable, Equatable {
    /// The verdict: `.ok` for a 200 whose body is `RelayHealthBody` with `"status":"ok"`; `.endpointMissing` for a
    /// 404; else `.unhealthy` with the status (nil after a transport failure) and why.
    package var health: Engine.RelayHealth
    /// The relay's `"version"` when the verdict is `.ok` and the version is safe to show (`ServerVersion.displayable`), else
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
        return RelayHealthAnswer(.ok, version: parsed.version.flatMap(ServerVersion.displayable))
    }

    /// A request that got no answer (DNS, connect, TLS, timeout, cut body): unhealthy without a status, with the
    /// transport failure's code.
    package static func transportFailure(_ code: ErrorCode) -> RelayHealthAnswer {
        RelayHealthAnswer(.unhealthy(status: nil, error: code))
    }
}
