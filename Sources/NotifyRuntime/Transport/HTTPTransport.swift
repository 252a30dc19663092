import NotifyCore

/// One HTTP request, as the sidecar sends it to Syncthing or to the relay.
///
/// - Important: Redirects are never followed (SECURITY.md, "How each channel is protected": the Device ID and the
///   API key go only where configured; from Syncthing a 307 means "switch to https", which is a configuration
///   matter, not something to chase: docs/syncthing-api.md, TLS).
package struct HTTPRequest: Sendable, Equatable {
    package enum Method: String, Sendable { case get = "GET", post = "POST" }

    package var method: Method
    /// Absolute `http://` or `https://` URL. With `unixSocketPath` set, only its path and query are used on the wire.
    package var url: String
    /// Absolute path of a unix-domain socket to connect through instead of TCP (Syncthing GUI address `/…`).
    package var unixSocketPath: String?
    /// Extra request headers as (name, value) pairs, sent in this order.
    package var headers: [(String, String)]
    /// Request body (POST only).
    package var body: [UInt8]?
    /// Largest response body accepted, in bytes. A larger body aborts the transfer with `TransportError.bodyTooLarge`.
    package var maxBodyBytes: Int
    /// Longest time to establish the connection (TCP + TLS).
    package var connectTimeout: Duration
    /// Longest time for the whole transfer, including a long-poll's wait.
    package var totalTimeout: Duration
    /// `sha256//BASE64` public-key pin (curl's CURLOPT_PINNEDPUBLICKEY). When set, the peer certificate chain and
    /// host name are not checked against a CA store; only the pinned key is accepted (docs/syncthing-api.md, TLS).
    package var pinnedPublicKey: String?
    /// False: never go through an HTTP proxy, whatever the environment says. Syncthing requests carry the API key
    /// and must never reach a proxy, even for a non-loopback GUI address (e.g. a sibling container).
    package var allowProxy: Bool = true
    /// True: a body larger than `maxBodyBytes` still yields the response (status and headers, the body cut at the
    /// limit) instead of `.bodyTooLarge`. For requests whose outcome is the status alone (the relay trigger: a 202
    /// with a huge body was still accepted, and must not be sent again).
    package var keepStatusOfOversizedBody: Bool = false
    /// False: the response's `headers` stay empty (Content-Length is still checked against `maxBodyBytes`). For
    /// requests whose answer is their status and body (every Syncthing request), so that a busy event stream does not
    /// build a dictionary of headers nobody reads for every answer.
    package var keepsHeaders: Bool = true
    /// Only over this kept-alive connection (`HTTPResponse.connection`): when it is gone or busy, the request fails at
    /// once with `TransportError.connectionGone`, sending nothing and opening no new connection.
    package var onConnection: Int?
    /// Requests of one group reuse the connections their group kept, and leave other groups' alone (the poll loop's
    /// status read and the long-poll pinned to its connection, while the peer reads run on another thread). Nil:
    /// any kept connection.
    package var connectionGroup: String?

    /// The limits of a request that sets none of its own: 1 MiB of body, 10 s to connect, 30 s in all. The service's
    /// clients always pass their own (`SyncthingTimeouts`, `RelayTimeouts`); these serve the transport's tests and
    /// requests built only to ask how their URL would be sent (`CurlTransport.verifiesAgainstCAs`).
    package static let defaultMaxBodyBytes = 1 << 20
    package static let defaultConnectTimeout: Duration = .seconds(10)
    package static let defaultTotalTimeout: Duration = .seconds(30)

    package init(
        method: Method = .get, url: String, unixSocketPath: String? = nil, headers: [(String, String)] = [],
        body: [UInt8]? = nil, maxBodyBytes: Int = defaultMaxBodyBytes, connectTimeout: Duration = defaultConnectTimeout,
        totalTimeout: Duration = defaultTotalTimeout, pinnedPublicKey: String? = nil
    ) {
        self.method = method
        self.url = url
        self.unixSocketPath = unixSocketPath
        self.headers = headers
        self.body = body
        self.maxBodyBytes = maxBodyBytes
        self.connectTimeout = connectTimeout
        self.totalTimeout = totalTimeout
        self.pinnedPublicKey = pinnedPublicKey
    }

    package static func == (lhs: HTTPRequest, rhs: HTTPRequest) -> Bool {
        lhs.method == rhs.method && lhs.url == rhs.url && lhs.unixSocketPath == rhs.unixSocketPath
            && lhs.headers.elementsEqual(rhs.headers, by: { $0 == $1 }) && lhs.body == rhs.body
            && lhs.maxBodyBytes == rhs.maxBodyBytes && lhs.connectTimeout == rhs.connectTimeout
            && lhs.totalTimeout == rhs.totalTimeout && lhs.pinnedPublicKey == rhs.pinnedPublicKey
            && lhs.allowProxy == rhs.allowProxy && lhs.keepStatusOfOversizedBody == rhs.keepStatusOfOversizedBody
            && lhs.keepsHeaders == rhs.keepsHeaders && lhs.onConnection == rhs.onConnection
            && lhs.connectionGroup == rhs.connectionGroup
    }
}

/// A complete HTTP response: status, the headers the sidecar reads, and the whole (bounded) body.
package struct HTTPResponse: Sendable, Equatable {
    /// HTTP status code, 100–599.
    package var status: Int
    /// Response headers with lower-cased names. When a name repeats, the last value wins.
    package var headers: [String: String]
    /// The full response body; never more than the request's `maxBodyBytes`.
    package var body: [UInt8]
    /// Which connection carried the response, as the transport numbers them: two responses with the same number came
    /// over the same kept-alive connection, so from the same server process. Nil when the transport cannot tell.
    package var connection: Int?

    package init(status: Int, headers: [String: String] = [:], body: [UInt8] = [], connection: Int? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.connection = connection
    }
}

/// Performs HTTP requests. The production implementation is `CurlTransport` (libcurl); tests use a scripted fake.
///
/// - Important: `perform` blocks the calling thread until the transfer ends. `cancel()` may be called from any
///   thread and makes a running `perform` return `TransportError.cancelled` within milliseconds
///   (libcurl `curl_multi_wakeup`); a `perform` started after `cancel()` fails at once with `.cancelled`.
package protocol HTTPTransport: Sendable {
    func perform(_ request: HTTPRequest) -> Result<HTTPResponse, TransportError>
    func cancel()
}
