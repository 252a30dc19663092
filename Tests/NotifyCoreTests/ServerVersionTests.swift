import NotifyCore
import Testing

@Suite("A server's version, as the helper shows it")
struct ServerVersionTests {
    @Test(
        "a release is shown as the server sent it",
        arguments: [
            "v1.29.5", "v2.0.0-rc.1", "v1.19.2+ds1", "1.27.12", "1.3.2", "1.3.2-standin",
            String(repeating: "9", count: 32),
        ])
    func shown(version: String) {
        #expect(ServerVersion.displayable(version) == version)
    }

    @Test(
        "anything else is never shown",
        arguments: [
            "", "latest", "v1.2 3", "v1.2\n", "1.0 beta", "1.0\n", "1.3\u{1b}[31m", "<b>v1</b>", "/srv/x", "é",
            "v1.2\u{0}", String(repeating: "9", count: 41),
        ])
    func hidden(version: String) {
        #expect(ServerVersion.displayable(version) == nil)
    }

    // Syncthing's rule allowed 33–40 bytes and a letter other than `v` first; the relay's allowed `_` and any first
    // character. The stricter side of each now holds for both servers.
    @Test(
        "where the two rules used to differ, the stricter one holds",
        arguments: [
            String(repeating: "9", count: 33), "v" + String(repeating: "1", count: 39), "2.0.0+build_7", "_1.0",
            "build-7", "MFZWI3D", "MFZWI3D-BONSGYC-YLTMRWG-C43ENR5",
        ])
    func stricter(version: String) {
        #expect(ServerVersion.displayable(version) == nil)
        #expect(SystemVersion(version: version).version == nil)
        let body = #"{"status":"ok","version":"\#(version)"}"#
        #expect(RelayHealthAnswer.classify(status: 200, body: Array(body.utf8)) == RelayHealthAnswer(.ok))
    }

    @Test("both servers' answers go through the one rule")
    func bothUseIt() {
        #expect(SystemVersion(version: "v1.29.5").version == "v1.29.5")
        let body = #"{"status":"ok","version":"1.3.2-standin"}"#
        #expect(
            RelayHealthAnswer.classify(status: 200, body: Array(body.utf8))
                == RelayHealthAnswer(.ok, version: "1.3.2-standin"))
    }
}
