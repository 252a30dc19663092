import Foundation
import NotifyCore
import Testing

@testable import NotifyRuntime
@testable import NotifyTestSupport

/// `--status` over the real service composition: the `Service` on virtual time writes its state file through the
/// monitor, and `Status.report` reads it back with the health check against the same fake Syncthing.
@Suite("--status against the running service", .serialized)
struct StatusTests {
    /// The environment the service and `--status` share: the state file's place and the instance's variables.
    static func environment(_ dir: TemporaryDirectory) -> [String: String] {
        [
            "RUNTIME_DIRECTORY": dir.path, "RELAY_URL": "http://127.0.0.1:9000",
            "SYNCTHING_API_URL": "http://127.0.0.1:8384", "SYNCTHING_API_KEY": "k3y",
        ]
    }

    /// The rig's wall clock now, in seconds (1_718_000_000 at its start).
    static func wallNow(_ rig: ServiceRig) -> Int64 { rig.runtime.unixSeconds() }

    static func report(_ rig: ServiceRig, _ env: [String: String]) -> StatusReport {
        Status.report(environment: env, now: wallNow(rig), transport: rig.syncthing)
    }

    /// Every identifier the rig knows, the addresses, the key and the test's path. The product's name is blanked out
    /// first: the folder ID "vault" is part of it.
    static func leaks(_ output: String, _ dir: TemporaryDirectory) -> [String] {
        let scanned = output.replacingOccurrences(of: "vaultsync", with: "")
        return [ServiceRig.idA, ServiceRig.phone, "vault", "127.0.0.1", "8384", "9000", "k3y", dir.path, "state-"]
            .filter { scanned.contains($0) }
    }

    @Test("running: the announce's window, a change held for it, an inactive subscription, Syncthing down, stopped")
    func timeline() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let env = Self.environment(dir)
        let stateFile = try #require(StateFile.locate(environment: env, create: false))
        let rig = ServiceRig(sweep: .seconds(3600), window: .seconds(30), stateFile: stateFile)
        var outputs: [String] = []
        func status() -> StatusReport {
            let report = Self.report(rig, env)
            outputs += [report.text(), report.json()]
            return report
        }

        // Before the service: no instance.
        let before = status()
        #expect(before.exitStatus == .checkFailed)
        #expect(before.text().hasPrefix("vaultsync-notify: no running instance found for this environment"))

        // Started: the announce was delivered at once and opened the push window.
        rig.start()
        rig.advance(seconds: 2)
        let started = status()
        #expect(started.exitStatus == .ok)
        Golden.check("status-running.txt", started.text() + "\n")
        Golden.check("status-running.json", started.json() + "\n")

        // A change inside the window waits for its end.
        rig.answer([(1, "LocalIndexUpdated")])
        let held = status().text()
        #expect(held.contains("pending wake-up   change, goes out at 2024-06-10T06:13:50Z (in 26 s)"), "\(held)")

        // At the window's end it goes out and finds no subscription: re-checked every 60 s, the wake-up kept.
        rig.relay.state.withLock { $0.triggers = [.status(402)] }
        rig.advance(seconds: 27)
        let inactive = status()
        #expect(inactive.exitStatus == .ok)
        let text = inactive.text()
        #expect(text.contains("relay answer inactive (no active subscription)"), "\(text)")
        #expect(
            text.contains("relay             no active subscription for this server; re-checking at"), "\(text)")
        #expect(text.contains("pending wake-up   change, goes out at"), "\(text)")

        // Syncthing goes down: the service says so, and the health check fails.
        rig.takeSyncthingDown()
        rig.advance(seconds: 1)
        let down = status()
        #expect(down.health == .syncthingDown)
        #expect(down.exitStatus == .checkFailed)
        #expect(down.text().contains("Syncthing         not reachable"), "\(down.text())")

        // A clean stop removes the file: no instance again.
        rig.syncthing.state.withLock { $0.down = false }
        rig.stop()
        let stopped = status()
        #expect(!stopped.running && stopped.exitStatus == .checkFailed)

        for output in outputs {
            #expect(Self.leaks(output, dir).isEmpty, "an identifier in: \(output)")
        }
    }

    @Test("README's samples: the no-instance line word for word; the text's labels and the JSON's keys as printed")
    func readme() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        let readme = try String(contentsOf: url, encoding: .utf8)
        let section =
            try #require(readme.components(separatedBy: "\n## Is it working?\n").dropFirst().first)
            .components(separatedBy: "\n## ").first ?? ""
        #expect(section.contains("\n" + StatusReport(state: nil, health: .noState, now: 0).text() + "\n"))
        // The labels of the sample, in order, are those of a real report (the golden file from the rig).
        func labels(_ text: some StringProtocol) -> [String] {
            text.split(separator: "\n").filter { $0.hasPrefix("  ") && !$0.hasPrefix("   ") }.map {
                String($0.dropFirst(2).prefix(18)).trimmingCharacters(in: .whitespaces)
            }
        }
        let golden = try String(
            contentsOf: Golden.directory.appendingPathComponent("status-running.txt"), encoding: .utf8)
        let sample = try #require(
            section.components(separatedBy: "```\nvaultsync-notify: healthy\n").dropFirst().first?
                .components(separatedBy: "```").first)
        #expect(labels(sample) == labels(golden))
        #expect(labels(golden).count == 8)
        // The JSON sample's keys, in order, are those of a real report.
        func keys(_ text: some StringProtocol) -> [String] {
            text.split(separator: "\n").compactMap { line in
                line.split(separator: "\"").count > 2 && line.contains("\" : ")
                    ? String(line.split(separator: "\"")[1]) : nil
            }
        }
        let json = try #require(
            section.components(separatedBy: "```json\n").dropFirst().first?.components(separatedBy: "```").first)
        let goldenJSON = try String(
            contentsOf: Golden.directory.appendingPathComponent("status-running.json"), encoding: .utf8)
        // The sample has a pending wake-up, the golden file none: compare the keys outside "pending".
        func withoutPending(_ keys: [String]) -> [String] {
            guard let start = keys.firstIndex(of: "pending"), keys[start + 1] == "at" else { return keys }
            return Array(keys[..<start]) + ["pending"] + keys[(start + 4)...]
        }
        #expect(withoutPending(keys(json)) == keys(goldenJSON))
    }

    @Test("the mode prints the text or the JSON and exits with the health check's status")
    func mode() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        var env = Self.environment(dir)
        // Nothing listens on port 9 of loopback: no instance, and Syncthing is not asked.
        env["SYNCTHING_API_URL"] = "http://127.0.0.1:9"
        #expect(Status.run(environment: env, json: false) == .checkFailed)
        #expect(Status.run(environment: env, json: true) == .checkFailed)
        // No variables: the places on the host are looked in (here an empty stand-in for them), not an error.
        var empty = StatusDiscovery(environment: [:])
        (empty.run, empty.tmp) = (dir.file("run"), dir.file("tmp"))
        #expect(Status.run(environment: [:], json: false, discovery: empty) == .checkFailed)
    }
}
