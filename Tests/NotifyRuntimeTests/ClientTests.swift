import Foundation
import NotifyCore
import Testing

@testable import NotifyRuntime
@testable import NotifyTestSupport

@Suite("Syncthing and relay clients against a scripted transport")
struct ClientTests {
    static let myID = "27CDMTM-YXY5LTB-36HECI7-PHRY24X-M3PY26F-GAVITON-Z7JEEZ2-X5GOIQA"

    static func access(_ bases: [String] = ["http://127.0.0.1:8384"], socket: String? = nil) -> SyncthingAccess {
        SyncthingAccess(
            endpoint: SyncthingEndpoint(baseURLs: bases, unixSocketPath: socket, tls: false), apiKey: "k3y",
            certificatePath: nil, source: .configFile, keySource: .configFile, configFilePath: nil)
    }

    @Test("status sends X-API-Key and parses myID and startTime")
    func status() throws {
        let t = ScriptedTransport()
        t.expect(
            path: "/rest/system/status", status: 200,
            body: #"{"myID":"\#(Self.myID)","startTime":"2026-11-30T00:47:14Z","uptime":1}"#)
        let client = SyncthingClient(transport: t, access: Self.access())
        let st = try client.status().get()
        #expect(st.myID == Self.myID)
        #expect(st.startTime == "2026-11-30T00:47:14Z")
        let req = try #require(t.seen.first)
        #expect(req.headers.contains { $0.0 == "X-API-Key" && $0.1 == "k3y" })
        #expect(req.url == "http://127.0.0.1:8384/rest/system/status")
        #expect(req.maxBodyBytes <= 1 << 20)
        // The API key never goes through a proxy.
        #expect(!req.allowProxy)
        t.verifyDone()
    }

    @Test("the long-poll uses the one filter, since, an explicit timeout ≤ 50 s and a longer client timeout")
    func poll() throws {
        let t = ScriptedTransport()
        t.expect(path: "/rest/events", status: 200, body: "[]")
        let client = SyncthingClient(transport: t, access: Self.access())
        #expect(try client.poll(since: 42, timeout: 999).get().isEmpty)
        let req = try #require(t.seen.first)
        #expect(
            req.url
                == "http://127.0.0.1:8384/rest/events?events=LocalIndexUpdated,FolderCompletion,ConfigSaved&since=42&timeout=50"
        )
        #expect(req.totalTimeout > .seconds(50))
        #expect(req.maxBodyBytes == 16 << 20)
    }

    @Test("head start asks for the newest event only")
    func head() throws {
        let t = ScriptedTransport()
        t.expect(
            path: "/rest/events", status: 200,
            body: #"[{"id":7,"globalID":9,"time":"x","type":"FolderCompletion","data":{}}]"#)
        let client = SyncthingClient(transport: t, access: Self.access())
        #expect(try client.eventHead().get() == 7)
        #expect(t.seen[0].url.hasSuffix("since=0&limit=1&timeout=0"))
    }

    @Test(
        "status codes map to errors",
        arguments: [
            (401, "Not Authorized", SyncthingError.unauthorized), (403, "CSRF Error\n", .unauthorized),
            (403, "Host check error\n", .hostCheck), (307, "", .redirect), (404, "no such folder", .notFound),
            (500, "boom", .status(500)), (200, "{not json", .malformed),
        ])
    func errors(status: Int, body: String, expected: SyncthingError) {
        let t = ScriptedTransport()
        t.expect(path: "/rest/system/status", status: status, body: body)
        let client = SyncthingClient(transport: t, access: Self.access())
        #expect(client.status() == .failure(expected))
    }

    @Test(
        "a cut or oversized poll is an error, never a partial result",
        arguments: [TransportError.truncated, .bodyTooLarge, .timeout])
    func transportErrors(error: TransportError) {
        let t = ScriptedTransport()
        t.expect(.failure(error)) { _ in true }
        let client = SyncthingClient(transport: t, access: Self.access())
        #expect(client.poll(since: 1) == .failure(.transport(error)))
    }

    @Test("localhost: 127.0.0.1 refused → [::1] tried, and then preferred")
    func fallback() throws {
        let t = ScriptedTransport()
        t.expect(.failure(.connect)) { $0.url.hasPrefix("http://127.0.0.1:8384/") }
        t.expect(path: "/rest/system/status", status: 200, body: #"{"myID":"x","startTime":"t"}"#)
        t.expect(path: "/rest/system/status", status: 200, body: #"{"myID":"x","startTime":"t"}"#)
        let client = SyncthingClient(transport: t, access: Self.access(["http://127.0.0.1:8384", "http://[::1]:8384"]))
        _ = try client.status().get()
        _ = try client.status().get()
        #expect(t.seen.map(\.url).map { $0.hasPrefix("http://[::1]") } == [false, true, true])
        t.verifyDone()
    }

    @Test("unix socket: the socket path is passed and Host is localhost")
    func socket() throws {
        let t = ScriptedTransport()
        t.expect(path: "/rest/system/status", status: 200, body: #"{"myID":"x","startTime":"t"}"#)
        let client = SyncthingClient(
            transport: t, access: Self.access(["http://localhost"], socket: "/run/st/gui.sock"))
        _ = try client.status().get()
        #expect(t.seen[0].unixSocketPath == "/run/st/gui.sock")
        #expect(t.seen[0].headers.contains { $0.0 == "Host" && $0.1 == "localhost" })
    }

    @Test("completion query values are percent-encoded")
    func completionEncoding() throws {
        let t = ScriptedTransport()
        t.expect(
            path: "/rest/db/completion", status: 200,
            body:
                #"{"completion":100,"needBytes":0,"needItems":0,"needDeletes":0,"globalBytes":0,"globalItems":0,"sequence":1}"#
        )
        let client = SyncthingClient(transport: t, access: Self.access())
        #expect(try client.completion(device: Self.myID, folder: "a b&c/d").get().inSync)
        #expect(t.seen[0].url.hasSuffix("folder=a%20b%26c%2Fd"))
    }

    @Test("the sweep asks connections and each shared pair's completion, and skips a paused folder's 404")
    func sweep() throws {
        let t = ScriptedTransport()
        let b = "3QS6B4R-BPY5SWQ-47G2S54-F46T34Y-3Z3C33C-FPJLDKZ-CWKDRFD-G4XJAAD"
        t.expect(
            path: "/rest/config/devices", status: 200,
            body: #"[{"deviceID":"\#(Self.myID)","paused":false},{"deviceID":"\#(b)","paused":false}]"#)
        t.expect(
            path: "/rest/config/folders", status: 200,
            body:
                #"[{"id":"vault","paused":false,"devices":[{"deviceID":"\#(Self.myID)"},{"deviceID":"\#(b)"}]},{"id":"notes","devices":[{"deviceID":"\#(b)"}]}]"#
        )
        t.expect(
            path: "/rest/system/connections", status: 200,
            body: #"{"connections":{"\#(b)":{"connected":false,"paused":false}}}"#)
        t.expect(path: "folder=notes", status: 404, body: "folder is paused")
        t.expect(
            path: "folder=vault", status: 200,
            body: #"{"needBytes":18,"needItems":2,"needDeletes":1,"remoteState":"unknown"}"#)
        let client = SyncthingClient(transport: t, access: Self.access())
        var tracker = PeerTracker(rules: WakeRules(watchedFolders: []))
        tracker.setConfig(
            myID: Self.myID, devices: try client.devices().get(), folders: try client.folders().get())
        let observed = ServiceIO.observe(tracker.sweepPairs, client: client)
        #expect(observed.malformed.isEmpty)
        let observations = try #require(observed.observations)
        #expect(observations.map(\.pair.folder) == ["vault"])
        #expect(observations.first?.completion.remoteState == .unknown)
        #expect(tracker.absorb(observations) == 1)
        t.verifyDone()
    }

    @Test("trigger sends exactly {\"device_id\": …} as JSON and nothing else")
    func triggerBody() throws {
        let t = ScriptedTransport()
        t.expect(path: "/api/v1/trigger", status: 202, body: #"{"status":"accepted","devices_notified":1}"#)
        let relay = RelayClient(transport: t, baseURL: "https://relay.example", clock: ManualRuntime())
        #expect(relay.trigger(deviceID: Self.myID) == .delivered(status: 202))
        let req = try #require(t.seen.first)
        #expect(req.method == .post)
        #expect(req.url == "https://relay.example/api/v1/trigger")
        #expect(String(decoding: req.body ?? [], as: UTF8.self) == "{\"device_id\": \"\(Self.myID)\"}")
        #expect(req.headers.contains { $0.0 == "Content-Type" && $0.1 == "application/json" })
        #expect(req.pinnedPublicKey == nil)
        #expect(req.keepStatusOfOversizedBody)
    }

    @Test("relay requests carry RelayTimeouts; a shorter trigger limit (shutdown) also caps the connect")
    func relayLimits() throws {
        let t = ScriptedTransport()
        t.expect(path: "/api/v1/health", status: 200, body: #"{"status":"ok"}"#)
        t.expect(path: "/api/v1/trigger", status: 202)
        t.expect(path: "/api/v1/trigger", status: 202)
        let relay = RelayClient(transport: t, baseURL: "https://relay.example", clock: ManualRuntime())
        _ = relay.health()
        _ = relay.trigger(deviceID: Self.myID)
        _ = relay.trigger(deviceID: Self.myID, timeout: .seconds(3))
        let limits = t.seen.map { [$0.connectTimeout, $0.totalTimeout] }
        #expect(
            limits == [
                [RelayTimeouts.connect, RelayTimeouts.request], [RelayTimeouts.connect, RelayTimeouts.request],
                [.seconds(3), .seconds(3)],
            ])
        #expect(RelayTimeouts.connect < RelayTimeouts.request)
        #expect(Engine.Settings(policy: WakePolicy.Settings(relayWindow: nil)).relayTimeout == RelayTimeouts.request)
        t.verifyDone()
    }

    @Test("trigger outcomes: Retry-After is read, transport failures are transient")
    func triggerOutcomes() {
        let t = ScriptedTransport()
        t.expect(path: "/api/v1/trigger", status: 429, headers: ["retry-after": "12"])
        t.expect(.failure(.dns)) { _ in true }
        t.expect(path: "/api/v1/trigger", status: 404)
        let relay = RelayClient(transport: t, baseURL: "https://relay.example", clock: ManualRuntime())
        #expect(relay.trigger(deviceID: Self.myID) == .rateLimited(retryAfter: .seconds(12)))
        #expect(relay.trigger(deviceID: Self.myID) == .transient(status: nil, error: .transportDNS))
        #expect(relay.trigger(deviceID: Self.myID) == .endpointMissing)
    }

    @Test("health: only 200 with status ok is healthy; 404 is the missing endpoint")
    func health() {
        let t = ScriptedTransport()
        t.expect(path: "/api/v1/health", status: 200, body: #"{"status":"ok","version":"1.3.2"}"#)
        t.expect(path: "/api/v1/health", status: 200, body: #"{"status":"degraded"}"#)
        t.expect(path: "/api/v1/health", status: 404)
        t.expect(path: "/api/v1/health", status: 200, body: "<html>")
        t.expect(path: "/api/v1/health", status: 200, body: #"{"status":"ok","version":"1.3\u001b[31m"}"#)
        t.expect(path: "/api/v1/health", status: 200, body: #"{"status":"ok"}"#)
        let relay = RelayClient(transport: t, baseURL: "https://relay.example", clock: ManualRuntime())
        #expect(relay.health() == RelayHealthAnswer(.ok, version: "1.3.2"))
        #expect(relay.health() == RelayHealthAnswer(.unhealthy(status: 200, error: .relayUnhealthy)))
        #expect(relay.health() == RelayHealthAnswer(.endpointMissing))
        #expect(relay.health() == RelayHealthAnswer(.unhealthy(status: 200, error: .relayUnhealthy)))
        // The version is display-only: an unsafe or missing one is dropped, the relay is still healthy.
        #expect(relay.health() == RelayHealthAnswer(.ok, version: nil))
        #expect(relay.health() == RelayHealthAnswer(.ok, version: nil))
    }
}

@Suite("Syncthing TLS pin follows https-cert.pem")
struct PinRefreshTests {
    static func makeCertificate(at path: String) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        p.arguments = [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=vm",
            "-days", "2", "-keyout", path + ".key", "-out", path,
        ]
        p.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try p.run()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
    }

    @Test("a TLS failure after the certificate was regenerated re-reads it and retries with the new pin")
    func regeneratedCertificate() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let cert = dir.file("https-cert.pem")
        try Self.makeCertificate(at: cert)
        let oldPin = try #require(PublicKeyPin.sha256Pin(certificateFile: cert))
        let access = SyncthingAccess(
            endpoint: SyncthingEndpoint(baseURLs: ["https://127.0.0.1:8384"], tls: true), apiKey: "k",
            certificatePath: cert, source: .configFile, keySource: .configFile, configFilePath: nil)
        let t = ScriptedTransport()
        let client = SyncthingClient(transport: t, access: access)
        // Syncthing regenerates its certificate (near expiry, or the user swapped it).
        try FileManager.default.removeItem(atPath: cert)
        try Self.makeCertificate(at: cert)
        let newPin = try #require(PublicKeyPin.sha256Pin(certificateFile: cert))
        #expect(newPin != oldPin)
        t.expect(.failure(.tls)) { $0.pinnedPublicKey == oldPin }
        t.expect(.success(HTTPResponse(status: 200, body: Array(#"{"myID":"x","startTime":"t"}"#.utf8)))) {
            $0.pinnedPublicKey == newPin
        }
        #expect(try client.status().get().startTime == "t")
        t.verifyDone()
    }

    @Test("an unchanged certificate does not retry a TLS failure")
    func unchangedCertificate() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let cert = dir.file("https-cert.pem")
        try Self.makeCertificate(at: cert)
        let access = SyncthingAccess(
            endpoint: SyncthingEndpoint(baseURLs: ["https://127.0.0.1:8384"], tls: true), apiKey: "k",
            certificatePath: cert, source: .configFile, keySource: .configFile, configFilePath: nil)
        let t = ScriptedTransport()
        t.expect(.failure(.tls)) { _ in true }
        let client = SyncthingClient(transport: t, access: access)
        #expect(client.status() == .failure(.transport(.tls)))
        t.verifyDone()
    }
}
