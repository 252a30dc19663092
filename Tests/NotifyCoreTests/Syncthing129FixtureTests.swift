import Foundation
import Testing

@testable import NotifyCore

/// Responses of Syncthing 1.29.5 (Debian trixie), recorded in the lab by Tests/Lab/stversions.py
/// (Fixtures/syncthing-1.29.5, docs/syncthing-versions.md): the parsers read them as they read 1.19.2's. The extra
/// `remoteState` field is ignored by the parsers; these tests only pin what arrives on the wire.
@Suite("Syncthing 1.29.5 responses")
struct Syncthing129FixtureTests {
    static func load(_ name: String) throws -> [UInt8] { try fixture(name, version: "1.29.5") }

    /// `data.remoteState` of each event, read with Foundation (the event parser does not keep it).
    static func remoteStates(_ body: [UInt8]) throws -> [String] {
        let array = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [[String: Any]])
        return array.map { (($0["data"] as? [String: Any])?["remoteState"] as? String) ?? "(absent)" }
    }

    @Test("FolderCompletion events decode; every remoteState value arrives, each also with need > 0")
    func folderCompletionEvents() throws {
        let body = try Self.load("events-FolderCompletion.json")
        let events = try SyncthingEvent.decodeArray(body)
        let states = try Self.remoteStates(body)
        #expect(events.count == 31 && states.count == 31)
        #expect(events.allSatisfy { $0.type == "FolderCompletion" && $0.device != nil && $0.folder != nil })
        #expect(Set(states) == ["valid", "paused", "notSharing", "unknown"])
        // Need > 0 with each remoteState: unknown (a disconnected peer, after a change; or a reconnect before the
        // peer's index arrived), paused (the peer paused the folder), notSharing (the peer removed the folder), valid.
        let needing = Set(zip(events, states).filter { $0.0.peerNeedsData }.map(\.1))
        #expect(needing == ["valid", "paused", "notSharing", "unknown"])
    }

    @Test(
        "completion answers: in sync or not, per scenario (remoteState is extra)",
        arguments: [
            ("completion-connected.json", true), ("completion-not-sharing.json", true),
            ("completion-not-sharing-reconnected.json", true), ("completion-not-shared.json", false),
            ("completion-paused-on-a.json", false), ("completion-b-pauses-a.json", false),
            ("completion-stopped.json", false), ("completion-remote-folder-paused.json", false),
            ("completion-remote-removed-folder.json", false),
        ])
    func completion(name: String, inSync: Bool) throws {
        let completion = try #require(decodeJSON(Completion.self, from: Self.load(name)))
        #expect(completion.inSync == inSync)
    }

    @Test("status, devices, folders and connections decode; connections no longer lists the local device")
    func restShapes() throws {
        let status = try checkLabConfigAnswers(version: "1.29.5")
        let connections = try #require(decodeJSON(SystemConnections.self, from: Self.load("system-connections.json")))
        #expect(connections.connections.count == 1)  // 1.19.2 also listed the local device, never connected
        #expect(connections.connections[status.myID] == nil)
        #expect(connections.connections.values.allSatisfy { $0.connected })
    }
}
