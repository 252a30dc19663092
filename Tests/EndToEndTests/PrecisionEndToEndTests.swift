import Foundation
import Testing

/// Wake-up precision against REAL Syncthing (docs/benchmarks.md, "Precision"): the relay's push window and "news only"
/// in the field. A slow transfer wakes once, edits inside the push window are held and none is wasted, a folder shared
/// with no one never wakes, and the stale-peer sweep wakes a stopped peer on every sweep but never a connected one.
///
/// Nothing here depends on the Syncthing version (1.19 and 1.29 alike): peer state is read from `/rest/db/completion`
/// and `/rest/system/connections`, which answer the same on both. Timing: waits are generous and quiet periods prove
/// that nothing more arrives; the machine is shared, so no assert is tighter than a few seconds.
@Suite(
    "Wake-up precision with real Syncthing", .serialized,
    .enabled(if: E2E.enabled, "run through scripts/test (it creates the loopback-only namespace)"))
final class PrecisionEndToEndTests {
    let lab: Lab
    var relays: [Relay] = []
    var sidecars: [Sidecar] = []
    /// Identifiers a test adds to the lab's (a folder it creates).
    var extraSecrets: [String] = []

    init() throws {
        lab = try Lab()
    }

    deinit {
        for s in sidecars { s.stop() }
        for r in relays { r.stop() }
        lab.down()
    }

    // MARK: - Helpers

    func startRelay(windowSeconds: Double = 0, perMinute: Int = 0) throws -> Relay {
        let r = try Relay(dir: lab.dir, windowMode: .spec, windowSeconds: windowSeconds, perMinute: perMinute)
        relays.append(r)
        return r
    }

    func start(_ relay: Relay, _ env: [String: String] = [:]) throws -> Sidecar {
        let s = try Sidecar(lab: lab, relay: relay, env: env)
        sidecars.append(s)
        return s
    }

    /// No log line carries an identifier. "vault" is a folder ID; the program's name is not a leak.
    func expectNoLeaks(_ s: Sidecar, sourceLocation: SourceLocation = #_sourceLocation) {
        let secrets = lab.secrets + extraSecrets
        let leaks = s.lines.filter { line in
            let scanned = line.replacingOccurrences(of: "vaultsync-notify", with: "")
            return secrets.contains { !$0.isEmpty && scanned.contains($0) }
        }
        #expect(leaks.isEmpty, "log lines carrying an identifier: \(leaks)", sourceLocation: sourceLocation)
        #expect(!s.lines.isEmpty, sourceLocation: sourceLocation)
    }

    /// One GET to a node's REST API (loopback, no proxy); nil unless it answers 200 with JSON.
    func get(_ node: Lab.Node, _ path: String) -> Any? {
        guard
            let (status, out) = try? E2E.run(
                [
                    "curl", "-sS", "--noproxy", "*", "--max-time", "10", "-H", "X-API-Key: \(node.api_key)", "-w",
                    "\n%{http_code}", node.gui_url + path,
                ], timeout: 15),
            status == 0
        else { return nil }
        let parts = out.split(separator: "\n", omittingEmptySubsequences: false)
        guard parts.last == "200" else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(parts.dropLast().joined(separator: "\n").utf8))
    }

    /// What A knows B still needs of `folder` (`/rest/db/completion`), nil when A did not answer.
    struct Need: CustomStringConvertible {
        var items: Int
        var bytes: Int
        var deletes: Int
        /// B's index sequence as A knows it: 0 until B has sent an index for the folder.
        var sequence: Int
        var inSync: Bool { items == 0 && bytes == 0 && deletes == 0 }
        var description: String { "\(items) items/\(bytes) B/\(deletes) deletes" }
    }

    func needOfB(_ folder: String = "vault") -> Need? {
        guard let o = get(lab.info.a, "/rest/db/completion?device=\(lab.info.b.id)&folder=\(folder)") as? [String: Any],
            let items = o["needItems"] as? Int, let bytes = o["needBytes"] as? Int
        else { return nil }
        return Need(
            items: items, bytes: bytes, deletes: o["needDeletes"] as? Int ?? 0, sequence: o["sequence"] as? Int ?? 0)
    }

    /// Gives B one file of `vault` and waits until A knows B's index. In a fresh lab B has sent no index for the
    /// folder, and Syncthing then reports it at sequence 0 right after a change (1.x: in sync; 2.x: needing
    /// everything), before B's first index update shows what it needs: the phone of these scenarios already holds
    /// the vault.
    func seedB() throws {
        try lab.write("vault", "seed.md")
        try #require(
            E2E.waitFor(30) { needOfB().map { $0.inSync && $0.sequence > 0 } ?? false }, "B never got the seed")
    }

    /// Whether A sees B connected right now, nil when A did not answer.
    func bConnected() -> Bool? {
        guard let o = get(lab.info.a, "/rest/system/connections") as? [String: Any],
            let conns = o["connections"] as? [String: Any]
        else { return nil }
        return (conns[lab.info.b.id] as? [String: Any])?["connected"] as? Bool ?? false
    }

    /// Limits B's receive rate (also on loopback, which Syncthing counts as LAN).
    func throttleB(kibPerSecond: Int) throws {
        try lab.command(
            "api", "b", "PATCH", "/rest/config/options",
            #"{"maxRecvKbps": \#(kibPerSecond), "limitBandwidthInLan": true}"#)
    }

    /// Writes `count` files of `size` random (incompressible) bytes into A's `folder`, all at once.
    func writeFiles(_ folder: String, _ prefix: String, count: Int, size: Int) throws {
        let dir = URL(fileURLWithPath: lab.info.a.folders[folder]!).appendingPathComponent(prefix)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        var generator = SystemRandomNumberGenerator()
        for i in 0..<count {
            let bytes = (0..<size / 8).flatMap { _ in withUnsafeBytes(of: generator.next() as UInt64) { Array($0) } }
            try Data(bytes).write(to: dir.appendingPathComponent("f\(i).bin"))
        }
    }

    /// Sidecar lines that record a delivered stale-peer wake-up.
    func stalePeerDeliveries(_ s: Sidecar) -> [String] {
        s.lines.filter { $0.contains("wake-up delivered") && $0.contains("reason=stale-peer") }
    }

    /// A failure comment: the relay's trigger records and the sidecar's log; with `events`, also what A's event
    /// buffer (the default mask, which exists from Syncthing's start) holds of the events that can wake.
    func evidence(_ s: Sidecar, _ relay: Relay, events: Bool = false) -> Comment {
        let records = relay.triggers.map {
            "t=\(String(format: "%.3f", $0.t)) status=\($0.status ?? 0) pushed=\($0.pushed ?? false)"
        }
        let syncthing = events ? "\nA's events:\n" + eventsOfA().joined(separator: "\n") : ""
        return "relay triggers: \(records)\nsidecar log:\n\(s.log)\(syncthing)"
    }

    /// A's buffered LocalIndexUpdated, FolderCompletion, RemoteIndexUpdated and device events, one line each, with
    /// the devices named A and B.
    func eventsOfA() -> [String] {
        let wanted: Set<String> = [
            "LocalIndexUpdated", "FolderCompletion", "RemoteIndexUpdated", "DeviceConnected", "DeviceDisconnected",
            "ConfigSaved",
        ]
        guard let events = get(lab.info.a, "/rest/events?since=0&timeout=0") as? [[String: Any]] else {
            return ["(no answer)"]
        }
        let names = [lab.info.a.id: "A", lab.info.b.id: "B"]
        return events.compactMap { e in
            guard let type = e["type"] as? String, wanted.contains(type) else { return nil }
            let data = e["data"] as? [String: Any] ?? [:]
            let fields = [
                "folder", "device", "id", "items", "needItems", "needBytes", "needDeletes", "completion",
                "sequence", "remoteState",
            ].compactMap { key in
                data[key].map { "\(key)=\(($0 as? String).flatMap { names[$0] } ?? "\($0)")" }
            }
            return "\(e["id"] ?? "?") \(e["time"] ?? "?") \(type) \(fields.joined(separator: " "))"
        }
    }

    // MARK: - Tests

    @Test("many small files trickling to a slow, connected peer → one wake-up for the whole transfer")
    func trickle() throws {
        try seedB()
        let relay = try startRelay(windowSeconds: 30)
        let s = try start(
            relay, ["STARTUP_ANNOUNCE": "false", "DEBOUNCE_SECONDS": "2", "RELAY_WINDOW_SECONDS": "30"])
        #expect(s.waitConnected())
        // 120 × 20 KB = 2.4 MB at 48 KiB/s (after Syncthing's initial burst) takes about 40 s.
        try throttleB(kibPerSecond: 48)
        Thread.sleep(forTimeInterval: 1)
        let written = Date()
        try writeFiles("vault", "trickle", count: 120, size: 20_000)

        // Watch B's progress from A until it is in sync again.
        var samples: [(TimeInterval, Need)] = []
        let synced = E2E.waitFor(150) {
            guard let need = needOfB() else { return false }
            samples.append((Date().timeIntervalSince(written), need))
            Thread.sleep(forTimeInterval: 1)
            return need.inSync && samples.contains { !$0.1.inSync }
        }
        let trace = samples.map { "\(String(format: "%.0f", $0.0))s: \($0.1)" }
        try #require(synced, "B never got in sync: \(trace)")
        let firstNeed = try #require(samples.first { !$0.1.inSync }?.0)
        let lastNeed = try #require(samples.last { !$0.1.inSync }?.0)
        // B really was slow: it needed data for a good while, and was seen part-way through.
        #expect(lastNeed - firstNeed >= 20, "transfer too fast for the test: \(trace)")
        #expect(samples.contains { $0.1.items > 0 && $0.1.items < 120 }, "no partial progress seen: \(trace)")

        // Quiet period after the end: a wake-up held for the window, or one for a late report, would show now.
        Thread.sleep(forTimeInterval: 12)
        #expect(relay.triggers.count == 1, evidence(s, relay, events: true))
        #expect(relay.pushes.count == 1)
        let t = try #require(relay.triggers.first?.t)
        #expect(t > written.timeIntervalSince1970)
        expectNoLeaks(s)
    }

    @Test("edits 12 s apart inside the push window → each edit pushed after it, no trigger wasted in the window")
    func editsInsideWindow() throws {
        let relay = try startRelay(windowSeconds: 30, perMinute: 10)
        let s = try start(
            relay, ["STARTUP_ANNOUNCE": "true", "DEBOUNCE_SECONDS": "2", "RELAY_WINDOW_SECONDS": "30"])
        // The announce opens the window; the edits start inside it.
        try #require(E2E.waitFor(20) { relay.pushes.count >= 1 }, evidence(s, relay))
        var edits: [TimeInterval] = []
        for i in 0..<3 {
            if i > 0 { Thread.sleep(forTimeInterval: 12) }
            edits.append(Date().timeIntervalSince1970)
            try lab.write("vault", "edited.md", "edit \(i)\n")
        }
        let last = edits.last!
        #expect(E2E.waitFor(60) { relay.pushes.contains { $0.t > last } }, evidence(s, relay))
        Thread.sleep(forTimeInterval: 6)
        for (i, edit) in edits.enumerated() {
            #expect(relay.pushes.contains { $0.t > edit }, "edit \(i) has no push after it. \(evidence(s, relay))")
        }
        #expect(relay.triggers.allSatisfy { $0.pushed == true }, "a trigger was wasted. \(evidence(s, relay))")
        #expect(relay.triggers.allSatisfy { $0.status == 202 }, evidence(s, relay))
        expectNoLeaks(s)
    }

    @Test("a change in a folder shared with no one → no wake-up; a change in vault still wakes")
    func unsharedFolder() throws {
        let relay = try startRelay()
        let s = try start(relay)
        #expect(s.waitConnected())
        let id = "solo"
        let path = lab.dir.appendingPathComponent("a/solo")
        extraSecrets = [id, path.path]
        try FileManager.default.createDirectory(
            at: path.appendingPathComponent(".stfolder"), withIntermediateDirectories: true)
        let before = s.count("events received")
        let folder: [String: Any] = [
            "id": id, "label": id, "path": path.path, "type": "sendreceive", "fsWatcherEnabled": true,
            "fsWatcherDelayS": 1, "rescanIntervalS": 3600, "devices": [["deviceID": lab.info.a.id]],
        ]
        let body = String(decoding: try JSONSerialization.data(withJSONObject: folder), as: UTF8.self)
        try lab.command("api", "a", "POST", "/rest/config/folders", body)
        // The folder runs, and the sidecar has seen the ConfigSaved and re-read the config.
        #expect(
            E2E.waitFor(30) {
                (get(lab.info.a, "/rest/db/status?folder=\(id)") as? [String: Any])?["state"] as? String == "idle"
            })
        #expect(E2E.waitFor(15) { s.count("events received") > before })
        Thread.sleep(forTimeInterval: 3)

        try Data("private\n".utf8).write(to: path.appendingPathComponent("private.md"))
        let indexed = E2E.waitFor(20) {
            ((get(lab.info.a, "/rest/db/status?folder=\(id)") as? [String: Any])?["localFiles"] as? Int ?? 0) >= 1
        }
        #expect(indexed, "Syncthing did not index the change in the unshared folder")
        Thread.sleep(forTimeInterval: 8)
        #expect(relay.triggers.isEmpty, evidence(s, relay))

        // Liveness: a change in a shared folder still wakes.
        try lab.write("vault", "after-solo.md")
        #expect(E2E.waitFor(20) { relay.triggers.count >= 1 }, evidence(s, relay))
        Thread.sleep(forTimeInterval: 3)
        #expect(relay.triggers.count == 1, evidence(s, relay))
        expectNoLeaks(s)
    }

    @Test("a stopped peer that needs data is woken on every sweep")
    func stoppedPeerEverySweep() throws {
        let relay = try startRelay()
        let s = try start(relay, ["STALE_RETRIGGER_SECONDS": "10", "RELAY_WINDOW_SECONDS": "0"])
        #expect(s.waitConnected())
        // B first receives one file, so that A knows B's index for the folder.
        try lab.write("vault", "before.md")
        #expect(E2E.waitFor(20) { relay.triggers.count >= 1 })
        #expect(E2E.waitFor(30) { needOfB()?.inSync == true })
        try lab.command("stop", "b")
        #expect(E2E.waitFor(30) { bConnected() == false })
        // While B is offline but in sync, sweeps do not wake.
        Thread.sleep(forTimeInterval: 12)
        #expect(stalePeerDeliveries(s).isEmpty, evidence(s, relay))

        let before = relay.triggers.count
        try lab.write("vault", "while-stopped.md")
        #expect(E2E.waitFor(20) { relay.triggers.count > before }, evidence(s, relay))
        let woken = try #require(relay.triggers.last?.t)
        #expect(E2E.waitFor(30) { needOfB()?.inSync == false })
        // Every 10 s sweep finds B offline and needing data: at least 3 more wake-ups within ~40 s.
        let swept = E2E.waitFor(45) { stalePeerDeliveries(s).count >= 3 }
        #expect(swept, evidence(s, relay))
        #expect(relay.triggers.filter { $0.t > woken }.count >= 3, evidence(s, relay))
        #expect(relay.triggers.allSatisfy { $0.status == 202 }, evidence(s, relay))
        expectNoLeaks(s)
    }

    @Test("a connected peer that still needs data is never swept awake; a peer with no index yet wakes once")
    func connectedPeerNotSwept() throws {
        // No seed: B has sent no index for vault yet, so Syncthing first reports it at sequence 0 (1.x: complete;
        // 2.x: needing everything) and then needing data once its index arrives. That is one change and must stay
        // one wake-up.
        let relay = try startRelay()
        let s = try start(relay, ["STALE_RETRIGGER_SECONDS": "10", "RELAY_WINDOW_SECONDS": "0"])
        #expect(s.waitConnected())
        // 40 × 20 KB at 8 KiB/s: after Syncthing's initial burst (about 512 KiB), B needs data for about 30 s.
        try throttleB(kibPerSecond: 8)
        Thread.sleep(forTimeInterval: 1)
        try writeFiles("vault", "slow", count: 40, size: 20_000)
        #expect(E2E.waitFor(20) { relay.triggers.count >= 1 }, evidence(s, relay))
        try #require(E2E.waitFor(20) { needOfB()?.inSync == false }, "B never needed data")
        let sweepsBefore = s.count("stale-peer sweep finished")

        // Two sweeps must finish while B is seen connected and needing data before and after them.
        var stillNeeding = true
        let swept = E2E.waitFor(40) {
            guard let need = needOfB(), let connected = bConnected() else { return false }
            stillNeeding = !need.inSync && connected
            Thread.sleep(forTimeInterval: 1)
            return !stillNeeding || s.count("stale-peer sweep finished") >= sweepsBefore + 2
        }
        #expect(swept)
        let sweeps = s.count("stale-peer sweep finished") - sweepsBefore
        #expect(stillNeeding && sweeps >= 2, "B got in sync (or disconnected) after only \(sweeps) sweeps")
        #expect(!s.lines.contains { $0.contains("reason=stale-peer") }, evidence(s, relay, events: true))
        #expect(relay.triggers.count == 1, evidence(s, relay))
        expectNoLeaks(s)
    }
}
