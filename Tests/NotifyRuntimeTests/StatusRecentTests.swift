import Foundation
import NotifyCore
import Testing

@testable import NotifyRuntime
@testable import NotifyTestSupport

/// `--status`'s `recent` list over the real service composition: every rule of README's "When the phone is woken,
/// and when it is not" that a run meets, decided by the engine, written to the state file through the monitor and
/// read back by `Status.report`, as text and JSON (golden files).
@Suite("--status: the recent decisions, on the Service rig", .serialized)
struct StatusRecentTests {
    static let phone = ServiceRig.phone

    /// One FolderCompletion event for the phone in `vault`.
    static func completion(_ id: Int, needBytes: Int, remoteState: String = "valid") -> String {
        #"{"id":\#(id),"type":"FolderCompletion","data":{"folder":"vault","device":"\#(phone)","completion":50,"#
            + #""needBytes":\#(needBytes),"needItems":\#(needBytes > 0 ? 1 : 0),"needDeletes":0,"#
            + #""remoteState":"\#(remoteState)","sequence":5}}"#
    }

    static func local(_ id: Int, _ folder: String) -> String {
        #"{"id":\#(id),"type":"LocalIndexUpdated","data":{"folder":"\#(folder)"}}"#
    }

    /// The `recent` entries of a `--status --json` document: time and decision.
    static func recent(_ json: String) throws -> [(at: String, decision: String)]? {
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        return (object?["recent"] as? [[String: Any]])?.map {
            ($0["at"] as? String ?? "", $0["decision"] as? String ?? "")
        }
    }

    /// The sum of the `count`s of the `wake-answered` entries.
    static func answeredCount(_ json: String) throws -> Int? {
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        return (object?["recent"] as? [[String: Any]])?.filter { $0["decision"] as? String == "wake-answered" }
            .reduce(0) { $0 + ($1["count"] as? Int ?? 0) }
    }

    @Test("each rule a run meets has its line, newest first; the JSON says the same; no identifier")
    func everyRule() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let env = StatusTests.environment(dir)
        let stateFile = try #require(StateFile.locate(environment: env, create: false))
        let rig = ServiceRig(
            sweep: .seconds(600), window: .seconds(30), watched: ["vault", "solo"], stateFile: stateFile)
        // `vault` is shared with the phone; `solo` with no other device; `other` is not watched.
        rig.syncthing.state.withLock {
            $0.folders =
                #"[{"id":"vault","paused":false,"devices":[{"deviceID":"\#(ServiceRig.idA)"},"#
                + #"{"deviceID":"\#(Self.phone)"}]},"#
                + #"{"id":"solo","paused":false,"devices":[{"deviceID":"\#(ServiceRig.idA)"}]},"#
                + #"{"id":"other","paused":false,"devices":[{"deviceID":"\#(ServiceRig.idA)"},"#
                + #"{"deviceID":"\#(Self.phone)"}]}]"#
        }
        rig.start()
        rig.advance(seconds: 2)
        // Inside the announce's push window: a change in the shared folder is held; the others wake nobody.
        rig.answer(
            "[" + [Self.local(1, "vault"), Self.local(2, "solo"), Self.local(3, "other")].joined(separator: ",") + "]")
        rig.advance(seconds: 30)
        // The phone reports that it is in sync (not news), then a need (news), then that it paused the folder; a
        // change there then wakes nobody.
        rig.answer("[" + Self.completion(4, needBytes: 0) + "]")
        rig.advance(seconds: 2)
        rig.answer("[" + Self.completion(5, needBytes: 4096) + "]")
        rig.advance(seconds: 2)
        rig.answer("[" + Self.completion(6, needBytes: 0, remoteState: "paused") + "]")
        rig.advance(seconds: 2)
        rig.answer("[" + Self.local(7, "vault") + "]")
        rig.advance(seconds: 40)
        // Events are lost, and the relay finds no active subscription for the wake-up: it is kept.
        rig.relay.state.withLock { $0.triggers = [.status(402)] }
        rig.gap(after: 7)
        rig.advance(seconds: 80)
        // The sweeps: the phone (its pause forgotten with the lost events) offline needing data, then connected and
        // syncing, then in sync.
        rig.phoneOfflineNeedingData()
        rig.advance(to: 610)
        rig.syncthing.state.withLock { $0.phoneConnected = true }
        rig.advance(to: 1210)
        rig.syncthing.state.withLock { $0.phoneNeedBytes = 0 }
        rig.advance(to: 1810)
        rig.answer("[]")
        rig.advance(seconds: 1)
        let report = StatusTests.report(rig, env)
        let text = report.text()
        let json = report.json()
        Golden.check("status-recent.txt", text + "\n")
        Golden.check("status-recent.json", json + "\n")
        #expect(StatusTests.leaks(text + json, dir).isEmpty)
        // Every rule this run met, each decided once in its own words; the JSON lists the same, newest first.
        let met: [DecisionCause] = [
            .announce, .change, .changeUnshared, .changeUnwatched, .peerProgress, .peerNeedsData, .peerDeclined,
            .changeDeclined, .eventsLost, .sweepOffline, .sweepConnected, .sweepInSync, .relayAnswer,
        ]
        let recent = try #require(try Self.recent(json))
        #expect(Set(recent.map(\.decision)) == Set(met.map(\.rawValue)))
        #expect(recent.map(\.at) == recent.map(\.at).sorted().reversed(), "newest first")
        #expect(text.split(separator: "\n").count == 8 + recent.count)
        // One answered entry per trigger the relay saw: the list cannot tell of a wake-up that was not sent.
        let answered = try #require(try Self.answeredCount(json))
        #expect(answered == rig.relay.state.withLock { $0.triggerTimes.count })
        rig.stop()
    }
}
