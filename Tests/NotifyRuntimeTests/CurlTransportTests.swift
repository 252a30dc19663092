import CCurl
import Foundation
import NotifyCore
import NotifyTestSupport
import Testing

@testable import NotifyRuntime

/// CurlTransport against a real loopback server (Tests/Doubles/fake_server.py): what only real sockets show.
@Suite struct CurlTransportTests {
    // MARK: Round trips

    @Test func statusHeadersAndBodyRoundTrip() throws {
        let server = try FakeServer()
        let query =
            "status=418&header=X-Custom:%20%20Some%20Value%20%20&header=Content-Type:%20text/plain"
            + "&header=X-Dup:%20first&header=X-Dup:%20second&body=short%20and%20stout"
        let response = try CurlTransport().perform(HTTPRequest(url: server.url("/respond?\(query)"))).get()
        #expect(response.status == 418)
        #expect(response.headers["x-custom"] == "Some Value")
        #expect(response.headers["content-type"] == "text/plain")
        #expect(response.headers["content-length"] == "15")
        #expect(response.headers["x-dup"] == "second")
        #expect(response.headers.keys.allSatisfy { $0 == $0.lowercased() })
        #expect(response.text == "short and stout")
    }

    @Test func postBodyAndHeadersArriveExactly() throws {
        let server = try FakeServer()
        let body = Array(#"{"deviceID":"ABC","reason":"change"}"#.utf8) + [0x00, 0xFF, 0x0D, 0x0A, 0x80]
        let request = HTTPRequest(
            method: .post, url: server.url("/echo?a=1&b=%2F"),
            headers: [
                ("Content-Type", "application/json"), ("X-API-Key", "k-0123456789"), ("Authorization", "Bearer t0k"),
                ("X-Empty", ""),
            ],
            body: body)
        let echo = try Echo(CurlTransport().perform(request).get())
        #expect(echo.method == "POST")
        #expect(echo.target == "/echo?a=1&b=%2F")
        #expect(echo.body == body)
        #expect(echo.values("Content-Type") == ["application/json"])
        #expect(echo.values("X-API-Key") == ["k-0123456789"])
        #expect(echo.values("Authorization") == ["Bearer t0k"])
        #expect(echo.values("X-Empty") == [""])
        #expect(echo.values("Content-Length") == ["\(body.count)"])
        #expect(echo.values("Expect").isEmpty)
        #expect(echo.values("Accept-Encoding").isEmpty)
    }

    @Test func postWithoutContentTypeGetsNoInventedOne() throws {
        let server = try FakeServer()
        let echo = try Echo(
            CurlTransport().perform(HTTPRequest(method: .post, url: server.url("/echo"), body: Array("x".utf8))).get())
        #expect(echo.values("Content-Type").isEmpty)
        #expect(echo.body == Array("x".utf8))
    }

    @Test func emptyPostSendsZeroLength() throws {
        let server = try FakeServer()
        let echo = try Echo(CurlTransport().perform(HTTPRequest(method: .post, url: server.url("/echo"))).get())
        #expect(echo.method == "POST")
        #expect(echo.values("Content-Length") == ["0"])
        #expect(echo.body.isEmpty)
    }

    @Test func largePostHasNoExpectContinue() throws {
        // libcurl adds `Expect: 100-continue` on its own to bodies over 1 MiB; the transport suppresses it.
        let server = try FakeServer()
        let body = [UInt8](repeating: 0x61, count: 1_200_000)
        let request = HTTPRequest(method: .post, url: server.url("/echo"), body: body, maxBodyBytes: 8 << 20)
        let echo = try Echo(CurlTransport().perform(request).get())
        #expect(echo.values("Expect").isEmpty)
        #expect(echo.body == body)
    }

    @Test func getSendsNoBodyAndNoEncoding() throws {
        let server = try FakeServer()
        let echo = try Echo(
            CurlTransport().perform(HTTPRequest(url: server.url("/echo"), headers: [("X-API-Key", "abc")])).get())
        #expect(echo.method == "GET")
        #expect(echo.values("X-API-Key") == ["abc"])
        #expect(echo.values("Content-Length").isEmpty)
        #expect(echo.values("Accept-Encoding").isEmpty)
    }

    @Test func redirectIsReturnedNotFollowed() throws {
        let server = try FakeServer()
        let transport = CurlTransport()
        let response = try transport.perform(HTTPRequest(url: server.url("/redirect?to=/echo"))).get()
        #expect(response.status == 307)
        #expect(response.headers["location"] == "/echo")
        // The server saw the redirect and then only our next request, never a follow-up GET /echo.
        _ = try transport.perform(HTTPRequest(url: server.url("/respond"))).get()
        try server.waitFor("REQUEST /redirect")
        #expect(try server.nextLine(timeout: .seconds(5)) == "REQUEST /respond")
    }

    @Test func onlyTheFinalResponsesHeadersAreKept() throws {
        let server = try FakeServer()
        let response = try CurlTransport().perform(HTTPRequest(url: server.url("/interim"))).get()
        #expect(response.status == 200)
        #expect(response.headers["x-final"] == "yes")
        #expect(response.headers["x-interim"] == nil)
        #expect(response.text == "ok")
    }

    @Test func chunkedTrailersAreNotHeaders() throws {
        let server = try FakeServer()
        let response = try CurlTransport().perform(HTTPRequest(url: server.url("/trailers"))).get()
        #expect(response.text == "body")
        #expect(response.headers["x-trailer"] == nil)
        #expect(response.headers["transfer-encoding"] == "chunked")
    }

    @Test func longPollDeliversTheBodyAfterTheHold() throws {
        // Headers first, body after the hold (docs/syncthing-api.md, long-poll and timeouts), while another request
        // runs alongside.
        let server = try FakeServer()
        let transport = CurlTransport()
        let poll = BackgroundTransfer(transport, HTTPRequest(url: server.url("/hold?seconds=1")))
        try server.waitFor("HELD")
        let echo = try Echo(transport.perform(HTTPRequest(url: server.url("/echo"))).get())
        #expect(echo.method == "GET")
        let result = try #require(poll.wait(timeout: .seconds(10)))
        let response = try result.get()
        #expect(response.status == 200)
        #expect(response.text == "[]")
    }

    // MARK: Limits

    @Test(arguments: ["length", "chunked"])
    func oversizedBodyIsRefused(mode: String) throws {
        let server = try FakeServer()
        let request = HTTPRequest(url: server.url("/big?bytes=300000&mode=\(mode)"), maxBodyBytes: 100_000)
        #expect(CurlTransport().perform(request) == .failure(.bodyTooLarge))
    }

    @Test(arguments: ["length", "chunked"])
    func withoutHeadersTheLimitsStillHold(mode: String) throws {
        let server = try FakeServer()
        var big = HTTPRequest(url: server.url("/big?bytes=300000&mode=\(mode)"), maxBodyBytes: 100_000)
        big.keepsHeaders = false
        #expect(CurlTransport().perform(big) == .failure(.bodyTooLarge))
        var small = HTTPRequest(url: server.url("/respond?header=X-Custom:%20v&body=x"))
        small.keepsHeaders = false
        let response = try CurlTransport().perform(small).get()
        #expect(response.status == 200)
        #expect(response.headers.isEmpty)
        #expect(response.text == "x")
    }

    @Test(arguments: ["length", "chunked"])
    func oversizedBodyKeepsTheStatusWhenAsked(mode: String) throws {
        let server = try FakeServer()
        var request = HTTPRequest(url: server.url("/big?bytes=300000&mode=\(mode)"), maxBodyBytes: 100_000)
        request.keepStatusOfOversizedBody = true
        let response = try CurlTransport().perform(request).get()
        #expect(response.status == 200)
        #expect(response.body.count <= 100_000)
    }

    @Test(arguments: ["length", "chunked"])
    func bodyOfExactlyTheLimitIsAccepted(mode: String) throws {
        let server = try FakeServer()
        let request = HTTPRequest(url: server.url("/big?bytes=100000&mode=\(mode)"), maxBodyBytes: 100_000)
        let response = try CurlTransport().perform(request).get()
        #expect(response.body.count == 100_000)
        #expect(response.body.allSatisfy { $0 == UInt8(ascii: "x") })
    }

    @Test func oversizedHeadersAreRefused() throws {
        let server = try FakeServer()
        // 1000 fields of about 100 bytes: more than the 64 KiB header cap.
        let request = HTTPRequest(url: server.url("/many-headers?count=1000"))
        #expect(CurlTransport().perform(request) == .failure(.bodyTooLarge))
        let fine = try CurlTransport().perform(HTTPRequest(url: server.url("/many-headers?count=100"))).get()
        #expect(fine.headers["x-filler-00099"]?.count == 80)
    }

    // MARK: Failures

    @Test func cutChunkedBodyIsTruncated() throws {
        let server = try FakeServer()
        #expect(CurlTransport().perform(HTTPRequest(url: server.url("/cut"))) == .failure(.truncated))
    }

    @Test func refusedConnectionIsConnect() throws {
        let port = try RefusingPort()
        let request = HTTPRequest(url: "http://127.0.0.1:\(port.port)/rest/system/status")
        #expect(CurlTransport().perform(request) == .failure(.connect))
    }

    @Test func missingUnixSocketIsConnect() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let request = HTTPRequest(
            url: "http://localhost/rest/system/status", unixSocketPath: directory.file("none.sock"))
        #expect(CurlTransport().perform(request) == .failure(.connect))
    }

    @Test func stalledResponseTimesOut() throws {
        let server = try FakeServer()
        let request = HTTPRequest(url: server.url("/hold?seconds=10"), totalTimeout: .milliseconds(300))
        let clock = ContinuousClock()
        let start = clock.now
        #expect(CurlTransport().perform(request) == .failure(.timeout))
        #expect(clock.now - start < .seconds(5))
    }

    @Test func headerInjectionIsRefusedBeforeSending() throws {
        let server = try FakeServer()
        let transport = CurlTransport()
        let badArgument = TransportError.other(curlCode: 43)
        for header in [("X-Key", "a\r\nX-Injected: 1"), ("X-Key", "a\nb"), ("Bad Name", "v"), ("", "v"), ("X:Y", "v")] {
            #expect(
                transport.perform(HTTPRequest(url: server.url("/echo"), headers: [header])) == .failure(badArgument))
        }
        #expect(transport.perform(HTTPRequest(url: server.url("/echo\0/x"))) == .failure(badArgument))
        // Nothing of the above reached the server.
        _ = try transport.perform(HTTPRequest(url: server.url("/respond"))).get()
        #expect(try server.nextLine(timeout: .seconds(5)) == "REQUEST /respond")
    }

    @Test func onlyHTTPAndHTTPSAreAllowed() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try Data("s".utf8).write(to: URL(fileURLWithPath: directory.file("secret")))
        // CURLE_UNSUPPORTED_PROTOCOL: file:// is never read.
        #expect(
            CurlTransport().perform(HTTPRequest(url: "file://\(directory.file("secret"))"))
                == .failure(.other(curlCode: 1)))
    }

    // MARK: Unix socket

    @Test func unixSocketWorks() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let socket = directory.file("gui.sock")
        let server = try FakeServer(unixSocket: socket)
        let request = HTTPRequest(
            url: "http://localhost/echo?x=1", unixSocketPath: socket, headers: [("X-API-Key", "k")])
        let echo = try Echo(CurlTransport().perform(request).get())
        #expect(echo.target == "/echo?x=1")
        #expect(echo.values("Host") == ["localhost"])
        #expect(echo.values("X-API-Key") == ["k"])
        server.stop()
    }

    // MARK: TLS (docs/syncthing-api.md, TLS)

    @Test func httpsWithTheRightPinSucceeds() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let certificate = try SelfSignedCertificate(in: directory)
        let server = try FakeServer(tls: certificate)
        let pin = try #require(PublicKeyPin.sha256Pin(certificateFile: certificate.certPath))
        // The certificate names only "vm"; with a pin, neither the chain nor the host name is checked.
        let request = HTTPRequest(url: server.url("/echo", scheme: "https"), pinnedPublicKey: pin)
        let response = try CurlTransport().perform(request).get()
        #expect(response.status == 200)
        #expect(try Echo(response).method == "GET")
    }

    @Test func httpsWithAWrongPinIsTLS() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let certificate = try SelfSignedCertificate(in: directory)
        let other = try SelfSignedCertificate(in: directory, name: "other")
        let server = try FakeServer(tls: certificate)
        let wrongPin = try #require(PublicKeyPin.sha256Pin(certificateFile: other.certPath))
        let request = HTTPRequest(url: server.url("/echo", scheme: "https"), pinnedPublicKey: wrongPin)
        #expect(CurlTransport().perform(request) == .failure(.tls))
    }

    @Test func httpsWithoutAPinVerifiesAndRefusesASelfSignedCertificate() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let server = try FakeServer(tls: SelfSignedCertificate(in: directory))
        #expect(CurlTransport().perform(HTTPRequest(url: server.url("/echo", scheme: "https"))) == .failure(.tls))
    }

    @Test func pinThatIsNotSHA256IsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let certificate = try SelfSignedCertificate(in: directory)
        let server = try FakeServer(tls: certificate)
        // curl would read a pin without the sha256// prefix as a file name.
        let request = HTTPRequest(url: server.url("/echo", scheme: "https"), pinnedPublicKey: certificate.certPath)
        #expect(CurlTransport().perform(request) == .failure(.tls))
    }

    @Test func httpsOverAUnixSocketWithAPin() throws {
        // Syncthing serves HTTPS over its socket when tls="true" (docs/syncthing-api.md, GUI address forms and unix
        // sockets).
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let certificate = try SelfSignedCertificate(in: directory)
        let socket = directory.file("gui.sock")
        let server = try FakeServer(unixSocket: socket, tls: certificate)
        let pin = try #require(PublicKeyPin.sha256Pin(certificateFile: certificate.certPath))
        let request = HTTPRequest(url: "https://localhost/echo", unixSocketPath: socket, pinnedPublicKey: pin)
        #expect(try CurlTransport().perform(request).get().status == 200)
        server.stop()
    }

    // MARK: CA certificates (TrustStore)

    /// A transport whose trust store sees only `environment` (no probed system locations are consulted when a
    /// variable is set).
    func transport(_ environment: [String: String]) -> CurlTransport {
        CurlTransport(trustStore: TrustStore(environment: environment, usesPlatformStore: false))
    }

    /// An https fake server on 127.0.0.1 whose self-signed certificate (SAN IP:127.0.0.1) is its own CA.
    static func httpsServerWithItsOwnCA() throws -> (TemporaryDirectory, SelfSignedCertificate, FakeServer) {
        let directory = try TemporaryDirectory()
        let certificate = try SelfSignedCertificate(in: directory, subjectAltName: "IP:127.0.0.1")
        return (directory, certificate, try FakeServer(tls: certificate))
    }

    @Test func sslCertFileIsWhatVerifiesTheRelay() throws {
        let (directory, certificate, server) = try Self.httpsServerWithItsOwnCA()
        defer { directory.remove() }
        let request = HTTPRequest(url: server.url("/respond", scheme: "https"))
        #expect(try transport(["SSL_CERT_FILE": certificate.certPath]).perform(request).get().status == 200)
        // A bundle that does not hold the server's CA fails verification, as any TLS failure does.
        let other = try SelfSignedCertificate(in: directory, name: "other", subjectAltName: "IP:127.0.0.1")
        #expect(transport(["SSL_CERT_FILE": other.certPath]).perform(request) == .failure(.tls))
    }

    @Test func sslCertDirIsWhatVerifiesTheRelay() throws {
        let (directory, certificate, server) = try Self.httpsServerWithItsOwnCA()
        defer { directory.remove() }
        let hash = String(
            decoding: try run(["openssl", "x509", "-hash", "-noout", "-in", certificate.certPath]), as: UTF8.self
        )
        .trimmingCharacters(in: .whitespacesAndNewlines)
        let certs = directory.file("certs")
        try FileManager.default.createDirectory(atPath: certs, withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: certificate.certPath, toPath: certs + "/\(hash).0")
        let request = HTTPRequest(url: server.url("/respond", scheme: "https"))
        #expect(try transport(["SSL_CERT_DIR": "/nonexistent:" + certs]).perform(request).get().status == 200)
    }

    @Test func anUnusableStoreFailsAsTLSWithoutSending() throws {
        let (directory, certificate, server) = try Self.httpsServerWithItsOwnCA()
        defer { directory.remove() }
        let request = HTTPRequest(url: server.url("/echo", scheme: "https"))
        #expect(transport(["SSL_CERT_FILE": directory.file("missing.pem")]).perform(request) == .failure(.tls))
        #expect(transport(["SSL_CERT_DIR": directory.path]).perform(request) == .failure(.tls))
        let nothing = CurlTransport(
            trustStore: TrustStore(environment: [:], fileSystem: FakeTrustFileSystem(), usesPlatformStore: false))
        #expect(nothing.perform(request) == .failure(.tls))
        // Plain http and the pinned path never ask the store.
        let plain = try FakeServer()
        #expect(try nothing.perform(HTTPRequest(url: plain.url("/respond"))).get().status == 200)
        let pin = try #require(PublicKeyPin.sha256Pin(certificateFile: certificate.certPath))
        let pinned = HTTPRequest(url: server.url("/respond", scheme: "https"), pinnedPublicKey: pin)
        #expect(try nothing.perform(pinned).get().status == 200)
        // None of the refused requests reached the server.
        #expect(try server.nextLine(timeout: .seconds(5)) == "REQUEST /respond")
    }

    // MARK: Connection reuse

    @Test func getsReuseOneKeptAliveConnection() throws {
        let server = try FakeServer()
        let transport = CurlTransport()
        let responses = try (0..<3).map { _ in try transport.perform(HTTPRequest(url: server.url("/echo"))).get() }
        #expect(try responses.map { try Echo($0).connection } == [1, 1, 1])
        // The response names the connection as the server saw it: the same one each time.
        #expect(responses[0].connection != nil)
        #expect(Set(responses.map(\.connection)).count == 1)
    }

    @Test func getsOverAUnixSocketReuseTheirConnection() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let socket = directory.file("gui.sock")
        let server = try FakeServer(unixSocket: socket)
        let transport = CurlTransport()
        let request = HTTPRequest(url: "http://localhost/echo", unixSocketPath: socket)
        let first = try Echo(transport.perform(request).get()).connection
        let second = try Echo(transport.perform(request).get()).connection
        #expect(first == second)
        server.stop()
    }

    @Test func postsOpenAFreshConnectionAndKeepNone() throws {
        let server = try FakeServer()
        let transport = CurlTransport()
        func connection(_ method: HTTPRequest.Method) throws -> (server: Int, client: Int?) {
            let response = try transport.perform(HTTPRequest(method: method, url: server.url("/echo"))).get()
            return (try Echo(response).connection, response.connection)
        }
        let get = try connection(.get)
        let post = try connection(.post)
        let secondPost = try connection(.post)
        #expect(Set([get.server, post.server, secondPost.server]).count == 3)
        #expect(Set([get.client, post.client, secondPost.client]).count == 3)
        // The GET's connection stayed idle through both POSTs; it is named with its handle's newest number, which a
        // transfer took after that connection was opened (the one guarantee the poll loop relies on).
        let again = try connection(.get)
        #expect(again.server == get.server)
        #expect(again.client == secondPost.client)
    }

    @Test(arguments: ["/respond?header=Connection:%20close", "/cut"])
    func aConnectionTheServerEndedIsReplaced(_ ending: String) throws {
        let server = try FakeServer()
        let transport = CurlTransport()
        let first = try transport.perform(HTTPRequest(url: server.url("/echo"))).get()
        _ = transport.perform(HTTPRequest(url: server.url(ending)))
        let next = try transport.perform(HTTPRequest(url: server.url("/echo"))).get()
        #expect(try Echo(next).connection > Echo(first).connection)
        // A connection the server ended is never named as the one before (the poll loop's proof of the same process).
        #expect(next.connection != nil)
        #expect(next.connection != first.connection)
    }

    @Test func aRequestPinnedToAConnectionGoesOverItOrSendsNothing() throws {
        let server = try FakeServer()
        let transport = CurlTransport()
        let first = try transport.perform(HTTPRequest(url: server.url("/echo"))).get()
        var pinned = HTTPRequest(url: server.url("/echo"))
        pinned.onConnection = first.connection
        let again = try transport.perform(pinned).get()
        #expect(again.connection == first.connection)
        #expect(try Echo(again).connection == Echo(first).connection)
        // The server ends that connection: a request pinned to it fails at once and opens no other.
        _ = transport.perform(HTTPRequest(url: server.url("/respond?header=Connection:%20close")))
        #expect(transport.perform(pinned) == .failure(.connectionGone))
        var unknown = HTTPRequest(url: server.url("/echo"))
        unknown.onConnection = 999
        #expect(transport.perform(unknown) == .failure(.connectionGone))
        // An unpinned request opens a new one, with a new number.
        let fresh = try transport.perform(HTTPRequest(url: server.url("/echo"))).get()
        #expect(try Echo(fresh).connection > Echo(first).connection)
        #expect(fresh.connection != first.connection)
    }

    // MARK: Cancellation

    @Test func cancelEndsARunningLongPollAtOnce() throws {
        let server = try FakeServer()
        let transport = CurlTransport()
        let poll = BackgroundTransfer(
            transport, HTTPRequest(url: server.url("/hold?seconds=30"), totalTimeout: .seconds(65)))
        try server.waitFor("HELD")  // the 200 headers are out; the server now blocks 30 s
        let clock = ContinuousClock()
        let start = clock.now
        transport.cancel()
        let result = poll.wait(timeout: .seconds(10))
        let elapsed = clock.now - start
        #expect(result == .failure(.cancelled))
        #expect(elapsed < .seconds(2), "cancel took \(elapsed); the server holds for 30 s")
    }

    @Test func cancelWakesEveryConcurrentTransfer() throws {
        let server = try FakeServer()
        let transport = CurlTransport()
        let polls = (0..<3).map { _ in BackgroundTransfer(transport, HTTPRequest(url: server.url("/hold?seconds=30"))) }
        for _ in polls { try server.waitFor("HELD") }
        let clock = ContinuousClock()
        let start = clock.now
        transport.cancel()
        for poll in polls {
            #expect(poll.wait(timeout: .seconds(10)) == .failure(.cancelled))
        }
        #expect(clock.now - start < .seconds(2))
    }

    @Test func performAfterCancelFailsAtOnceWithoutSending() throws {
        let server = try FakeServer()
        let transport = CurlTransport()
        transport.cancel()
        #expect(transport.perform(HTTPRequest(url: server.url("/echo"))) == .failure(.cancelled))
        #expect(transport.perform(HTTPRequest(method: .post, url: server.url("/echo"))) == .failure(.cancelled))
        // Another transport is not affected, and the server's first request is that one's.
        _ = try CurlTransport().perform(HTTPRequest(url: server.url("/respond"))).get()
        #expect(try server.nextLine(timeout: .seconds(5)) == "REQUEST /respond")
    }
}

/// The pure pieces of CurlTransport: error mapping, timeouts, proxy policy.
@Suite struct CurlTransportPolicyTests {
    @Test(arguments: [
        (5, TransportError.dns), (6, .dns), (7, .connect), (28, .timeout), (35, .tls), (60, .tls), (90, .tls),
        (18, .truncated), (52, .truncated), (56, .truncated), (23, .other(curlCode: 23)), (1, .other(curlCode: 1)),
        (3, .other(curlCode: 3)),
    ])
    func curlCodesMapToTransportErrors(code: Int, expected: TransportError) {
        #expect(CurlTransport.transportError(curlCode: code, responseTooLarge: false) == expected)
    }

    @Test func ourOwnSizeAbortIsBodyTooLarge() {
        #expect(CurlTransport.transportError(curlCode: 23, responseTooLarge: true) == .bodyTooLarge)
    }

    @Test func durationsBecomeCurlMilliseconds() {
        #expect(CurlTransport.milliseconds(.seconds(65)) == 65_000)
        #expect(CurlTransport.milliseconds(.milliseconds(300)) == 300)
        #expect(CurlTransport.milliseconds(.microseconds(1500)) == 2)
        #expect(CurlTransport.milliseconds(.nanoseconds(1)) == 1)
        // 0 would mean "no timeout" to curl.
        #expect(CurlTransport.milliseconds(.zero) == 1)
        #expect(CurlTransport.milliseconds(.seconds(-5)) == 1)
        #expect(CurlTransport.milliseconds(.seconds(Int64.max)) == Int(Int32.max))
    }

    @Test(arguments: [
        ("http://127.0.0.1:8384/rest/events", true), ("http://127.9.8.7/", true), ("http://localhost:8384/", true),
        ("http://LocalHost./", true), ("http://gui.localhost/", true), ("http://[::1]:8384/", true),
        ("https://[0:0:0:0:0:0:0:1]/", true), ("http://[::ffff:127.0.0.1]/", true),
        ("https://relay.example.com/trigger", false), ("https://128.0.0.1/", false), ("http://10.0.0.1:8384/", false),
        ("http://[::2]/", false), ("http://localhost.example.com/", false), ("http://127.0.0.1.example/", false),
        ("http://a.b.localhost:8384/", true), ("http://gui.localhost./", true), ("http://notlocalhost/", false),
        ("not a url", false),
    ])
    func loopbackHostsBypassProxies(url: String, loopback: Bool) {
        #expect(CurlTransport.bypassesProxy(HTTPRequest(url: url)) == loopback)
        // The same rule as RELAY_URL's "http only on loopback".
        if let parts = URLParts(url) { #expect(hostIsLoopback(parts.host) == loopback) }
    }

    /// Why `*.localhost` counts as loopback: libcurl resolves it there itself, never asking DNS.
    @Test func localhostSubdomainsReachLoopback() throws {
        let server = try FakeServer()
        let response = try CurlTransport().perform(HTTPRequest(url: "http://probe.localhost:\(server.port)/echo")).get()
        #expect(response.status == 200)
    }

    @Test func requestsThatRefuseProxiesBypassThemForAnyHost() {
        var request = HTTPRequest(url: "http://syncthing:8384/rest/system/status")
        #expect(!CurlTransport.bypassesProxy(request))
        request.allowProxy = false
        #expect(CurlTransport.bypassesProxy(request))
    }

    @Test(arguments: [
        ("https://relay.example/", nil as String?, true), ("HTTPS://relay.example/", nil, true),
        ("http://127.0.0.1:8080/", nil, false), ("https://127.0.0.1:8384/", "sha256//AAAA", false),
    ])
    func onlyUnpinnedHTTPSAsksForCAs(url: String, pin: String?, asks: Bool) {
        #expect(CurlTransport.verifiesAgainstCAs(HTTPRequest(url: url, pinnedPublicKey: pin)) == asks)
    }

    @Test func caOptionsNameBothLocationsAndTheProxysOnlyWhenProxied() {
        let both = CACertificates(file: "/ca.pem", directory: "/a:/b", fromEnvironment: true)
        let direct = CurlTransport.caOptions(both, proxied: false)
        #expect(direct.map(\.0) == [CURLOPT_CAINFO, CURLOPT_CAPATH])
        #expect(direct.map(\.1) == ["/ca.pem", "/a:/b"])
        let proxied = CurlTransport.caOptions(CACertificates(file: "/ca.pem", fromEnvironment: false), proxied: true)
        #expect(proxied.map(\.0) == [CURLOPT_CAINFO, CURLOPT_CAPATH, CURLOPT_PROXY_CAINFO, CURLOPT_PROXY_CAPATH])
        // The directory libcurl may have compiled in is switched off (NULL) when only a file is named.
        #expect(proxied.map(\.1) == ["/ca.pem", nil, "/ca.pem", nil])
    }

    @Test func unixSocketsBypassProxies() {
        #expect(CurlTransport.bypassesProxy(HTTPRequest(url: "http://example.com/", unixSocketPath: "/run/st.sock")))
    }
}
