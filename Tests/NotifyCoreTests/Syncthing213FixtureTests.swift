import Foundation
import Testing

@testable import NotifyCore

/// Responses of Syncthing 2.1.3, recorded in the lab by Tests/Lab/stversions.py (Fixtures/syncthing-2.1.3,
/// docs/syncthing-versions.md): the parsers read them as they read 1.19.2's and 1.29.5's. What 2.x adds on the wire
/// (more connections per device pair, `secondary` in the connections answer, new config keys) is skipped by the
/// parsers; these tests pin what arrives and what the parsers make of it.
@Suite("Syncthing 2.1.3 responses")
struct Syncthing213FixtureTests {
    static func load(_ name: String) throws -> [UInt8] { try fixture(name, version: "2.1.3") }

    /// Each element of a JSON array, read with Foundation (an independent reading to check the parsers against).
    static func objects(_ body: [UInt8]) throws -> [[String: Any]] {
        try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [[String: Any]])
    }

    @Test("FolderCompletion events decode with their remoteState; every value arrives, each also with need > 0")
    func folderCompletionEvents() throws {
        let body = try Self.load("events-FolderCompletion.json")
        let events = try SyncthingEvent.decodeArray(body)
        let raw = try Self.objects(body)
        #expect(events.count == 45 && raw.count == 45)  // 1.29.5: 31; 2.x reports again after each extra connection
        #expect(events.allSatisfy { $0.type == "FolderCompletion" && $0.device != nil && $0.folder != nil })
        #expect(zip(events, events.dropFirst()).allSatisfy { $0.id < $1.id })
        // The parser's remoteState is the one on the wire, for every event.
        let wire = raw.map { ($0["data"] as? [String: Any])?["remoteState"] as? String }
        #expect(events.map { $0.remoteState?.rawValue } == wire)
        #expect(Set(events.compactMap(\.remoteState)) == [.valid, .paused, .notSharing, .unknown])
        // Need > 0 with each remoteState: unknown (a disconnected peer after a change), paused (the peer paused the
        // folder), notSharing (removed, or never accepted), valid (a reconnect before the peer's index arrived).
        let needing = Set(events.filter(\.peerNeedsData).compactMap(\.remoteState))
        #expect(needing == [.valid, .paused, .notSharing, .unknown])
    }

    @Test("a folder the peer never accepted is reported as needing everything at sequence 0 (1.29.5: complete)")
    func neverAcceptedNeedsEverything() throws {
        let events = try SyncthingEvent.decodeArray(Self.load("events-FolderCompletion.json"))
        let solo = events.filter { $0.folder == "solo" }
        #expect(solo.count == 4)
        #expect(solo.allSatisfy { $0.sequence == 0 && $0.peerNeedsData })
        #expect(solo.map(\.remoteState) == [.unknown, .notSharing, .notSharing, .notSharing])
    }

    @Test(
        "completion answers: in sync or not, remoteState and sequence per scenario",
        arguments: [
            ("completion-connected.json", true, RemoteFolderState.valid, false),
            ("completion-not-sharing.json", false, .unknown, true),
            ("completion-not-sharing-reconnected.json", false, .notSharing, true),
            ("completion-not-shared.json", false, .unknown, true),
            ("completion-paused-on-a.json", false, .unknown, false),
            ("completion-b-pauses-a.json", false, .unknown, false),
            ("completion-stopped.json", false, .unknown, false),
            ("completion-remote-folder-paused.json", false, .paused, false),
            ("completion-remote-removed-folder.json", false, .notSharing, false),
        ])
    func completion(name: String, inSync: Bool, remoteState: RemoteFolderState, noPeerIndex: Bool) throws {
        let completion = try #require(decodeJSON(Completion.self, from: Self.load(name)))
        #expect(completion.inSync == inSync)
        #expect(completion.remoteState == remoteState)
        #expect((completion.sequence == 0) == noPeerIndex)
    }

    @Test("status, devices and folders decode; the shared pairs are the same as on 1.x")
    func restShapes() throws {
        _ = try checkLabConfigAnswers(version: "2.1.3")
    }

    @Test(
        "connections: one entry per device, whether it has one connection or three",
        arguments: [("system-connections.json", 0), ("system-connections-settled.json", 2)])
    func connections(name: String, secondary: Int) throws {
        let body = try Self.load(name)
        let status = try #require(decodeJSON(SystemStatus.self, from: Self.load("system-status.json")))
        let connections = try #require(decodeJSON(SystemConnections.self, from: body))
        #expect(connections.connections.count == 1)  // the peer only: no local device, as on 1.29.5
        #expect(connections.connections[status.myID] == nil)
        #expect(connections.connections.values.allSatisfy { $0.connected && !$0.paused })
        // On the wire: the first connection under `primary`, the others (2.x) under `secondary`.
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        let byDevice = try #require(object["connections"] as? [String: [String: Any]])
        let entry = try #require(byDevice.values.first)
        #expect(entry["primary"] is [String: Any])
        #expect(((entry["secondary"] as? [Any]) ?? []).count == secondary)
    }
}
