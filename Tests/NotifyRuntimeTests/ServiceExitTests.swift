import Foundation
import NotifyCore
import Testing

@testable import NotifyRuntime
@testable import NotifyTestSupport

/// What each way out of the running service tells the outside world (`Engine.Exit.farewell`): systemd, the state
/// file and METRICS_FILE.
@Suite("Service exits: STOPPING, the state file and up 0")
struct ServiceExitTests {
    /// A notify socket, a state file and a metrics file in a temporary directory, seen by one rig.
    final class Outside {
        let dir: TemporaryDirectory
        let receiver: DatagramReceiver
        let stateFile: StateFile
        var metricsPath: String { dir.file("notify.prom") }

        init(_ name: String) throws {
            dir = try TemporaryDirectory()
            receiver = try DatagramReceiver(abstract: "vsn-\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
            stateFile = StateFile(path: dir.file("state"))
        }

        func rig(announce: Bool = true) -> ServiceRig {
            ServiceRig(
                announce: announce, notifySocket: receiver.notifySocket, stateFile: stateFile, metricsFile: metricsPath)
        }

        /// True when METRICS_FILE's last write says the service is down.
        func metricsSayDown() throws -> Bool {
            try String(contentsOfFile: metricsPath, encoding: .utf8).contains("vaultsync_notify_up 0\n")
        }

        deinit { dir.remove() }
    }

    @Test("a relay 404 at start exits 78 without STOPPING=1; the state file goes and the metrics say up 0")
    func failedExit() throws {
        let outside = try Outside("exit")
        // A file left by the run before: a dead process's last poll must not stay behind it.
        #expect(outside.stateFile.write(ServiceState(lastPoll: 1_717_999_990, relay: .delivered)))
        let rig = outside.rig()
        rig.relay.state.withLock { $0.health = 404 }
        rig.start()
        #expect(rig.exits.withLock { $0 } == [NotifyCore.ExitStatus.configuration])
        #expect(rig.fatalLines.withLock { $0.count } == 1)
        #expect(outside.receiver.receive() == "STATUS=connecting to Syncthing")
        #expect(outside.receiver.receive(timeout: .milliseconds(200)) == nil)
        #expect(outside.stateFile.read() == .missing)
        #expect(try outside.metricsSayDown())
    }

    @Test("SIGTERM exits 0 with STOPPING=1 once; the state file goes and the metrics say up 0")
    func stoppedExit() throws {
        let outside = try Outside("stop")
        let rig = outside.rig(announce: false)
        rig.start()
        #expect(outside.receiver.receive() == "STATUS=connecting to Syncthing")
        #expect(outside.receiver.receive() == "READY=1\nSTATUS=watching Syncthing events")
        #expect(outside.stateFile.read().state != nil)
        rig.stop()
        #expect(rig.exits.withLock { $0 } == [NotifyCore.ExitStatus.ok])
        #expect(outside.receiver.receive() == "STOPPING=1\nSTATUS=stopping")
        #expect(outside.receiver.receive(timeout: .milliseconds(200)) == nil)
        #expect(outside.stateFile.read() == .missing)
        #expect(try outside.metricsSayDown())
    }
}
