/// Why an HTTP transfer (the runtime's `HTTPTransport.perform`) produced no complete response. Every case has a
/// stable, log-safe `code`. Pure data: the core classifies answers and failures with it.
package enum TransportError: Error, Sendable, Equatable {
    /// The host name did not resolve.
    case dns
    /// The TCP or unix-socket connection was refused or could not be made.
    case connect
    /// The connect or total timeout passed.
    case timeout
    /// TLS failed: handshake, or the pinned public key did not match.
    case tls
    /// The body was larger than the request's `maxBodyBytes`.
    case bodyTooLarge
    /// The connection closed before the full response arrived (e.g. a cut chunked body).
    case truncated
    /// The transport's `cancel()` was called while the transfer was running.
    case cancelled
    /// Any other libcurl failure, with its CURLcode.
    case other(curlCode: Int)
    /// The request was to go over one kept-alive connection (`HTTPRequest.onConnection`), and that connection is
    /// gone (or busy); nothing was sent, and no new connection was opened.
    case connectionGone

    /// Stable log-safe error code, e.g. `transport.timeout`.
    package var code: ErrorCode {
        switch self {
        case .dns: .transportDNS
        case .connect: .transportConnect
        case .timeout: .transportTimeout
        case .tls: .transportTLS
        case .bodyTooLarge: .transportBodyTooLarge
        case .truncated: .transportTruncated
        case .cancelled: .transportCancelled
        case .other: .transportOther
        case .connectionGone: .transportConnectionGone
        }
    }
}
