import Testing

@testable import NotifyCore

struct GUIAddressCase: Sendable, CustomTestStringConvertible {
    var address: String
    var tls: Bool
    var expected: SyncthingEndpoint?
    var testDescription: String { "\(address) tls=\(tls)" }

    init(_ address: String, tls: Bool = false, _ urls: [String], socket: String? = nil, expectTLS: Bool? = nil) {
        self.address = address
        self.tls = tls
        self.expected = SyncthingEndpoint(baseURLs: urls, unixSocketPath: socket, tls: expectTLS ?? tls)
    }

    init(invalid address: String) {
        self.address = address
        self.tls = false
        self.expected = nil
    }
}

@Suite struct SyncthingEndpointTests {
    // Mappings measured on real Syncthing (docs/syncthing-api.md, GUI address forms and unix sockets).
    static let mappings: [GUIAddressCase] = [
        .init("127.0.0.1:8384", ["http://127.0.0.1:8384"]),
        .init("127.0.0.1:18384", tls: true, ["https://127.0.0.1:18384"]),
        .init("0.0.0.0:18384", ["http://127.0.0.1:18384"]),
        .init(":8384", ["http://127.0.0.1:8384"]),
        .init("[::]:18384", ["http://[::1]:18384", "http://127.0.0.1:18384"]),
        .init("[0:0:0:0:0:0:0:0]:8384", ["http://[::1]:8384", "http://127.0.0.1:8384"]),
        .init("[::1]:18384", ["http://[::1]:18384"]),
        .init("localhost:18384", ["http://127.0.0.1:18384", "http://[::1]:18384"]),
        .init("LOCALHOST:8384", ["http://127.0.0.1:8384", "http://[::1]:8384"]),
        .init("syncthing:8384", ["http://syncthing:8384"]),  // sibling container
        .init("192.168.1.20:8384", tls: true, ["https://192.168.1.20:8384"]),  // NAS LAN address
        .init("[fd00::20]:8384", ["http://[fd00::20]:8384"]),
        .init("/srv/lab/A/gui.sock", ["http://localhost"], socket: "/srv/lab/A/gui.sock"),
        .init("/srv/lab/A/gui.sock", tls: true, ["https://localhost"], socket: "/srv/lab/A/gui.sock"),
        // STGUIADDRESS forms
        .init("127.0.0.1:18999", ["http://127.0.0.1:18999"]),
        .init("http://127.0.0.1:18999", ["http://127.0.0.1:18999"]),
        .init("http://0.0.0.0:8384/", ["http://127.0.0.1:8384"]),
        .init("https://127.0.0.1:18999", ["https://127.0.0.1:18999"], expectTLS: true),
        .init("https://[::]:8384", ["https://[::1]:8384", "https://127.0.0.1:8384"], expectTLS: true),
        .init("unix:///srv/lab/A/env.sock", ["http://localhost"], socket: "/srv/lab/A/env.sock"),
        .init("unixs:///srv/lab/A/envs.sock", ["https://localhost"], socket: "/srv/lab/A/envs.sock", expectTLS: true),
        .init("[::1]:18999", ["http://[::1]:18999"]),
    ]

    @Test(arguments: mappings)
    func guiAddressMapsToURLsInTryOrder(_ c: GUIAddressCase) {
        #expect(SyncthingEndpoint.fromGUIAddress(c.address, tls: c.tls) == c.expected)
    }

    static let garbage: [String] = [
        "", "127.0.0.1", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:http", "127.0.0.1:-1",
        "::1:8384", "[::1]", "[::1]8384", "[zz::1]:8384", "[::1%eth0]:8384", "sync thing:8384", " 127.0.0.1:8384",
        "http://127.0.0.1:8384/rest", "http://user@127.0.0.1:8384", "http://127.0.0.1", "HTTP://127.0.0.1:8384",
        "ftp://127.0.0.1:21", "unix://relative.sock", "unix://host/abs.sock", "relative/gui.sock",
        "/" + String(repeating: "s", count: 107), "dynamic",
    ]

    @Test(arguments: garbage)
    func garbageGUIAddressIsRejected(_ address: String) {
        #expect(SyncthingEndpoint.fromGUIAddress(address, tls: false) == nil)
    }

    @Test func socketPathAtTheSunPathLimitIsAccepted() {
        let path = "/" + String(repeating: "s", count: 106)
        #expect(SyncthingEndpoint.fromGUIAddress(path, tls: false)?.unixSocketPath == path)
    }

    static let apiURLs: [(String, SyncthingEndpoint)] = [
        ("http://syncthing:8384", .init(baseURLs: ["http://syncthing:8384"], tls: false)),
        ("http://syncthing:8384/", .init(baseURLs: ["http://syncthing:8384"], tls: false)),
        ("HTTPS://10.0.0.2:8384", .init(baseURLs: ["https://10.0.0.2:8384"], tls: true)),
        ("http://localhost:8384", .init(baseURLs: ["http://localhost:8384"], tls: false)),  // explicit: not remapped
        ("http://0.0.0.0:8384", .init(baseURLs: ["http://0.0.0.0:8384"], tls: false)),
        ("http://[::1]:8384", .init(baseURLs: ["http://[::1]:8384"], tls: false)),
        ("https://syncthing.lan", .init(baseURLs: ["https://syncthing.lan"], tls: true)),
        (
            "/run/syncthing/gui.sock",
            .init(baseURLs: ["http://localhost"], unixSocketPath: "/run/syncthing/gui.sock", tls: false)
        ),
        ("unixs:///run/st.sock", .init(baseURLs: ["https://localhost"], unixSocketPath: "/run/st.sock", tls: true)),
    ]

    @Test(arguments: apiURLs)
    func apiURLIsUsedAsGiven(_ value: String, _ expected: SyncthingEndpoint) {
        #expect(SyncthingEndpoint.fromAPIURL(value) == expected)
    }

    static let badAPIURLs: [(String, ConfigurationError.Problem)] = [
        ("syncthing:8384", .notAURL),
        ("ftp://syncthing:8384", .unsupportedScheme),
        ("http://admin:pw@syncthing:8384", .userInfo),
        ("http://syncthing:8384/rest/system/status", .hasPath),
        ("http://syncthing:8384/?x=1", .query),
        ("http://syncthing:8384#top", .fragment),
        ("http://", .noHost),
        ("http://:8384", .noHost),
        ("http://syncthing:0", .notAURL),
        ("http://sync thing:8384", .whitespace),
        ("unix://relative.sock", .badSocketPath),
        ("/" + String(repeating: "x", count: 200), .badSocketPath),
    ]

    @Test(arguments: badAPIURLs)
    func badAPIURLSaysWhy(_ value: String, _ problem: ConfigurationError.Problem) {
        #expect(SyncthingEndpoint.fromAPIURL(value) == nil)
        #expect(SyncthingEndpoint.parseAPIURL(value) == .failure(problem))
    }

    static let loopback: [String] = [
        "127.0.0.1", "127.255.255.254", "127.0.0.2", "localhost", "LocalHost", "localhost.", "::1", "[::1]",
        "0:0:0:0:0:0:0:1", "[0000::0001]", "::ffff:127.0.0.1", "[::ffff:7f00:1]", "foo.localhost", "GUI.LocalHost",
        "a.b.localhost", "foo.localhost.",
    ]
    static let notLoopback: [String] = [
        "", "128.0.0.1", "126.255.255.255", "0177.0.0.1", "127.1", "127.0.0.1.nip.io", "localhost.example.com",
        "notlocalhost", "foo.localhost.com", "localhost..", "::", "[::]", "::2", "[::ffff:10.0.0.1]", "0.0.0.0",
        "example.com", "[::1", "::1]",
    ]

    @Test(arguments: loopback)
    func loopbackHosts(_ host: String) { #expect(hostIsLoopback(host)) }

    @Test(arguments: notLoopback)
    func nonLoopbackHosts(_ host: String) { #expect(!hostIsLoopback(host)) }

    @Test func urlPartsSplitsEverything() throws {
        let parts = try #require(URLParts("HTTPS://u:p@[2001:db8::1]:8443/a/b?q=1#f"))
        #expect(parts.scheme == "https")
        #expect(parts.hasUserInfo)
        #expect(parts.host == "[2001:db8::1]")
        #expect(parts.port == 8443)
        #expect(parts.path == "/a/b")
        #expect(parts.hasQuery && parts.hasFragment)
        #expect(parts.authority == "[2001:db8::1]:8443")
    }
}
