/// Why a Syncthing REST call failed. Each case maps to a stable, log-safe `ErrorCode`.
package enum SyncthingError: Error, Sendable, Equatable {
    case transport(TransportError)
    /// 401, or 403 `CSRF Error`: the API key is wrong (docs/syncthing-api.md, auth and the API key).
    case unauthorized
    /// 403 `Host check error`: the Host header was not a loopback name (docs/syncthing-api.md, auth and the API
    /// key).
    case hostCheck
    /// A 3xx: plain HTTP to a TLS GUI answers 307 (docs/syncthing-api.md, TLS), so the address or `tls` setting is
    /// wrong.
    case redirect
    /// 404 (unknown or paused folder, missing endpoint).
    case notFound
    /// Any other unexpected status.
    case status(Int)
    /// The body was not the expected JSON.
    case malformed

    package var code: ErrorCode {
        switch self {
        case .transport(let t): t.code
        case .unauthorized: .syncthingUnauthorized
        case .hostCheck: .syncthingHostCheck
        case .redirect: .syncthingRedirect
        case .notFound, .status: .syncthingStatus
        case .malformed: .syncthingMalformed
        }
    }

    /// The HTTP status behind the error, when there was one.
    package var status: Int? {
        switch self {
        case .status(let s): s
        case .notFound: 404
        case .unauthorized: 401
        case .hostCheck: 403
        default: nil
        }
    }
}

extension Result where Failure == SyncthingError {
    /// Syncthing answered, but not with the expected JSON.
    package var isMalformed: Bool { if case .failure(.malformed) = self { true } else { false } }
}
