import NotifyCore

/// Talks to Syncthing's REST API through an `HTTPTransport` (docs/syncthing-api.md says what each rule relies on).
///
/// - Sends `X-API-Key` (works on every version) and never follows redirects.
/// - Tries the endpoint's base URLs, sticks to the one that answered, and re-reads the certificate pin after a TLS
///   failure, as `SyncthingAttempts` chooses; `SyncthingAnswer` classifies each answer.
/// - Bounds every body (`ResponseBodyLimits`): 16 MiB for events, 4 MiB for the lists, 1 MiB elsewhere; a larger
///   body is an error, never a partial parse.
/// - Over a unix socket it sends `Host: localhost`; over TCP the URL's loopback host is the Host header.
/// - Thread-safe: the event long-poll, the sweep and the status check run on different threads.
package final class SyncthingClient: Sendable {
    private let transport: any HTTPTransport
    private struct State {
        var access: SyncthingAccess
        var pin: String?
        var preferredBase = 0
    }
    private let state: ThreadSafe<State>

    package init(transport: any HTTPTransport, access: SyncthingAccess) {
        self.transport = transport
        state = ThreadSafe(State(access: access, pin: Self.pin(for: access)))
    }

    /// Replaces the endpoint and key (after config.xml was re-read).
    package func update(access: SyncthingAccess) {
        state.withLock {
            $0 = State(access: access, pin: Self.pin(for: access))
        }
    }

    package var access: SyncthingAccess { state.withLock { $0.access } }

    /// How many addresses a request may try (`SyncthingEndpoint.baseURLs`), without copying the access out.
    package var addressCount: Int { state.withLock { $0.access.endpoint.baseURLs.count } }

    private static func pin(for access: SyncthingAccess) -> String? {
        guard access.endpoint.tls, let path = access.certificatePath else { return nil }
        return PublicKeyPin.sha256Pin(certificateFile: path)
    }

    /// `GET /rest/system/status`: Device ID and start time.
    /// - Parameter timeout: libcurl's total timeout for each address tried (default `SyncthingTimeouts.request`;
    ///   `--healthcheck` uses less).
    package func status(timeout: Duration = SyncthingTimeouts.request) -> Result<SystemStatus, SyncthingError> {
        statusAnswer(timeout: timeout).result
    }

    /// `status()`, with the connection the answer came on (`HTTPResponse.connection`; nil when unknown).
    package func statusAnswer(
        timeout: Duration = SyncthingTimeouts.request
    ) -> (result: Result<SystemStatus, SyncthingError>, connection: Int?) {
        getAnswer("/rest/system/status", as: SystemStatus.self, timeout: timeout, group: .pollLoop)
    }

    /// `GET /rest/system/version` (for `--status`).
    package func version(timeout: Duration = SyncthingTimeouts.request) -> Result<SystemVersion, SyncthingError> {
        get("/rest/system/version", as: SystemVersion.self, timeout: timeout)
    }

    /// The id of the newest event in the sidecar's filtered subscription (`since=0&limit=1&timeout=0`), or 0.
    /// The first call after a Syncthing start also creates the subscription (docs/syncthing-api.md, the event head).
    package func eventHead() -> Result<Int, SyncthingError> {
        let path = "/rest/events?events=\(WakeRules.eventMask)&since=0&limit=1&timeout=0"
        let head = fetchAnswer(
            path, maxBytes: ResponseBodyLimits.syncthingEvents, timeout: SyncthingTimeouts.request, group: .pollLoop)
        return head.body.flatMap { body in
            do {
                return .success(try SyncthingEvent.decodeArray(body).last?.id ?? 0)
            } catch {
                return .failure(.malformed)
            }
        }
    }

    /// Long-polls the filtered event stream for events after `since`.
    /// - Parameters:
    ///   - since: the cursor (Syncthing per-subscription event id), ≥ 0.
    ///   - timeout: how long Syncthing may hold the request, in whole seconds (clamped to 0 …
    ///     `SyncthingTimeouts.pollWaitSeconds`).
    /// - Returns: the decoded events (possibly empty), or an error; a cut, oversized or unparsable body is an error.
    package func poll(since: Int, timeout: Int = SyncthingTimeouts.pollWaitSeconds) -> Result<
        [SyncthingEvent], SyncthingError
    > {
        pollAnswer(since: since, timeout: timeout).result
    }

    /// `poll(since:timeout:)`, with the connection the answer came on (`HTTPResponse.connection`; nil when unknown).
    /// - Parameter onConnection: only over this kept-alive connection (`HTTPRequest.onConnection`); when it is gone
    ///   the answer is `.transport(.connectionGone)` at once, and no other address is tried.
    /// - Parameter limit: libcurl's total timeout; by default `SyncthingTimeouts.poll(waitSeconds:)` of the wait.
    package func pollAnswer(
        since: Int, timeout: Int = SyncthingTimeouts.pollWaitSeconds, onConnection: Int? = nil, limit: Duration? = nil
    ) -> (result: Result<[SyncthingEvent], SyncthingError>, connection: Int?) {
        let wait = min(max(timeout, 0), SyncthingTimeouts.pollWaitSeconds)
        let path = "/rest/events?events=\(WakeRules.eventMask)&since=\(max(0, since))&timeout=\(wait)"
        let (body, connection) = fetchAnswer(
            path, maxBytes: ResponseBodyLimits.syncthingEvents,
            timeout: limit ?? SyncthingTimeouts.poll(waitSeconds: wait),
            group: .pollLoop, onConnection: onConnection)
        let events = body.flatMap { body -> Result<[SyncthingEvent], SyncthingError> in
            do {
                return .success(try SyncthingEvent.decodeArray(body))
            } catch {
                return .failure(.malformed)
            }
        }
        return (events, connection)
    }

    /// `GET /rest/config/devices` (includes the local device).
    package func devices() -> Result<[ConfiguredDevice], SyncthingError> {
        get("/rest/config/devices", as: [ConfiguredDevice].self, maxBytes: ResponseBodyLimits.syncthingLists)
    }

    /// `GET /rest/config/folders`.
    package func folders() -> Result<[ConfiguredFolder], SyncthingError> {
        get("/rest/config/folders", as: [ConfiguredFolder].self, maxBytes: ResponseBodyLimits.syncthingLists)
    }

    /// `GET /rest/system/connections`: connection state by Device ID (1.19 also lists the local device, never
    /// connected; 1.29 does not: docs/syncthing-versions.md row 8).
    package func connections() -> Result<[String: DeviceConnection], SyncthingError> {
        get("/rest/system/connections", as: SystemConnections.self, maxBytes: ResponseBodyLimits.syncthingLists).map(
            \.connections)
    }

    /// `GET /rest/db/completion?device=D&folder=F`. 404 (paused or unknown folder) comes back as `.notFound`.
    package func completion(device: String, folder: String) -> Result<Completion, SyncthingError> {
        get(
            "/rest/db/completion?device=\(Self.percentEncode(device))&folder=\(Self.percentEncode(folder))",
            as: Completion.self)
    }

    private func get<T: JSONReadable>(
        _ path: String, as type: T.Type, maxBytes: Int = ResponseBodyLimits.syncthing,
        timeout: Duration = SyncthingTimeouts.request
    ) -> Result<T, SyncthingError> {
        getAnswer(path, as: type, maxBytes: maxBytes, timeout: timeout, group: .peers).result
    }

    /// `get`, with the connection the answer came on.
    private func getAnswer<T: JSONReadable>(
        _ path: String, as type: T.Type, maxBytes: Int = ResponseBodyLimits.syncthing,
        timeout: Duration = SyncthingTimeouts.request, group: ConnectionGroup
    ) -> (result: Result<T, SyncthingError>, connection: Int?) {
        let (body, connection) = fetchAnswer(path, maxBytes: maxBytes, timeout: timeout, group: group)
        let value = body.flatMap { body -> Result<T, SyncthingError> in
            decodeJSON(T.self, from: body).map { .success($0) } ?? .failure(.malformed)
        }
        return (value, connection)
    }

    /// Whose kept connections a request reuses (`HTTPRequest.connectionGroup`): the poll loop's requests (status
    /// read, event head, long-poll) keep theirs apart from the peer reads', which run on another thread.
    private enum ConnectionGroup: String {
        case pollLoop = "poll-loop"
        case peers
    }

    /// One GET, carried out as `SyncthingAttempts` chooses: each send, the pin re-read, the address to stay on; with
    /// the connection the last answer came on.
    private func fetchAnswer(
        _ path: String, maxBytes: Int, timeout: Duration, group: ConnectionGroup, onConnection: Int? = nil
    ) -> (body: Result<[UInt8], SyncthingError>, connection: Int?) {
        var (access, pin, preferred) = state.withLock { ($0.access, $0.pin, $0.preferredBase) }
        var attempts = SyncthingAttempts(addresses: access.endpoint.baseURLs.count, preferred: preferred)
        var connection: Int? = nil
        while true {
            switch attempts.step {
            case .send(let address):
                let url = access.endpoint.baseURLs[address] + path
                var request = request(url, access: access, pin: pin, maxBytes: maxBytes, timeout: timeout)
                request.onConnection = onConnection
                request.connectionGroup = group.rawValue
                switch transport.perform(request) {
                case .failure(.connectionGone):
                    // Nothing was sent; the caller reads the status on a new connection before it asks again.
                    return (.failure(.transport(.connectionGone)), nil)
                case .success(let response):
                    connection = response.connection
                    attempts.answered(status: response.status, body: response.body)
                case .failure(let error):
                    connection = nil
                    attempts.failed(error)
                }
            case .rereadPin:
                let changed = refreshPin()
                (access, pin, preferred) = state.withLock { ($0.access, $0.pin, $0.preferredBase) }
                attempts.pinReread(changed: changed, addresses: access.endpoint.baseURLs.count, preferred: preferred)
            case .finished(let result, let stayOn):
                if let stayOn { state.withLock { $0.preferredBase = stayOn } }
                return (result, connection)
            }
        }
    }

    private func request(
        _ url: String, access: SyncthingAccess, pin: String?, maxBytes: Int, timeout: Duration
    ) -> HTTPRequest {
        var headers = [("X-API-Key", access.apiKey), ("Accept", "application/json")]
        if access.endpoint.unixSocketPath != nil { headers.append(("Host", "localhost")) }
        var request = HTTPRequest(
            method: .get, url: url, unixSocketPath: access.endpoint.unixSocketPath, headers: headers,
            maxBodyBytes: maxBytes, connectTimeout: min(SyncthingTimeouts.connect, timeout), totalTimeout: timeout,
            pinnedPublicKey: pin)
        // The API key never goes through a proxy, even for a non-loopback GUI address.
        request.allowProxy = false
        // Nothing here reads a Syncthing answer's headers.
        request.keepsHeaders = false
        return request
    }

    /// Recomputes the pin from the certificate file and swaps it in; true when a readable pin different from the
    /// one in use was swapped in (and the access was not replaced meanwhile).
    private func refreshPin() -> Bool {
        let access = state.withLock { $0.access }
        let fresh = Self.pin(for: access)
        return state.withLock { state in
            guard state.access == access, fresh != nil, fresh != state.pin else { return false }
            state.pin = fresh
            return true
        }
    }

    /// Percent-encodes a query value (RFC 3986 unreserved characters pass as they are).
    static func percentEncode(_ value: String) -> String {
        var out = ""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                out += "%"
                out.unicodeScalars.append(Unicode.Scalar(hex[Int(byte >> 4)]))
                out.unicodeScalars.append(Unicode.Scalar(hex[Int(byte & 15)]))
            }
        }
        return out
    }
}
