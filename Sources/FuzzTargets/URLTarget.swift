import NotifyCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One URL or address (the whole input as text) through `URLParts`, `hostIsLoopback` and `SyncthingEndpoint`.
///
/// Invariants: `URLParts` accepts printable ASCII only, and what it accepts has a lower-case scheme, a port in
/// 1…65535, a path that is empty or starts with `/`, a bracketed host only when the C library's `inet_pton` reads it
/// as IPv6, and renders back to a URL that parses the same; `hostIsLoopback` agrees with an oracle built on
/// `inet_pton` (127.0.0.0/8, `::1`, `::ffff:127.x.x.x`, `localhost`), for the input and for a parsed URL's host; a
/// GUI address maps to `http`/`https` base URLs with a port that `URLParts` accepts, or to one absolute socket path of
/// at most `SyncthingEndpoint.maxUnixSocketPathBytes` bytes; and a `SYNCTHING_API_URL` value renders back to itself.
func fuzzURL(_ input: [UInt8], _ check: inout InvariantCheck) {
    let text = String(decoding: input, as: UTF8.self)
    check.expect(
        hostIsLoopback(text) == loopbackOracle(text),
        "hostIsLoopback(\(text.debugDescription)) disagrees with inet_pton")

    if let parts = URLParts(text) {
        check.expect(text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "accepted a byte outside printable ASCII")
        check.expect(
            !parts.scheme.isEmpty && parts.scheme == parts.scheme.lowercased(), "scheme \(parts.scheme) not lower case")
        check.expect(parts.port.map { (1...65535).contains($0) } ?? true, "port \(String(describing: parts.port))")
        check.expect(parts.path.isEmpty || parts.path.hasPrefix("/"), "path \(parts.path)")
        if parts.host.hasPrefix("[") {
            check.expect(ipv6(parts.host.dropFirst().dropLast()) != nil, "accepted IPv6 host \(parts.host)")
        }
        check.expect(
            hostIsLoopback(parts.host) == loopbackOracle(parts.host),
            "hostIsLoopback(\(parts.host)) disagrees with inet_pton")
        let rendered =
            parts.scheme + "://" + (parts.hasUserInfo ? "user@" : "") + parts.authority + parts.path
            + (parts.hasQuery ? "?" : "") + (parts.hasFragment ? "#" : "")
        check.expect(URLParts(rendered) == parts, "\(rendered) does not parse back to \(parts)")
    }

    for tls in [false, true] {
        guard let endpoint = SyncthingEndpoint.fromGUIAddress(text, tls: tls) else { continue }
        checkEndpoint(endpoint, portRequired: true, &check)
    }
    if let endpoint = SyncthingEndpoint.fromAPIURL(text) {
        checkEndpoint(endpoint, portRequired: false, &check)
        let rendered =
            endpoint.unixSocketPath.map { (endpoint.tls ? "unixs://" : "") + $0 } ?? endpoint.baseURLs.first ?? ""
        check.expect(
            SyncthingEndpoint.fromAPIURL(rendered) == endpoint, "\(rendered) does not parse back to \(endpoint)")
    }
}

/// A GUI address always has a port; a `SYNCTHING_API_URL` may leave it to the scheme.
private func checkEndpoint(_ endpoint: SyncthingEndpoint, portRequired: Bool, _ check: inout InvariantCheck) {
    let scheme = endpoint.tls ? "https" : "http"
    if let path = endpoint.unixSocketPath {
        check.expect(
            path.hasPrefix("/") && path.utf8.count <= SyncthingEndpoint.maxUnixSocketPathBytes,
            "socket path \(path)")
        check.expect(endpoint.baseURLs == ["\(scheme)://localhost"], "socket base URLs \(endpoint.baseURLs)")
        return
    }
    check.expect(!endpoint.baseURLs.isEmpty, "no base URL")
    for url in endpoint.baseURLs {
        let parts = URLParts(url)
        check.expect(
            parts?.scheme == scheme && (parts?.port != nil || !portRequired) && parts?.path == ""
                && parts?.hasUserInfo == false
                && parts?.host.isEmpty == false,
            "base URL \(url) for \(endpoint)")
    }
}

/// The loopback rule of `hostIsLoopback`'s documentation, with the C library reading the addresses.
func loopbackOracle(_ host: String) -> Bool {
    var text = Substring(host)
    if text.hasPrefix("[") && text.hasSuffix("]") && text.count >= 2 { text = text.dropFirst().dropLast() }
    var name = asciiLowercased(text)
    if name.hasSuffix(".") { name.removeLast() }
    if name == "localhost" || name.hasSuffix(".localhost") { return true }
    if let v4 = ipv4(text) { return v4[0] == 127 }
    if let v6 = ipv6(text) {
        if v6 == [UInt8](repeating: 0, count: 15) + [1] { return true }
        return v6[0..<10].allSatisfy { $0 == 0 } && v6[10] == 0xFF && v6[11] == 0xFF && v6[12] == 127
    }
    return false
}

private func asciiLowercased(_ text: Substring) -> String {
    String(decoding: text.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 32 : $0 }, as: UTF8.self)
}

/// `inet_pton(AF_INET, …)`: four bytes, or nil.
func ipv4(_ text: Substring) -> [UInt8]? { pton(AF_INET, text, count: 4) }

/// `inet_pton(AF_INET6, …)`: sixteen bytes, or nil.
func ipv6(_ text: Substring) -> [UInt8]? { pton(AF_INET6, text, count: 16) }

private func pton(_ family: Int32, _ text: Substring, count: Int) -> [UInt8]? {
    guard !text.utf8.contains(0) else { return nil }
    var bytes = [UInt8](repeating: 0, count: count)
    let ok = bytes.withUnsafeMutableBytes { inet_pton(family, String(text), $0.baseAddress) }
    return ok == 1 ? bytes : nil
}
