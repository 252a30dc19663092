import Foundation
import Testing

/// Syncthing's GUI moves while the sidecar runs: Settings → GUI → a new listen port (and key), saved the way the web
/// GUI saves it (`PUT /rest/config`, tools/stlab.py `move-gui`). Syncthing restarts only its GUI server: the old port
/// refuses connections from then on, config.xml holds the new address, a ConfigSaved event announces it, and the event
/// ids go on (docs/syncthing-api.md, a moved GUI). The sidecar gets its Syncthing access from config.xml alone, as an
/// installed one does (the harness sets SYNCTHING_CONFIG and neither SYNCTHING_API_URL nor SYNCTHING_API_KEY), so it
/// has to follow the file: a change made after the move must still wake the relay.
///
/// Each test moves A's GUI once on a fresh lab: Syncthing holds back a sixth GUI change in quick succession for about
/// 17 s.
extension EndToEndTests {
    /// From the change on A to its wake-up, following the moved GUI included: the sidecar re-reads config.xml on the
    /// ConfigSaved or after Syncthing has stayed unreachable for a few seconds, then the watcher delay (1 s) and the
    /// debounce (1 s) follow. Without the move this takes about 2 s.
    static let followBound: TimeInterval = 30

    @Test("GUI moved to a new port while the sidecar runs → a change afterwards wakes the relay")
    func guiMoved() throws {
        try moveThenChange(apiKey: nil)
    }

    @Test("GUI moved and given a new API key at once → a change afterwards wakes the relay")
    func guiMovedWithNewKey() throws {
        try moveThenChange(apiKey: "vsn-e2e-moved-\(UUID().uuidString.prefix(8))")
    }

    /// Starts the sidecar, moves A's GUI (with `apiKey`, a new key too), then changes a file on A twice: each change
    /// must be delivered as a wake-up with reason=change, and no log line may carry the old or the new address or key.
    func moveThenChange(apiKey: String?) throws {
        let s = try start()
        #expect(s.waitConnected())
        let old = lab.info.a
        let moved = try lab.moveGUI("a", apiKey: apiKey)
        #expect(moved.gui_url != old.gui_url)
        #expect(moved.api_key == (apiKey ?? old.api_key))

        // The change right after the move: its LocalIndexUpdated waits in Syncthing's buffer until the sidecar polls
        // the new address from its cursor.
        let moveTime = Date()
        try lab.write("vault", "after-move.md")
        let first = E2E.waitFor(Self.followBound) { changeWakeUps(s) >= 1 }
        #expect(first, "no wake-up within \(Self.followBound) s of a change after the GUI moved:\n\(s.log)")
        if first { print("GUI move → first wake-up delivered after \(Date().timeIntervalSince(moveTime)) s") }

        // And the sidecar stays at the new address: a later change wakes the relay within the usual delay.
        let before = changeWakeUps(s)
        try lab.write("vault", "later.md")
        #expect(E2E.waitFor(15) { changeWakeUps(s) > before }, "no wake-up for a later change:\n\(s.log)")
        #expect(relay.delivered.count >= 2)
        #expect(s.process.isRunning, "the sidecar exited:\n\(s.log)")

        // Syncthing did not restart and lost no event, so moving the GUI is no reason to wake the phone by itself.
        let delivered = s.lines.filter { $0.contains("wake-up delivered") }
        #expect(delivered.allSatisfy { $0.contains("reason=change") }, "\(delivered)")

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
    /// address answers; returns the node as it is now. `info` keeps the addresses the lab came up with.
    func moveGUI(_ node: String, apiKey: String? = nil) throws -> Node {
        let (status, out) = try E2E.run(
            E2E.stlab(["move-gui", node, "--dir", dir.path] + (apiKey.map { ["--api-key", $0] } ?? [])))
        guard status == 0 else { throw LabError.command("move-gui", status) }
        return try JSONDecoder().decode(Node.self, from: Data(out.utf8))
    }
}
