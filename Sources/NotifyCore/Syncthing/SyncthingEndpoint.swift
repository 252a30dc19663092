/// Where to reach Syncthing's REST API: base URLs to try in order, optionally over a unix-domain socket.
///
/// Built from Syncthing's GUI address (config.xml `<gui><address>` or `STGUIADDRESS`) with `fromGUIAddress(_:tls:)`,
/// or from the sidecar's own `SYNCTHING_API_URL` with `fromAPIURL(_:)`.
package struct SyncthingEndpoint: Sendable, Equatable {
    /// Base URLs without a trailing slash (`http://127.0.0.1:8384`, `https://[::1]:8384`), to try in this order until
    /// one connects. With `unixSocketPath` set there is exactly one, `http://localhost` or `https://localhost`: only
    /// its path goes on the wire, and `Host: localhost` passes Syncthing's host check (docs/syncthing-api.md, GUI
    /// address forms and unix sockets).
    package var baseURLs: [String]
    /// Absolute path of the unix-domain socket to connect through, or nil for TCP.
    package var unixSocketPath: String?
    /// True when Syncthing serves HTTPS here (`tls="true"`, `https://`, `unixs://`). The certificate is then pinned,
    /// never verified against a CA or host name (docs/syncthing-api.md, TLS).
    package var tls: Bool

    package init(baseURLs: [String], unixSocketPath: String? = nil, tls: Bool) {
        self.baseURLs = baseURLs
        self.unixSocketPath = unixSocketPath
        self.tls = tls
    }

    /// Longest unix-socket path that fits `sockaddr_un.sun_path` (108 bytes with the terminating NUL on Linux).
    package static let maxUnixSocketPathBytes = 107

    /// Maps a Syncthing GUI address to the URLs a local client should use (docs/syncthing-api.md, GUI address forms
    /// and unix sockets; Syncthing `lib/config/guiconfiguration.go` `URL()`).
    ///
    /// Accepted forms and their mapping, with `S` = `https` when TLS is on, else `http`:
    /// * `127.0.0.1:P`, `10.0.0.5:P`, `syncthing:P`, `[fd00::1]:P`: the host as given → `S://host:P`.
    /// * `0.0.0.0:P`, `:P` (empty host) → `S://127.0.0.1:P` (Syncthing listens dual-stack; IPv4 loopback answers).
    /// * `[::]:P` → `S://[::1]:P`, then `S://127.0.0.1:P` (an IPv6-disabled host still answers on IPv4).
    /// * `localhost:P` → `S://127.0.0.1:P`, then `S://[::1]:P` (Syncthing binds only the first address the name
    ///   resolves to, 127.0.0.1 in the lab).
    /// * `[::1]:P` → `S://[::1]:P` only (127.0.0.1 is refused).
    /// * `/abs/path.sock` → unix socket, base URL `S://localhost`.
    /// * `STGUIADDRESS` forms: `http://host:P` and `https://host:P` (https forces TLS on), `unix:///abs/path` and
    ///   `unixs:///abs/path` (unixs forces TLS on). Schemes are matched in lower case only, as Syncthing
    ///   does; `http://`/`https://` take no path other than `/`.
    ///
    /// - Parameters:
    ///   - address: the address text, already trimmed.
    ///   - tls: config.xml's `<gui tls="…">`. For an `STGUIADDRESS` value pass `false`: when that variable is set,
    ///     Syncthing takes TLS from its scheme alone and ignores config.xml (`GUIConfiguration.UseTLS()`).
    /// - Returns: nil for an empty address, a missing or invalid port (decimal `1…65535`), a malformed host, a
    ///   relative socket path or one longer than `maxUnixSocketPathBytes`.
    package static func fromGUIAddress(_ address: String, tls: Bool) -> SyncthingEndpoint? {
        guard !address.isEmpty, address.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F }) else { return nil }
        if address.hasPrefix("/") { return socket(address, tls: tls) }
        if address.hasPrefix("unix://") { return socket(String(address.dropFirst("unix://".count)), tls: tls) }
        if address.hasPrefix("unixs://") { return socket(String(address.dropFirst("unixs://".count)), tls: true) }

        var useTLS = tls
        var hostPort = Substring(address)
        for (prefix, forcesTLS) in [("http://", false), ("https://", true)] where address.hasPrefix(prefix) {
            useTLS = useTLS || forcesTLS
            hostPort = hostPort.dropFirst(prefix.count)
            if let slash = hostPort.firstIndex(of: "/") {
                guard hostPort[slash...] == "/" else { return nil }
                hostPort = hostPort[..<slash]
            }
            guard !hostPort.contains("@"), !hostPort.contains("?"), !hostPort.contains("#") else { return nil }
        }
        guard let (host, port) = HostPort.split(hostPort, requirePort: true), let port else { return nil }

        let scheme = useTLS ? "https" : "http"
        let hosts: [String]
        let bare = host.hasPrefix("[") ? Substring(host.dropFirst().dropLast()) : Substring(host)
        if host.isEmpty || host == "0.0.0.0" {
            hosts = ["127.0.0.1"]
        } else if host.hasPrefix("["), let bytes = IPAddress.ipv6Bytes(bare), bytes.allSatisfy({ $0 == 0 }) {
            hosts = ["[::1]", "127.0.0.1"]
        } else if host.lowercased() == "localhost" {
            hosts = ["127.0.0.1", "[::1]"]
        } else {
            hosts = [host]
        }
        return SyncthingEndpoint(baseURLs: hosts.map { "\(scheme)://\($0):\(port)" }, tls: useTLS)
    }

    /// Parses the sidecar's `SYNCTHING_API_URL` (README.md, "Environment": set for a sibling container, e.g.
    /// `http://syncthing:8384`).
    ///
    /// Accepts an `http://` or `https://` URL with a host and optional port, whose path is empty or `/`, with no
    /// user name, query or fragment; or an absolute unix-socket path (`/…`, also `unix:///…` and, for TLS over the
    /// socket, `unixs:///…`). The host is used as given: an explicit URL is not remapped the way a GUI listen address
    /// is.
    /// - Returns: nil when the value does not fit; `Configuration.parse` reports why.
    package static func fromAPIURL(_ value: String) -> SyncthingEndpoint? {
        try? parseAPIURL(value).get()
    }

    static func parseAPIURL(_ value: String) -> Result<SyncthingEndpoint, ConfigurationError.Problem> {
        guard value.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F }) else { return .failure(.whitespace) }
        if value.hasPrefix("/") || value.hasPrefix("unix://") || value.hasPrefix("unixs://") {
            guard let endpoint = fromGUIAddress(value, tls: false) else { return .failure(.badSocketPath) }
            return .success(endpoint)
        }
        guard let parts = URLParts(value) else { return .failure(.notAURL) }
        guard parts.scheme == "http" || parts.scheme == "https" else { return .failure(.unsupportedScheme) }
        if let problem = parts.commonProblem { return .failure(problem) }
        guard parts.path.isEmpty || parts.path == "/" else { return .failure(.hasPath) }
        return .success(
            SyncthingEndpoint(baseURLs: ["\(parts.scheme)://\(parts.authority)"], tls: parts.scheme == "https"))
    }

    private static func socket(_ path: String, tls: Bool) -> SyncthingEndpoint? {
        guard path.hasPrefix("/"), path.utf8.count <= maxUnixSocketPathBytes else { return nil }
        return SyncthingEndpoint(
            baseURLs: [tls ? "https://localhost" : "http://localhost"], unixSocketPath: path, tls: tls)
    }
}

extension URLParts {
    /// The first problem shared by RELAY_URL and SYNCTHING_API_URL rules: user info, query, fragment, no host.
    var commonProblem: ConfigurationError.Problem? {
        if hasUserInfo { return .userInfo }
        if hasQuery { return .query }
        if hasFragment { return .fragment }
        if host.isEmpty { return .noHost }
        return nil
    }
}
