/// An absolute `scheme://authority/path?query#fragment` URL split into the parts this program checks.
///
/// Deliberately small and strict (RFC 3986 §3, restricted): only printable ASCII without spaces is accepted, the
/// host is a DNS name (`A–Z a–z 0–9 - . _`), a dotted-quad IPv4 address or a bracketed IPv6 literal without a zone,
/// and the port is decimal `1…65535`. Percent-encoded hosts and non-ASCII (IDN) hosts are refused; use the punycode
/// form. Nothing is percent-decoded.
package struct URLParts: Sendable, Equatable {
    /// Lower-cased scheme, e.g. `https`.
    package var scheme: String
    /// True when the authority has a `user[:password]@` part.
    package var hasUserInfo: Bool
    /// The host as written; an IPv6 literal keeps its brackets (`[::1]`). Empty when the URL has no host.
    package var host: String
    /// The explicit port, or nil when the URL has none.
    package var port: Int?
    /// The path, `""` or starting with `/`.
    package var path: String
    /// True when a `?` is present (even an empty query).
    package var hasQuery: Bool
    /// True when a `#` is present (even an empty fragment).
    package var hasFragment: Bool

    /// `host` or `host:port`, as it goes into a URL.
    package var authority: String {
        if let port { return "\(host):\(port)" }
        return host
    }

    /// Splits `text`; nil when it is not of the form `scheme://…`, contains a character outside printable ASCII
    /// (space and control characters included), or has a malformed host or port.
    package init?(_ text: String) {
        guard text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
        guard let schemeEnd = text.utf8Range(of: "://") else { return nil }
        let scheme = text[..<schemeEnd.lowerBound]
        guard let first = scheme.utf8.first, isASCIILetter(first),
            scheme.utf8.allSatisfy({
                isASCIILetter($0) || isASCIIDigit($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-")
                    || $0 == UInt8(ascii: ".")
            })
        else { return nil }
        self.scheme = scheme.lowercased()

        let rest = text[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        var hostPort = rest[..<authorityEnd]
        if let at = hostPort.lastIndex(of: "@") {
            hasUserInfo = true
            hostPort = hostPort[hostPort.index(after: at)...]
        } else {
            hasUserInfo = false
        }
        guard let split = HostPort.split(hostPort, requirePort: false) else { return nil }
        host = split.host
        port = split.port

        var tail = rest[authorityEnd...]
        hasFragment = false
        hasQuery = false
        if let hash = tail.firstIndex(of: "#") {
            hasFragment = true
            tail = tail[..<hash]
        }
        if let question = tail.firstIndex(of: "?") {
            hasQuery = true
            tail = tail[..<question]
        }
        path = String(tail)
    }
}

/// `host[:port]` splitting with Go `net.SplitHostPort`-like rules, shared by URL and Syncthing address parsing.
enum HostPort {
    /// - Returns: the host (IPv6 literal with brackets, possibly empty) and the port, or nil when the host has invalid
    ///   characters, an IPv6 literal is malformed, or the port is not decimal `1…65535` (or is missing while
    ///   `requirePort` is true).
    static func split(_ text: Substring, requirePort: Bool) -> (host: String, port: Int?)? {
        let host: Substring
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[...close]
            guard IPAddress.ipv6Bytes(text[text.index(after: text.startIndex)..<close]) != nil else { return nil }
            let after = text[text.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                portText = after.dropFirst()
            }
        } else {
            let colons = text.utf8.count(where: { $0 == UInt8(ascii: ":") })
            guard colons <= 1 else { return nil }
            if let colon = text.firstIndex(of: ":") {
                host = text[..<colon]
                portText = text[text.index(after: colon)...]
            } else {
                host = text
            }
            guard host.utf8.allSatisfy(isHostNameByte) else { return nil }
        }
        var port: Int?
        if let portText {
            guard let value = parsePort(portText) else { return nil }
            port = value
        } else if requirePort {
            return nil
        }
        return (String(host), port)
    }

    /// Decimal `1…65535`, digits only.
    static func parsePort(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 5, text.utf8.allSatisfy(isASCIIDigit), let value = Int(text),
            (1...65535).contains(value)
        else { return nil }
        return value
    }

    private static func isHostNameByte(_ byte: UInt8) -> Bool {
        isASCIILetter(byte) || isASCIIDigit(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
            || byte == UInt8(ascii: "_")
    }
}

/// Numeric IP address parsing (strict textual forms only).
enum IPAddress {
    /// Strict dotted-quad: four decimal octets `0…255` without leading zeros (so `0177.0.0.1`, which `inet_aton`
    /// would read as octal, is not an IPv4 address here).
    static func ipv4Bytes(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard !part.isEmpty, part.utf8.count <= 3, part.utf8.allSatisfy(isASCIIDigit) else { return nil }
            if part.utf8.count > 1 && part.utf8.first == UInt8(ascii: "0") { return nil }
            guard let value = Int(part), value <= 255 else { return nil }
            bytes.append(UInt8(value))
        }
        return bytes
    }

    /// RFC 4291 §2.2 text forms, including `::` compression and a trailing dotted quad; no zone index. Each group is
    /// 1 to 4 hex digits (`hexGroup(_:)`); an empty group exists only as part of one `::`.
    /// - Parameter text: the literal without brackets.
    /// - Returns: 16 bytes, or nil.
    static func ipv6Bytes(_ text: Substring) -> [UInt8]? {
        guard !text.isEmpty, text.utf8.count <= 45 else { return nil }
        var head: [UInt16] = []
        var tail: [UInt16] = []
        var sawDoubleColon = false
        let halves: [Substring]
        if let range = text.utf8Range(of: "::") {
            sawDoubleColon = true
            let left = text[..<range.lowerBound]
            let right = text[range.upperBound...]
            guard !right.utf8Contains("::") else { return nil }
            halves = [left, right]
        } else {
            halves = [text]
        }
        for (index, half) in halves.enumerated() {
            if half.isEmpty { continue }
            let groups = half.split(separator: ":", omittingEmptySubsequences: false)
            var words: [UInt16] = []
            for (groupIndex, group) in groups.enumerated() {
                let isLastGroup = index == halves.count - 1 && groupIndex == groups.count - 1
                if isLastGroup, group.utf8.contains(UInt8(ascii: ".")) {
                    guard let v4 = ipv4Bytes(group) else { return nil }
                    words.append(UInt16(v4[0]) << 8 | UInt16(v4[1]))
                    words.append(UInt16(v4[2]) << 8 | UInt16(v4[3]))
                    continue
                }
                guard let word = hexGroup(group) else { return nil }
                words.append(word)
            }
            if index == 0 { head = words } else { tail = words }
        }
        let total = head.count + tail.count
        if sawDoubleColon {
            guard total <= 7 else { return nil }
        } else {
            guard total == 8 else { return nil }
        }
        let words = head + Array(repeating: 0, count: 8 - total) + tail
        return words.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    }

    /// One RFC 4291 group: exactly 1 to 4 hex digits `[0-9A-Fa-f]`, nothing else (no sign, unlike
    /// `UInt16(_:radix:)`, which takes `+ff` and would make `[::+1]` an address).
    static func hexGroup(_ group: Substring) -> UInt16? {
        guard (1...4).contains(group.utf8.count) else { return nil }
        var value: UInt16 = 0
        for byte in group.utf8 {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt16(digit)
        }
        return value
    }
}

/// True when `host` names the local machine's loopback interface: an IPv4 address in 127.0.0.0/8, the IPv6
/// loopback `::1` (bracketed or not, any text form, or IPv4-mapped `::ffff:127.x.x.x`), `localhost` or any
/// `*.localhost` name (case-insensitive, one optional trailing dot).
///
/// The one loopback rule: RELAY_URL's "plain http only on loopback", and `CurlTransport`'s "never through a proxy".
/// `*.localhost` counts because libcurl itself resolves `localhost` and `*.localhost` to loopback, without asking
/// DNS (measured on libcurl 7.88.1 and 8.14.1: `http://probe.localhost:PORT/` reaches 127.0.0.1 in a namespace with
/// no resolver); Syncthing's host check treats the same names as local.
package func hostIsLoopback(_ host: String) -> Bool {
    var text = Substring(host)
    if text.hasPrefix("[") && text.hasSuffix("]") {
        text = text.dropFirst().dropLast()
    }
    var lower = text.lowercased()
    if lower.hasSuffix(".") { lower.removeLast() }
    if lower == "localhost" || lower.hasSuffix(".localhost") { return true }
    if let v4 = IPAddress.ipv4Bytes(text) { return v4[0] == 127 }
    if let v6 = IPAddress.ipv6Bytes(text) {
        if v6 == [UInt8](repeating: 0, count: 15) + [1] { return true }
        if v6[0..<10].allSatisfy({ $0 == 0 }) && v6[10] == 0xFF && v6[11] == 0xFF { return v6[12] == 127 }
    }
    return false
}

@inline(__always) func isASCIILetter(_ byte: UInt8) -> Bool {
    (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
}

@inline(__always) func isASCIIDigit(_ byte: UInt8) -> Bool {
    byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
}
