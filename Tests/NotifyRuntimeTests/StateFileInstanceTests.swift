import Foundation
import NotifyCore
import Testing

@testable import NotifyRuntime
@testable import NotifyTestSupport

/// The health state file is keyed to the Syncthing instance: two sidecars as root for two Syncthing
/// instances share a directory but not a file, and `--healthcheck` finds its own instance's.
@Suite("State file per instance")
struct StateFileInstanceTests {
    static let base = ["RELAY_URL": "https://relay.example", "HOME": "/root"]

    static func env(_ extra: [String: String], runtime: String? = nil) -> [String: String] {
        var env = base.merging(extra) { $1 }
        if let runtime { env["RUNTIME_DIRECTORY"] = runtime }
        return env
    }

    @Test(
        "two instances get two files: each variable that selects the instance changes the key",
        arguments: [
            (["SYNCTHING_API_URL": "http://syncthing-a:8384"], ["SYNCTHING_API_URL": "http://syncthing-b:8384"]),
            (["SYNCTHING_CONFIG": "/srv/a/config.xml"], ["SYNCTHING_CONFIG": "/srv/b/config.xml"]),
            (["STCONFDIR": "/srv/a"], ["STCONFDIR": "/srv/b"]),
            (["STHOMEDIR": "/srv/a"], ["STHOMEDIR": "/srv/b"]),
            (["STGUIADDRESS": "127.0.0.1:8384"], ["STGUIADDRESS": "127.0.0.1:8385"]),
            ([:], ["SYNCTHING_CONFIG": "/srv/b/config.xml"]),
            // The same value under another variable is another instance too.
            (["STCONFDIR": "/srv/a"], ["STHOMEDIR": "/srv/a"]),
        ])
    func differentInstances(a: [String: String], b: [String: String]) throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let fileA = try #require(StateFile.locate(environment: Self.env(a, runtime: dir.path), create: true))
        let fileB = try #require(StateFile.locate(environment: Self.env(b, runtime: dir.path), create: true))
        #expect(fileA != fileB)
        #expect(StateFile.instanceKey(environment: a) != StateFile.instanceKey(environment: b))
    }

    @Test("the service and --healthcheck find the same file; variables that do not select the instance do not matter")
    func sameInstance() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let instance = ["SYNCTHING_CONFIG": "/srv/a/config.xml", "SYNCTHING_API_URL": "http://syncthing:8384"]
        let service = try #require(StateFile.locate(environment: Self.env(instance, runtime: dir.path), create: true))
        let healthcheck = try #require(
            StateFile.locate(environment: Self.env(instance, runtime: dir.path), create: false))
        #expect(service == healthcheck)
        var noisy = Self.env(instance, runtime: dir.path)
        noisy["HOME"] = "/home/someone"
        noisy["XDG_CONFIG_HOME"] = "/home/someone/.config"
        noisy["SYNCTHING_API_KEY"] = "another-key"
        noisy["LOG_LEVEL"] = "debug"
        noisy["STCONFDIR"] = ""  // empty counts as unset
        #expect(StateFile.locate(environment: noisy, create: false) == service)
    }

    @Test("the key is 16 hex digits of FNV-1a 64; the name shows no path or URL")
    func keyShape() {
        #expect(StateFile.instanceKey(environment: [:]) == "cbf29ce484222325")
        #expect(StateFile.fileName(environment: [:]) == "state-cbf29ce484222325")
        let url = "http://syncthing:8384"
        let key = StateFile.instanceKey(environment: ["SYNCTHING_API_URL": url])
        // FNV-1a 64 of "SYNCTHING_API_URL=http://syncthing:8384\0", computed independently below.
        var hash: UInt64 = 14_695_981_039_346_656_037
        for byte in Array("SYNCTHING_API_URL=\(url)".utf8) + [0] {
            hash = (hash ^ UInt64(byte)) &* 1_099_511_628_211
        }
        #expect(key == String(format: "%016llx", hash))
        #expect(key.count == 16 && key.allSatisfy(\.isHexDigit))
        #expect(!StateFile.fileName(environment: ["SYNCTHING_API_URL": url]).contains("syncthing"))
    }

    @Test("a clean stop of one instance removes its own file and leaves the other's")
    func stopLeavesTheOther() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let envA = Self.env(["SYNCTHING_CONFIG": "/srv/a/config.xml"], runtime: dir.path)
        let envB = Self.env(["SYNCTHING_CONFIG": "/srv/b/config.xml"], runtime: dir.path)
        let fileA = try #require(StateFile.locate(environment: envA, create: true))
        let fileB = try #require(StateFile.locate(environment: envB, create: true))
        let runtime = ManualRuntime()
        let a = ServiceMonitor(stateFile: fileA, clock: runtime)
        let b = ServiceMonitor(stateFile: fileB, clock: runtime)
        a.pollSucceeded()
        b.pollSucceeded()
        #expect(fileA.read().state?.lastPoll == 1_718_000_000)
        #expect(fileB.read().state?.lastPoll == 1_718_000_000)
        a.stopping()
        #expect(fileA.read() == .missing)
        #expect(!FileManager.default.fileExists(atPath: fileA.path))
        // B's --healthcheck still finds B's file.
        let found = try #require(StateFile.locate(environment: envB, create: false))
        #expect(found.read().state?.lastPoll == 1_718_000_000)
    }
}
