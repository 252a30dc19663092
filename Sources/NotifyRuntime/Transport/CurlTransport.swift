import CCurl
import NotifyCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The libcurl implementation of `HTTPTransport`.
///
/// Each `perform` gets its own curl easy handle, driven by a curl multi handle (`curl_multi_poll`) that no other
/// running transfer uses, so calls from different threads (the Syncthing event long-poll on one, a peer read on
/// another) never share curl state. Between transfers the transport keeps up to `maxIdleMultiHandles` of those multi
/// handles, and with them their idle connections: a GET reuses a kept-alive HTTP/1.1 connection to the same peer
/// (same host, port, unix socket and TLS settings, as libcurl matches them) instead of connecting again, which at a
/// busy event stream (a long-poll and a status read per answer) saves a TCP connect, accept and close on both sides
/// per request. A POST (the relay trigger) always opens a fresh connection and closes it afterwards
/// (`CURLOPT_FRESH_CONNECT`, `CURLOPT_FORBID_REUSE`): libcurl silently re-sends a request whose reused connection
/// turned out dead, which is harmless for a GET but could deliver a trigger twice.
/// Each response names its connection (`HTTPResponse.connection`): a transfer that opened one
/// (`CURLINFO_NUM_CONNECTS` > 0) takes a new number for its multi handle, and one that reused a kept connection gets
/// the number its handle already had. So the connection a response numbered N came on was open when the transfer
/// that took N ran, and has stayed open since; a server process that exits closes its connections, so two responses
/// numbered N came from the same server process (the poll loop relies on it: docs/syncthing-api.md, Restarts). A
/// multi handle keeps at most one idle connection (`CURLMOPT_MAXCONNECTS` 1): it runs one transfer at a time.
/// `cancel()` sets a shutdown flag, closes the idle connections, and calls `curl_multi_wakeup` on every running
/// transfer: each returns `TransportError.cancelled` within milliseconds, and every later `perform` fails at once with
/// `.cancelled`. The switch is one-way; make a new `CurlTransport` to send again.
///
/// Every request is sent with:
/// * no redirects followed: a 3xx is returned as a response (the Device ID and the API key go only where
///   configured; a 307 from Syncthing means "switch to https": docs/syncthing-api.md, TLS);
/// * only `http` and `https` allowed (`CURLOPT_PROTOCOLS_STR`, also for redirects), so no `file://` or other
///   scheme from a configuration value is ever opened;
/// * `CURLOPT_NOSIGNAL` (no SIGALRM-based resolver timeouts in a multi-threaded process);
/// * the request's connect and total timeouts, in whole milliseconds rounded up and clamped to 1 ms … 2^31-1 ms
///   (curl reads 0 as "no timeout", so a zero or negative `Duration` becomes 1 ms). The total timeout includes a
///   long-poll's wait, so make it longer than the poll's `timeout=` (docs/syncthing-api.md, long-poll and
///   timeouts);
/// * the request's headers in order, no `Expect:` header, no `Accept-Encoding` (bodies arrive as sent), and for a
///   POST no curl-invented `Content-Type` (send one in `headers` if the peer needs it);
/// * no cookies, no netrc, no HSTS or alt-svc cache (libcurl defaults, untouched).
///
/// Proxies: requests to a unix socket, to `localhost`/`*.localhost`, to 127.0.0.0/8 or to `[::1]` never use a
/// proxy (`CURLOPT_NOPROXY "*"`): Syncthing's GUI is local, and sending its API key through a proxy would leak it.
/// Every other host (the relay) honours the usual environment variables as libcurl reads them (`http_proxy`,
/// `HTTPS_PROXY`/`https_proxy`, `ALL_PROXY`, `NO_PROXY`), so a host that can only reach the internet through a
/// proxy keeps working.
///
/// TLS: with `pinnedPublicKey` set (it must start with `sha256//`, see `PublicKeyPin`), the pin is the only check:
/// chain and host name are not verified, because Syncthing's certificate is self-signed with the machine's host
/// name as its only SAN (docs/syncthing-api.md, TLS). Without a pin, libcurl's full verification applies
/// (the relay), against the CA certificates the transport's `TrustStore` names: `CURLOPT_CAINFO` and/or
/// `CURLOPT_CAPATH`, and the same as `CURLOPT_PROXY_CAINFO`/`CURLOPT_PROXY_CAPATH` when the request may go through a
/// proxy. The store is asked only for https URLs without a pin. When it has nothing usable (`.notFound`,
/// `.unusable`) the request fails at once with `.tls`, before anything is sent; there is never an unverified
/// fallback. On macOS (`.platformDefault`) libcurl's own default is left alone.
///
/// Limits: the body is collected up to `maxBodyBytes`; a larger `Content-Length`, or more bytes than that, aborts with
/// `.bodyTooLarge` (docs/syncthing-api.md, bodies: sizes and malformed answers). Response headers are capped at 64 KiB
/// in total (interim 1xx responses included); more also aborts with `.bodyTooLarge`.
///
/// Errors: see `TransportError`. A header name that is not an HTTP token, or a name or value holding CR, LF or NUL,
/// and a URL or socket path holding NUL, are refused before anything is sent with
/// `.other(curlCode: 43)` (CURLE_BAD_FUNCTION_ARGUMENT); a pin without the `sha256//` prefix is refused with `.tls`.
/// A failure of curl's multi interface itself (out of memory) is `.other(curlCode:)` with the negated CURLMcode.
///
/// Requires libcurl ≥ 7.68 (`curl_multi_wakeup`). Before 7.85 the protocol restriction is set with the deprecated
/// `CURLOPT_PROTOCOLS` bitmask instead (see `vs_curl_allow_http_only` in CCurl/shim.h); if neither can be set, the
/// request fails with `.other(curlCode:)` rather than run without it.
package final class CurlTransport: HTTPTransport {
    /// Response headers larger than this in total abort the transfer.
    static let maxHeaderBytes = 64 * 1024

    /// Multi handles kept between transfers (each with its idle connections). The service runs at most two
    /// transfers at once on one transport (the poll and the peers lane on Syncthing's; the relay has its own).
    static let maxIdleMultiHandles = 4

    private struct State {
        var cancelled = false
        var nextID = 0
        /// The number the next fresh connection gets (`HTTPResponse.connection`).
        var nextConnection = 1
        /// Multi handles of running transfers. A handle is in here only while it is alive, and `cancel()` calls
        /// `curl_multi_wakeup` on it under the same lock, so a wake-up never meets a freed handle.
        var running: [Int: MultiHandle] = [:]
        /// Multi handles no transfer uses, the most recently used last. Only `perform` (taking one out) and
        /// `cancel()`/`deinit` (freeing them) touch them, so a handle is never used by two threads at once.
        var idle: [MultiHandle] = []
    }

    /// A curl multi handle shared with `cancel()`. `curl_multi_wakeup` is the one multi call libcurl allows from
    /// another thread; nothing else is ever called through this wrapper.
    private struct MultiHandle: @unchecked Sendable {
        let raw: UnsafeMutableRawPointer
        /// The number of the connection its last transfer used (the one it may keep idle), nil before the first.
        var connection: Int? = nil
        /// `HTTPRequest.connectionGroup` of its last transfer.
        var group: String? = nil
    }

    private let state = ThreadSafe(State())
    private let trustStore: TrustStore

    /// - Parameter trustStore: where verified https requests find their CA certificates (default: this process's
    ///   `SSL_CERT_FILE`/`SSL_CERT_DIR`, else the probed locations; see `TrustStore`).
    package init(trustStore: TrustStore = .process) {
        self.trustStore = trustStore
    }

    /// Ends every running transfer with `.cancelled` and makes all later `perform` calls fail at once with
    /// `.cancelled`. Thread-safe; returns without waiting for the transfers to unwind. A transfer that completes in
    /// the same instant may still return its response.
    package func cancel() {
        let idle = state.withLock { state in
            state.cancelled = true
            for handle in state.running.values { _ = curl_multi_wakeup(handle.raw) }
            defer { state.idle = [] }
            return state.idle
        }
        for handle in idle { curl_multi_cleanup(handle.raw) }
    }

    deinit {
        for handle in state.withLock({ $0.idle }) { curl_multi_cleanup(handle.raw) }
    }

    private var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Sends `request` and blocks the calling thread until the full response arrived, an error occurred, or
    /// `cancel()` was called. May be called concurrently from several threads.
    ///
    /// - Returns: the final response (status 100–599, lower-cased header names, last value wins, chunked trailers
    ///   ignored) or why there is none.
    package func perform(_ request: HTTPRequest) -> Result<HTTPResponse, TransportError> {
        if isCancelled { return .failure(.cancelled) }
        var trust: CATrust? = nil
        if Self.verifiesAgainstCAs(request) {
            trust = trustStore.current()
            switch trust {
            case .found, .platformDefault, nil: break
            case .unusable, .notFound: return .failure(.tls)
            }
        }
        let globalInit = CurlGlobal.initResult
        guard globalInit == 0 else { return .failure(.other(curlCode: globalInit)) }
        guard let easy = curl_easy_init() else { return .failure(.other(curlCode: Int(CURLE_OUT_OF_MEMORY.rawValue))) }
        var headerList: UnsafeMutablePointer<curl_slist>? = nil
        defer {
            curl_easy_cleanup(easy)
            curl_slist_free_all(headerList)
        }
        let context = TransferContext(maxBodyBytes: max(0, request.maxBodyBytes))
        context.keepStatusOfOversizedBody = request.keepStatusOfOversizedBody
        context.keepsHeaders = request.keepsHeaders
        return withExtendedLifetime(context) {
            do throws(TransportError) {
                try Self.configure(easy, for: request, trust: trust, context: context, headerList: &headerList)
            } catch {
                return .failure(error)
            }
            if request.onConnection != nil {
                guard vs_curl_forbid_new_connection(easy) == CURLE_OK else {
                    return .failure(.other(curlCode: Int(CURLE_FAILED_INIT.rawValue)))
                }
            }
            return run(easy, context: context, onConnection: request.onConnection, group: request.connectionGroup)
        }
    }

    /// Drives one configured easy handle to completion on a multi handle no other transfer uses meanwhile.
    private func run(
        _ easy: UnsafeMutableRawPointer, context: TransferContext, onConnection required: Int?, group: String?
    ) -> Result<HTTPResponse, TransportError> {
        var kept: MultiHandle?
        if let required {
            // The handle that kept that connection, or none: then the connection is gone (or in use).
            kept = state.withLock { state in
                state.idle.lastIndex { $0.connection == required }.map { state.idle.remove(at: $0) }
            }
            guard kept != nil else { return .failure(.connectionGone) }
        } else {
            // The group's own handle, else one no group has used; another group's kept connection stays for it.
            kept = state.withLock { state in
                (state.idle.lastIndex { $0.group == group } ?? state.idle.lastIndex { $0.group == nil })
                    .map { state.idle.remove(at: $0) }
            }
        }
        if kept == nil, let fresh = curl_multi_init() {
            // One idle connection at most: the handle runs one transfer at a time.
            _ = vs_curl_multi_setopt_long(fresh, CURLMOPT_MAXCONNECTS, 1)
            kept = MultiHandle(raw: fresh)
        }
        guard var handle = kept else { return .failure(.other(curlCode: Int(CURLE_OUT_OF_MEMORY.rawValue))) }
        let multi = handle.raw
        defer { release(handle) }
        let added = curl_multi_add_handle(multi, easy)
        guard added == CURLM_OK else { return .failure(Self.multiError(added)) }
        defer { curl_multi_remove_handle(multi, easy) }

        let id: Int? = state.withLock { state in
            if state.cancelled { return nil }
            let id = state.nextID
            state.nextID += 1
            state.running[id] = handle
            return id
        }
        guard let id else { return .failure(.cancelled) }
        // Runs before the remove/cleanup defers above, so `cancel()` can no longer reach the handle once it is freed.
        defer { _ = state.withLock { $0.running.removeValue(forKey: id) } }

        var stillRunning: Int32 = 1
        while true {
            let performed = curl_multi_perform(multi, &stillRunning)
            guard performed == CURLM_OK else { return .failure(Self.multiError(performed)) }
            if stillRunning == 0 { break }
            if isCancelled { return .failure(.cancelled) }
            // Sleeps until socket activity, curl's own next timeout, a wake-up from `cancel()`, or 1 s.
            let polled = curl_multi_poll(multi, nil, 0, 1000, nil)
            guard polled == CURLM_OK else { return .failure(Self.multiError(polled)) }
            if isCancelled { return .failure(.cancelled) }
        }

        var result: CURLcode? = nil
        var queued: Int32 = 0
        while let message = curl_multi_info_read(multi, &queued) {
            if message.pointee.msg == CURLMSG_DONE { result = vs_curl_msg_result(message) }
        }
        guard let result else { return .failure(.other(curlCode: Int(CURLE_FAILED_INIT.rawValue))) }
        var connects = 1
        if vs_curl_getinfo_long(easy, CURLINFO_NUM_CONNECTS, &connects) != CURLE_OK || connects > 0
            || handle.connection == nil
        {
            handle.connection = state.withLock { state in
                defer { state.nextConnection += 1 }
                return state.nextConnection
            }
        }
        let connection = handle.connection
        handle.group = group
        var status = 0
        if result != CURLE_OK, context.bodyOverflow, context.keepStatusOfOversizedBody,
            vs_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK, (100...599).contains(status)
        {
            return .success(HTTPResponse(status: status, headers: context.headers, body: context.body))
        }
        // The kept connection was found dead, and opening a new one was refused (`vs_curl_forbid_new_connection`).
        if required != nil, result == CURLE_COULDNT_CONNECT { return .failure(.connectionGone) }
        guard result == CURLE_OK else {
            return .failure(Self.transportError(curlCode: Int(result.rawValue), responseTooLarge: context.tooLarge))
        }
        guard vs_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK, (100...599).contains(status)
        else {
            return .failure(.other(curlCode: Int(CURLE_WEIRD_SERVER_REPLY.rawValue)))
        }
        return .success(
            HTTPResponse(status: status, headers: context.headers, body: context.body, connection: connection))
    }

    /// Keeps a multi handle whose transfer has ended (its easy handle removed) for the next one, with its idle
    /// connections; frees it after `cancel()` or when enough are kept.
    private func release(_ handle: MultiHandle) {
        let kept = state.withLock { state in
            guard !state.cancelled, state.idle.count < Self.maxIdleMultiHandles else { return false }
            state.idle.append(handle)
            return true
        }
        if !kept { curl_multi_cleanup(handle.raw) }
    }

    // MARK: - Configuration

    private static func configure(
        _ easy: UnsafeMutableRawPointer, for request: HTTPRequest, trust: CATrust?, context: TransferContext,
        headerList: inout UnsafeMutablePointer<curl_slist>?
    ) throws(TransportError) {
        try check(vs_curl_setopt_long(easy, CURLOPT_NOSIGNAL, 1))
        try check(vs_curl_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 0))
        try check(vs_curl_allow_http_only(easy))
        try check(vs_curl_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, milliseconds(request.connectTimeout)))
        try check(vs_curl_setopt_long(easy, CURLOPT_TIMEOUT_MS, milliseconds(request.totalTimeout)))

        guard !request.url.utf8.contains(0) else { throw badArgument }
        try check(vs_curl_setopt_str(easy, CURLOPT_URL, request.url))
        if let socket = request.unixSocketPath {
            guard !socket.utf8.contains(0) else { throw badArgument }
            try check(vs_curl_setopt_str(easy, CURLOPT_UNIX_SOCKET_PATH, socket))
        }
        if bypassesProxy(request) {
            try check(vs_curl_setopt_str(easy, CURLOPT_NOPROXY, "*"))
        } else {
            // Through an https proxy, keep the proxy's "200 Connection established" out of the response headers.
            try check(vs_curl_setopt_long(easy, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1))
        }

        // Defaults first, so a caller's header of the same name comes later and is the one curl sends.
        try appendHeader("Expect:", to: &headerList)
        let sendsBody = request.method == .post
        if sendsBody && !request.headers.contains(where: { asciiLowercased($0.0) == "content-type" }) {
            try appendHeader("Content-Type:", to: &headerList)
        }
        for (name, value) in request.headers {
            guard isToken(name), !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
                throw badArgument
            }
            // "Name:" would tell curl to remove the header; "Name;" sends it with an empty value.
            try appendHeader(value.isEmpty ? "\(name);" : "\(name): \(value)", to: &headerList)
        }
        try check(vs_curl_setopt_slist(easy, CURLOPT_HTTPHEADER, headerList))

        switch request.method {
        case .get:
            try check(vs_curl_setopt_long(easy, CURLOPT_HTTPGET, 1))
        case .post:
            // Never over a reused connection, and none kept: see the type's description.
            try check(vs_curl_setopt_long(easy, CURLOPT_FRESH_CONNECT, 1))
            try check(vs_curl_setopt_long(easy, CURLOPT_FORBID_REUSE, 1))
            let body = request.body ?? []
            try check(vs_curl_setopt_long(easy, CURLOPT_POSTFIELDSIZE, body.count))
            if body.isEmpty {
                try check(vs_curl_setopt_str(easy, CURLOPT_COPYPOSTFIELDS, ""))
            } else {
                try check(
                    body.withUnsafeBytes {
                        vs_curl_setopt_ptr(
                            easy, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: $0.baseAddress))
                    })
            }
        }

        if let pin = request.pinnedPublicKey {
            guard pin.hasPrefix("sha256//"), !pin.utf8.contains(0) else { throw .tls }
            try check(vs_curl_setopt_str(easy, CURLOPT_PINNEDPUBLICKEY, pin))
            try check(vs_curl_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 0))
            try check(vs_curl_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 0))
        } else {
            try check(vs_curl_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 1))
            try check(vs_curl_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 2))
            if case .found(let certificates) = trust {
                for (option, value) in caOptions(certificates, proxied: !bypassesProxy(request)) {
                    if let value {
                        guard !value.utf8.contains(0) else { throw .tls }
                        try check(vs_curl_setopt_str(easy, option, value))
                    } else {
                        // NULL switches off a location compiled into libcurl (Debian's), so that exactly the named
                        // certificates are trusted, as in the static build, which has none.
                        try check(vs_curl_setopt_ptr(easy, option, nil))
                    }
                }
            }
        }

        let opaque = Unmanaged.passUnretained(context).toOpaque()
        try check(vs_curl_setopt_writefunction(easy, curlWriteBody))
        try check(vs_curl_setopt_ptr(easy, CURLOPT_WRITEDATA, opaque))
        try check(vs_curl_setopt_headerfunction(easy, curlWriteHeader))
        try check(vs_curl_setopt_ptr(easy, CURLOPT_HEADERDATA, opaque))
    }

    private static let badArgument = TransportError.other(curlCode: Int(CURLE_BAD_FUNCTION_ARGUMENT.rawValue))

    private static func check(_ code: CURLcode) throws(TransportError) {
        guard code == CURLE_OK else { throw .other(curlCode: Int(code.rawValue)) }
    }

    private static func appendHeader(_ line: String, to list: inout UnsafeMutablePointer<curl_slist>?)
        throws(TransportError)
    {
        // On failure curl_slist_append returns NULL and leaves the old list intact (still freed by the caller).
        guard let extended = curl_slist_append(list, line) else {
            throw .other(curlCode: Int(CURLE_OUT_OF_MEMORY.rawValue))
        }
        list = extended
    }

    private static func multiError(_ code: CURLMcode) -> TransportError {
        .other(curlCode: -Int(code.rawValue))
    }
}

/// `curl_global_init` once per process, on first use (thread-safe: Swift runs a static initializer once).
private enum CurlGlobal {
    static let initResult: Int = Int(vs_curl_global_init().rawValue)
}
