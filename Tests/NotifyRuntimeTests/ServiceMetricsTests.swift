import Foundation
import NotifyCore
import Testing

@testable import NotifyRuntime
@testable import NotifyTestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// METRICS_FILE written by the real `Service` on virtual time (README.md, "Metrics"), checked with a strict
/// parser of Prometheus' text format (`Tests/Lab/promtext_check.py`, standing in for promtool).
@Suite("Service: METRICS_FILE")
struct ServiceMetricsTests {
    /// The checker's verdict on `path`: `ok: …` on success; throws with its problem lines otherwise.
    static func promtextCheck(_ path: String) throws -> String {
        let tool = TestScripts.lab("promtext_check.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", tool.path, "--conventions", path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TestFailure("promtext_check: \(text)") }
        return text
    }

    static func read(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    /// The sample lines of `text` that start with `prefix`.
    static func samples(_ text: String, _ prefix: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter { $0.hasPrefix(prefix) }
    }

    @Test("after a wake-up the file holds it, the events, and the times; it parses strictly; a stop writes up 0")
    func wakeUpIsInTheFile() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.file("vaultsync-notify.prom")
        // LOG_LEVEL=error: the counted records are debug and info records, and count all the same.
        let rig = ServiceRig(announce: false, metricsFile: path, logLevel: .error)
        rig.start()
        // Written at once at the start: up, nothing counted yet.
        var text = try Self.read(path)
        #expect(Self.samples(text, "vaultsync_notify_up ") == ["vaultsync_notify_up 1"])
        #expect(Self.samples(text, "vaultsync_notify_events_read_total ") == ["vaultsync_notify_events_read_total 0"])
        // The release that runs, and when its process started (before the service: the config.xml wait came first).
        #expect(
            Self.samples(text, "vaultsync_notify_build_info")
                == [#"vaultsync_notify_build_info{version="\#(Version.current)"} 1"#])
        #expect(Self.samples(text, "process_start_time_seconds ") == ["process_start_time_seconds 1717999999.500"])

        // Two changes (the long-poll answers 2 s after t0), the wake-up 5 s later; then the throttle's next write.
        rig.answer([(1, "LocalIndexUpdated"), (2, "LocalIndexUpdated")])
        rig.advance(seconds: 10)
        #expect(rig.reasons.isEmpty, "nothing logged at LOG_LEVEL=error")
        #expect(rig.triggers == 1)
        text = try Self.read(path)
        #expect(
            Self.samples(text, "vaultsync_notify_wakeups_total{reason=\"change\"")
                == [
                    #"vaultsync_notify_wakeups_total{reason="change",outcome="delivered"} 1"#,
                    #"vaultsync_notify_wakeups_total{reason="change",outcome="inactive"} 0"#,
                    #"vaultsync_notify_wakeups_total{reason="change",outcome="rate-limited"} 0"#,
                    #"vaultsync_notify_wakeups_total{reason="change",outcome="transient"} 0"#,
                ])
        #expect(Self.samples(text, "vaultsync_notify_events_read_total ") == ["vaultsync_notify_events_read_total 2"])
        #expect(
            Self.samples(text, "vaultsync_notify_last_poll_success_timestamp_seconds ")
                == ["vaultsync_notify_last_poll_success_timestamp_seconds 1718000002"])
        #expect(
            Self.samples(text, "vaultsync_notify_last_wakeup_delivered_timestamp_seconds ")
                == ["vaultsync_notify_last_wakeup_delivered_timestamp_seconds 1718000007"])
        #expect(try Self.promtextCheck(path) == "ok: 10 families, 39 samples\n")
        // Nothing that names the server, a folder or an address.
        for secret in [ServiceRig.idA, ServiceRig.phone, "\"vault\"", "127.0.0.1", "k3y", dir.path] {
            #expect(!text.contains(secret))
        }
        // node_exporter runs as another user: readable by all, whatever the umask; no temporary file left.
        var st = stat()
        #expect(stat(path, &st) == 0 && st.st_mode & 0o777 == 0o644)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["vaultsync-notify.prom"])

        rig.stop()
        #expect(rig.exits.withLock { $0 } == [.ok])
        text = try Self.read(path)
        #expect(Self.samples(text, "vaultsync_notify_up ") == ["vaultsync_notify_up 0"])
        #expect(try Self.promtextCheck(path) == "ok: 10 families, 39 samples\n")
    }

    @Test("poll failures by code, and a wake-up held for the relay's push window")
    func failuresAndDeferrals() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.file("m.prom")
        let rig = ServiceRig(window: .seconds(30), metricsFile: path)
        rig.start()
        // The announce opened the window; a change now is held until it ends.
        rig.answer([(1, "LocalIndexUpdated")])
        rig.advance(seconds: 10)
        rig.fail(.timeout)
        rig.advance(seconds: 60)
        #expect(rig.reasons == [.announce, .change])
        let text = try Self.read(path)
        #expect(
            Self.samples(text, "vaultsync_notify_relay_window_deferrals_total ")
                == ["vaultsync_notify_relay_window_deferrals_total 1"])
        #expect(
            Self.samples(text, "vaultsync_notify_poll_failures_total")
                == [#"vaultsync_notify_poll_failures_total{code="transport.timeout"} 1"#])
        #expect(
            Self.samples(text, "vaultsync_notify_wakeups_total{reason=\"announce\",outcome=\"delivered\"}")
                == [#"vaultsync_notify_wakeups_total{reason="announce",outcome="delivered"} 1"#])
        #expect(try Self.promtextCheck(path) == "ok: 10 families, 40 samples\n")
    }

    @Test("a Syncthing that is down counts each failed retry, at LOG_LEVEL=error as at debug")
    func unreachableSyncthingCountsEveryRetry() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        var counted: [String] = []
        var logged = 0
        for level in [LogLevel.debug, .error] {
            let path = dir.file("\(level.name).prom")
            let rig = ServiceRig(announce: false, metricsFile: path, logLevel: level)
            rig.start()
            rig.takeSyncthingDown()
            rig.advance(seconds: 120)
            // The stop's write has the last retry in it, however close to the end that came.
            rig.stop()
            if level == .debug { logged = rig.logged(.syncthingUnavailable).count }
            counted += Self.samples(try Self.read(path), "vaultsync_notify_poll_failures_total")
        }
        #expect(logged > 5)
        let line = #"vaultsync_notify_poll_failures_total{code="transport.connect"} "# + String(logged)
        #expect(counted == [line, line])
    }

    @Test("an unwritable METRICS_FILE logs one warning and the service goes on waking the phone")
    func unwritableFileWarnsOnce() throws {
        let rig = ServiceRig(announce: false, metricsFile: "/nonexistent-vsn-dir/m.prom")
        rig.start()
        for id in 1...3 {
            rig.answer([(2 * id - 1, "LocalIndexUpdated"), (2 * id, "LocalIndexUpdated")])
            rig.advance(seconds: 60)
        }
        #expect(rig.reasons == [.change, .change, .change])
        #expect(rig.logged(.metricsFileUnwritable) == [LogRecord(.warn, .metricsFileUnwritable)])
        #expect(rig.exits.withLock { $0 }.isEmpty)
    }
}
