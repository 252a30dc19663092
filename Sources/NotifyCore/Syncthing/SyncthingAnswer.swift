/// What one Syncthing REST request came to, classified purely from the status and body Syncthing answered with, or
/// from the transport failure (docs/syncthing-api.md says what each rule relies on).
package enum SyncthingAnswer {
    /// Classifies an answer.
    /// - Parameters:
    ///   - status: the HTTP status code.
    ///   - body: the whole (bounded) response body; only a 403's first bytes are read.
    /// - Returns: the body for a 200. Otherwise the error: `.redirect` for a 3xx (plain HTTP to a TLS GUI);
    ///   `.unauthorized` for a 401 and for a 403 whose body does not start with `Host check` (Syncthing's
    ///   `CSRF Error`: a wrong API key); `.hostCheck` for a 403 `Host check error`; `.notFound` for a 404; and
    ///   `.status(status)` for any other status, other 2xx included.
    package static func classify(status: Int, body: [UInt8]) -> Result<[UInt8], SyncthingError> {
        switch status {
        case 200: .success(body)
        case 300...399: .failure(.redirect)
        case 401: .failure(.unauthorized)
        case 403: .failure(isHostCheck(body) ? .hostCheck : .unauthorized)
        case 404: .failure(.notFound)
        default: .failure(.status(status))
        }
    }

    /// Classifies a request that got no complete answer: always `.transport(error)`; whether another address is
    /// tried or the pin re-read first is `SyncthingAttempts`' choice.
    package static func classify(_ error: TransportError) -> Result<[UInt8], SyncthingError> {
        .failure(.transport(error))
    }

    /// Syncthing's 403 for a Host header that is not a loopback name starts `Host check error`; its other 403 is
    /// `CSRF Error`. The first 64 bytes are enough to tell, whatever the body's length.
    private static func isHostCheck(_ body: [UInt8]) -> Bool {
        String(decoding: body.prefix(64), as: UTF8.self).hasPrefix("Host check")
    }
}
