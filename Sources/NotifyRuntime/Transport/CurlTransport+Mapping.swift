import CCurl
import NotifyCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The pure parts of `CurlTransport`: how a curl code, a duration, a URL and a request map to what curl is given or
/// what the sidecar acts on (internal for tests).
extension CurlTransport {
    /// Maps a failed CURLcode to the transport error the sidecar acts on. `responseTooLarge` says whether our own
    /// write or header callback aborted the transfer because of a size limit.
    static func transportError(curlCode: Int, responseTooLarge: Bool) -> TransportError {
        if responseTooLarge { return .bodyTooLarge }
        switch curlCode {
        case 5, 6: return .dns  // COULDNT_RESOLVE_PROXY, COULDNT_RESOLVE_HOST
        case 7: return .connect  // COULDNT_CONNECT (refused, unreachable, missing unix socket)
        case 28: return .timeout  // OPERATION_TIMEDOUT (connect or total)
        // SSL_CONNECT_ERROR, SSL_ENGINE_*, SSL_CERTPROBLEM, SSL_CIPHER, PEER_FAILED_VERIFICATION, USE_SSL_FAILED,
        // SSL_CACERT_BADFILE, SSL_SHUTDOWN_FAILED, SSL_CRL_BADFILE, SSL_ISSUER_ERROR, SSL_PINNEDPUBKEYNOTMATCH,
        // SSL_INVALIDCERTSTATUS, SSL_CLIENTCERT
        case 35, 53, 54, 58, 59, 60, 64, 66, 77, 80, 82, 83, 90, 91, 98: return .tls
        // PARTIAL_FILE (a cut chunked body: docs/syncthing-api.md, restarts), GOT_NOTHING, RECV_ERROR (reset, TLS EOF)
        case 18, 52, 56: return .truncated
        default: return .other(curlCode: curlCode)
        }
    }

    /// A `Duration` as curl's `long` milliseconds: rounded up, at least 1 (0 means "never" to curl), at most 2^31-1.
    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        guard seconds > 0 || (seconds == 0 && attoseconds > 0) else { return 1 }
        let cap: Int64 = Int64(Int32.max)
        guard seconds < cap / 1000 else { return Int(cap) }
        let perMillisecond: Int64 = 1_000_000_000_000_000
        var ms = seconds * 1000 + attoseconds / perMillisecond
        if attoseconds % perMillisecond > 0 { ms += 1 }
        return Int(min(max(ms, 1), cap))
    }

    /// True for a request whose peer is verified against CA certificates: an https URL without a pin.
    static func verifiesAgainstCAs(_ request: HTTPRequest) -> Bool {
        request.pinnedPublicKey == nil && asciiLowercased(request.url).hasPrefix("https:")
    }

    /// The curl options that name `certificates`, nil meaning "none" (curl's NULL): CAINFO and CAPATH, plus
    /// PROXY_CAINFO and PROXY_CAPATH when the request may go through an https proxy.
    static func caOptions(_ certificates: CACertificates, proxied: Bool) -> [(CURLoption, String?)] {
        var options: [(CURLoption, String?)] = [
            (CURLOPT_CAINFO, certificates.file), (CURLOPT_CAPATH, certificates.directory),
        ]
        if proxied {
            options += [(CURLOPT_PROXY_CAINFO, certificates.file), (CURLOPT_PROXY_CAPATH, certificates.directory)]
        }
        return options
    }

    /// The proxy policy: a unix socket or a loopback host never goes through a proxy; anything else follows the
    /// proxy environment variables.
    static func bypassesProxy(_ request: HTTPRequest) -> Bool {
        !request.allowProxy || request.unixSocketPath != nil || isLoopback(url: request.url)
    }

    /// Whether the URL's host is a loopback name or address, read with curl's own URL parser so that what is
    /// checked is what curl connects to (the rule itself is `hostIsLoopback`). An unparsable URL counts as not loopback
    /// (curl then refuses it anyway).
    static func isLoopback(url: String) -> Bool {
        guard let handle = curl_url() else { return false }
        defer { curl_url_cleanup(handle) }
        guard curl_url_set(handle, CURLUPART_URL, url, 0) == CURLUE_OK else { return false }
        var host: UnsafeMutablePointer<CChar>? = nil
        guard curl_url_get(handle, CURLUPART_HOST, &host, 0) == CURLUE_OK, let host else { return false }
        defer { curl_free(host) }
        return hostIsLoopback(String(cString: host))
    }

    static func asciiLowercased(_ text: String) -> String {
        String(decoding: text.utf8.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }, as: UTF8.self)
    }

    /// RFC 9110 `token`: the characters an HTTP field name may hold.
    static func isToken(_ name: String) -> Bool {
        !name.isEmpty
            && name.utf8.allSatisfy { byte in
                switch byte {
                case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
                case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
                    UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
                    UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
                    true
                default: false
                }
            }
    }
}
