import Foundation
import Testing

/// Syncthing's GUI moves while the sidecar runs: Settings → GUI → a new listen port (and key), saved the way the web
/// GUI saves it (`PUT /rest/config`, Tests/Lab/stlab.py `move-gui`). Syncthing restarts only its GUI server: the old
/// port refuses connections from then on, config.xml holds the new address, a ConfigSaved event announces it, and the
/// event ids go on (docs/syncthing-api.md, When the GUI address changes). The sidecar gets its Syncthing access from
/// config.xml alone, as an installed one does (the harness sets SYNCTHING_CONFIG and neither SYNCTHING_API_URL nor
/// SYNCTHING_API_KEY), so it has to follow the file: a change made after the move must still wake the relay.
///
/// Each test moves A's GUI once on a fresh lab: Syncthing holds back a sixth GUI change in quick succession for about
/// 17 s.
extension EndToEndTests {
    /// From the change on A to its wake-up, following the moved GUI included: the sidecar re-reads config.xml on the
    /// ConfigSaved, then the watcher delay (1 s) and the debounce (1 s) follow (about 2 s in all).
    static let followBound: TimeInterval = 30
    /// The same when Syncthing was stopped, its config.xml edited and Syncthing started again. The sidecar re-reads the
    /// file once Syncthing has been unreachable for 5 s and then every 15 s; the first re-read may come while
    /// Syncthing is still stopping (10 s for 1.29.5 in the lab), before the file changed. Generous: a loaded machine.
    static let offlineFollowBound: TimeInterval = 90

    @Test("GUI moved to a new port while the sidecar runs → a change afterwards wakes the relay")
    func guiMoved() throws {
        try moveThenChange(apiKey: nil)
    }

    @Test("GUI moved and given a new API key at once → a change afterwards wakes the relay")
    func guiMovedWithNewKey() throws {
        try moveThenChange(apiKey: "vsn-e2e-moved-\(UUID().uuidString.prefix(8))")
    }

    /// No ConfigSaved reaches the sidecar here: it finds the new address only by re-reading config.xml while Syncthing
    /// stays unreachable.
    @Test("Syncthing stopped, its GUI port and key edited in config.xml, started → a later change wakes the relay")
    func guiMovedOffline() throws {
        try moveThenChange(apiKey: "vsn-e2e-offline-\(UUID().uuidString.prefix(8))", offline: true)
    }

    /// Starts the sidecar, moves A's GUI (with `apiKey`, a new key too; `offline`: by stopping Syncthing, editing config.xml and
    /// starting it), then changes a file on A twice: a wake-up must reach the relay after each change, the later one with
    /// reason=change, and no log line may carry the old or the new address or key.
    func moveThenChange(apiKey: String?, offline: Bool = false) throws {
        let s = try start()
        #expect(s.waitConnected())
        let old = lab.info.a
        let moved = try lab.moveGUI("a", apiKey: apiKey, offline: offline)
        #expect(moved.gui_url != old.gui_url)
        #expect(moved.api_key == (apiKey ?? old.api_key))

        // The change right after the move. Online, its LocalIndexUpdated waits in Syncthing's buffer until the sidecar
        // polls the new address from its cursor. Offline, Syncthing restarted: the sidecar starts from the head of the
        // new run's events, and its re-sync wake-up (reason=resync) covers a change made while it could not see them.
        let changed = Date().timeIntervalSince1970
        try lab.write("vault", "after-move.md")
        let bound = offline ? Self.offlineFollowBound : Self.followBound
        let first = E2E.waitFor(bound) { relay.delivered.contains { $0.t >= changed } }
        #expect(first, "no wake-up within \(bound) s of a change after the GUI moved:\n\(s.log)")
        if first { print("GUI moved → wake-up delivered \(Date().timeIntervalSince1970 - changed) s after a change") }

        // And the sidecar stays at the new address: a later change wakes the relay within the usual delay.
        let before = changeWakeUps(s)
        let later = Date().timeIntervalSince1970
        try lab.write("vault", "later.md")
        let again = E2E.waitFor(15) { changeWakeUps(s) > before && relay.delivered.contains { $0.t >= later } }
        #expect(again, "no wake-up for a later change:\n\(s.log)")
        #expect(relay.delivered.count >= 2)
        #expect(s.process.isRunning, "the sidecar exited:\n\(s.log)")

        if !offline {
            // Syncthing did not restart and lost no event: moving its GUI is no reason to wake the phone by itself, and
            // the first change was seen as one.
            let delivered = s.lines.filter { $0.contains("wake-up delivered") }
            #expect(delivered.allSatisfy { $0.contains("reason=change") }, "\(delivered)")
        }

        let addresses = [old, moved].flatMap { node in
            [node.gui_url, node.gui_url.replacingOccurrences(of: "http://", with: ""), node.api_key]
        }
        let leaks = s.leaks(lab.secrets + addresses)
        #expect(leaks.isEmpty, "log lines carrying an identifier or address: \(leaks)")
    }

    /// Wake-ups the relay confirmed for a change (the sidecar's own record of each).
    func changeWakeUps(_ s: Sidecar) -> Int {
        s.lines.filter { $0.contains("wake-up delivered") && $0.contains("reason=change") }.count
    }
}

extension Lab {
    /// Moves `node`'s GUI to a free port (and gives it `apiKey`) through `stlab.py move-gui`, which waits until the new
    /// address answers; `offline` edits config.xml and restarts the node instead. Returns the node as it is now; `info`
    /// keeps the addresses the lab came up with.
    func moveGUI(_ node: String, apiKey: String? = nil, offline: Bool = false) throws -> Node {
        let (status, out) = try E2E.run(
            E2E.stlab(
                ["move-gui", node, "--dir", dir.path] + (apiKey.map { ["--api-key", $0] } ?? [])
                    + (offline ? ["--offline"] : [])))
        guard status == 0 else { throw LabError.command("move-gui", status) }
        return try JSONDecoder().decode(Node.self, from: Data(out.utf8))
    }
}
