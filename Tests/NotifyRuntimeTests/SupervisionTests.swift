import Dispatch
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

@Suite("Supervision: state file, healthcheck, systemd notify, logs", .serialized)
struct SupervisionTests {
    // MARK: State file

    @Test("the state file is written atomically (no temporary left, mode 0600) and read back")
    func stateFileWriteRead() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let file = try #require(StateFile.locate(environment: ["RUNTIME_DIRECTORY": dir.path], create: false))
        #expect(file.path == dir.path + "/" + StateFile.fileName(environment: [:]))
        #expect(file.read() == .missing)
        let state = ServiceState(lastPoll: 1_718_000_123, relay: .inactive)
        #expect(file.write(state))
        #expect(file.read() == .found(state))
        #expect(try String(contentsOfFile: file.path, encoding: .utf8) == state.encoded())
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == [StateFile.fileName(environment: [:])])
        var st = stat()
        #expect(stat(file.path, &st) == 0 && st.st_mode & 0o777 == 0o600)
        // A rewrite replaces it whole.
        #expect(file.write(ServiceState(lastPoll: 1_718_000_200, relay: .delivered)))
        #expect(file.read() == .found(ServiceState(lastPoll: 1_718_000_200, relay: .delivered)))
    }

    @Test("RUNTIME_DIRECTORY: the first of several entries, created 0700 when missing; relative paths refused")
    func runtimeDirectory() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let sub = dir.file("rt")
        let file = try #require(StateFile.locate(environment: ["RUNTIME_DIRECTORY": "\(sub):/elsewhere"], create: true))
        #expect(file.path == sub + "/state-cbf29ce484222325")
        var st = stat()
        #expect(stat(sub, &st) == 0 && st.st_mode & 0o777 == 0o700)
        #expect(StateFile.locate(environment: ["RUNTIME_DIRECTORY": "relative"], create: false) == nil)
    }

    @Test("a shared directory is used only when it is ours, real, and closed to others")
    func ownedDirectory() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let uid = geteuid()
        #expect(chmod(dir.path, 0o700) == 0)
        #expect(StateFile.ownedDirectory(dir.path, uid: uid, privateOnly: true))
        #expect(!StateFile.ownedDirectory(dir.path, uid: uid &+ 1, privateOnly: false))
        #expect(chmod(dir.path, 0o755) == 0)
        #expect(!StateFile.ownedDirectory(dir.path, uid: uid, privateOnly: true))
        #expect(StateFile.ownedDirectory(dir.path, uid: uid, privateOnly: false))
        #expect(symlink(dir.path, dir.file("link")) == 0)
        #expect(!StateFile.ownedDirectory(dir.file("link"), uid: uid, privateOnly: false))
    }

    @Test("a state file that is a symlink, someone else's, or garbage is not read")
    func hostileStateFile() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let file = StateFile(path: dir.file("state"))
        try "vaultsync-notify-state 1\nlast_poll=5\n".write(
            toFile: dir.file("real"), atomically: false, encoding: .utf8)
        #expect(symlink(dir.file("real"), file.path) == 0)
        #expect(file.read() == .unreadable)
        #expect(StateFile(path: dir.file("real")).read() == .found(ServiceState(lastPoll: 5)))
        #expect(StateFile(path: dir.file("real")).read(uid: geteuid() &+ 1) == .unreadable)
        try "hello".write(toFile: dir.file("real"), atomically: false, encoding: .utf8)
        #expect(StateFile(path: dir.file("real")).read() == .unreadable)
    }

    // MARK: Healthcheck

    func healthEnvironment(_ dir: TemporaryDirectory, port: Int, key: String = "k3y") -> [String: String] {
        [
            "RELAY_URL": "http://127.0.0.1:9", "SYNCTHING_API_URL": "http://127.0.0.1:\(port)",
            "SYNCTHING_API_KEY": key, "RUNTIME_DIRECTORY": dir.path, "HOME": dir.path,
        ]
    }

    /// The state file the service would write for `env` (and `--healthcheck` reads).
    func stateFile(_ env: [String: String]) throws -> StateFile {
        try #require(StateFile.locate(environment: env, create: false))
    }

    func timed<T>(_ body: () -> T) -> (T, Duration) {
        let start = ContinuousClock.now
        let value = body()
        return (value, ContinuousClock.now - start)
    }

    @Test("healthy: a fresh poll in the state file and Syncthing answering; any relay category")
    func healthy() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let syncthing = try FakeSyncthingStatus(key: "k3y")
        let env = healthEnvironment(dir, port: syncthing.port)
        let now = SystemClock().unixSeconds()
        for category in RelayOutcomeCategory.allCases {
            #expect(try stateFile(env).write(ServiceState(lastPoll: now - 30, relay: category)))
            #expect(Healthcheck.check(environment: env, now: now) == .healthy)
        }
        let (status, elapsed) = timed { Healthcheck.run(environment: env) }
        #expect(status == .ok)
        #expect(elapsed < .seconds(2))
    }

    @Test("unhealthy: a stale poll, no state file, or an invalid environment; Syncthing is not even asked")
    func staleOrMissing() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let env = healthEnvironment(dir, port: 9)
        let now = SystemClock().unixSeconds()
        #expect(Healthcheck.check(environment: env, now: now) == .noState)
        #expect(try stateFile(env).write(ServiceState(lastPoll: now - 121, relay: .delivered)))
        #expect(Healthcheck.check(environment: env, now: now) == .stale)
        #expect(try stateFile(env).write(ServiceState(lastPoll: nil, relay: .none)))
        #expect(Healthcheck.check(environment: env, now: now) == .stale)
        var bad = env
        bad["LOG_FORMAT"] = "yaml"
        #expect(Healthcheck.check(environment: bad, now: now) == .configuration)
        let (status, elapsed) = timed { Healthcheck.run(environment: env) }
        #expect(status == .checkFailed)
        #expect(elapsed < .seconds(2))
    }

    @Test("unhealthy: Syncthing refusing connections, or rejecting the key; promptly")
    func syncthingDown() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let refusing = try RefusingPort()
        let now = SystemClock().unixSeconds()
        let env = healthEnvironment(dir, port: refusing.port)
        #expect(try stateFile(env).write(ServiceState(lastPoll: now, relay: .delivered)))
        #expect(Healthcheck.check(environment: env, now: now) == .syncthingDown)
        let (status, elapsed) = timed { Healthcheck.run(environment: env) }
        #expect(status == .checkFailed)
        #expect(elapsed < .seconds(2))

        let syncthing = try FakeSyncthingStatus(key: "right")
        let wrongKey = healthEnvironment(dir, port: syncthing.port, key: "wrong")
        #expect(try stateFile(wrongKey).write(ServiceState(lastPoll: now, relay: .delivered)))
        #expect(Healthcheck.check(environment: wrongKey, now: now) == .syncthingDown)
    }

    @Test("a Syncthing that accepts but never answers: the healthcheck still answers in under 2 s")
    func hungSyncthingStillGetsAnAnswerInTime() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let silent = try SilentPort()
        let env = healthEnvironment(dir, port: silent.port)
        #expect(try stateFile(env).write(ServiceState(lastPoll: SystemClock().unixSeconds(), relay: .none)))
        let (status, elapsed) = timed { Healthcheck.run(environment: env) }
        #expect(status == .checkFailed)
        #expect(elapsed < .seconds(2))
    }

    @Test("the overall bound answers even when a step never returns")
    func boundedBody() {
        let (verdict, elapsed) = timed {
            Healthcheck.bounded(.milliseconds(200)) {
                usleep(3_000_000)
                return .healthy
            }
        }
        #expect(verdict == .timedOut)
        #expect(elapsed < .seconds(1))
    }

    // MARK: systemd notify

    @Test("NOTIFY_SOCKET: path and abstract names; unset, relative or vsock means no notifier")
    func notifierAddresses() {
        #expect(SystemdNotifier(socket: "/run/systemd/notify")?.address == .path("/run/systemd/notify"))
        #expect(SystemdNotifier(socket: "@/org/systemd/notify")?.address == .abstract("/org/systemd/notify"))
        #expect(SystemdNotifier(environment: [:]) == nil)
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": ""]) == nil)
        #expect(SystemdNotifier(socket: "relative") == nil)
        #expect(SystemdNotifier(socket: "vsock:2:1") == nil)
        #expect(SystemdNotifier(socket: "@") == nil)
        #expect(SystemdNotifier(socket: "/" + String(repeating: "x", count: 200)) == nil)
    }

    @Test("WATCHDOG_USEC halves into the ping interval; WATCHDOG_PID of another process turns it off")
    func watchdogInterval() {
        let pid = getpid()
        #expect(SystemdNotifier.watchdogInterval(environment: ["WATCHDOG_USEC": "30000000"]) == .seconds(15))
        #expect(
            SystemdNotifier.watchdogInterval(environment: ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "\(pid)"])
                == .seconds(15))
        #expect(
            SystemdNotifier.watchdogInterval(
                environment: ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"],
                pid: 2) == nil)
        #expect(SystemdNotifier.watchdogInterval(environment: [:]) == nil)
        #expect(SystemdNotifier.watchdogInterval(environment: ["WATCHDOG_USEC": "0"]) == nil)
        #expect(SystemdNotifier.watchdogInterval(environment: ["WATCHDOG_USEC": "soon"]) == nil)
    }

    @Test("datagrams reach a real socket bound to a path and to an abstract name")
    func sendsToRealSockets() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let byPath = try DatagramReceiver(path: dir.file("notify"))
        let abstract = try DatagramReceiver(abstract: "vsn-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        for receiver in [byPath, abstract] {
            let notifier = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": receiver.notifySocket]))
            #expect(notifier.send([.ready, .status(.watching)]))
            #expect(receiver.receive() == "READY=1\nSTATUS=watching Syncthing events")
            #expect(notifier.send([.watchdog]))
            #expect(receiver.receive() == "WATCHDOG=1")
            #expect(notifier.send([.stopping]))
            #expect(receiver.receive() == "STOPPING=1")
        }
        // Nobody listening: the send fails quietly.
        #expect(!SystemdNotifier(socket: dir.file("nobody"))!.send([.ready]))
    }

    @Test("the monitor: READY once after the first poll, STATUS on change only, STOPPING, the state file")
    func monitorProtocol() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let receiver = try DatagramReceiver(abstract: "vsn-mon-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        let clock = ManualRuntime()
        let stateFile = StateFile(path: dir.file("state"))
        let monitor = ServiceMonitor(
            notifier: SystemdNotifier(socket: receiver.notifySocket), stateFile: stateFile,
            watchdogInterval: .seconds(15), clock: clock)
        monitor.status(.connecting)
        #expect(receiver.receive() == "STATUS=connecting to Syncthing")
        #expect(stateFile.read() == .missing)
        monitor.pollSucceeded()
        #expect(receiver.receive() == "READY=1\nSTATUS=watching Syncthing events")
        #expect(stateFile.read().state?.healthcheckFields == ServiceState(lastPoll: 1_718_000_000, relay: .none))
        clock.advance(by: .seconds(3))
        monitor.pollSucceeded()
        #expect(receiver.receive(timeout: .milliseconds(200)) == nil)
        #expect(stateFile.read().state?.lastPoll == 1_718_000_000)  // throttled
        monitor.relayOutcome(.subscriptionInactive(status: 402))
        #expect(receiver.receive() == "STATUS=watching; no active relay subscription for this server yet")
        clock.advance(by: .seconds(1))
        monitor.pollSucceeded()  // a new category is written at once
        #expect(stateFile.read().state?.healthcheckFields == ServiceState(lastPoll: 1_718_000_004, relay: .inactive))
        monitor.syncthingUnavailable()
        #expect(receiver.receive() == "STATUS=Syncthing not reachable, retrying")
        clock.advance(by: .seconds(20))
        monitor.pollSucceeded()
        #expect(receiver.receive() == "STATUS=watching; no active relay subscription for this server yet")
        #expect(stateFile.read().state?.healthcheckFields == ServiceState(lastPoll: 1_718_000_024, relay: .inactive))
        monitor.stopping()
        #expect(receiver.receive() == "STOPPING=1\nSTATUS=stopping")
        monitor.stopping()
        monitor.status(.watching)
        #expect(receiver.receive(timeout: .milliseconds(200)) == nil)
    }

    /// A monitor with a 15 s watchdog on a manual runtime, its datagrams to a socket of its own (`name`), started.
    static func startedWatchdog(_ name: String) throws -> (DatagramReceiver, ManualRuntime, ServiceMonitor) {
        let receiver = try DatagramReceiver(abstract: "vsn-\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        let clock = ManualRuntime()
        let monitor = ServiceMonitor(
            notifier: SystemdNotifier(socket: receiver.notifySocket), watchdogInterval: .seconds(15), clock: clock)
        monitor.startWatchdog(on: clock)
        return (receiver, clock, monitor)
    }

    @Test("the watchdog pings while the poll loop progresses and stops when a step overruns its bound")
    func watchdogStopsWhenStuck() throws {
        let (receiver, clock, monitor) = try Self.startedWatchdog("wd")
        clock.advance(by: .zero)  // the first tick, at once
        #expect(receiver.receive() == "WATCHDOG=1")
        // A long-poll in flight is progress until its 65 s bound (+5 s grace).
        monitor.stepStarted(bound: SyncthingTimeouts.pollRequest)
        for _ in 0..<4 {
            clock.advance(by: .seconds(15))
            #expect(receiver.receive() == "WATCHDOG=1")
        }
        clock.advance(by: .seconds(40))  // the ticks at 75 s and 90 s into a 65 s poll: wedged
        #expect(receiver.receive(timeout: .milliseconds(200)) == nil)
        // It came back at 100 s: the tick at 105 s pings.
        monitor.stepFinished()
        clock.advance(by: .seconds(5))
        #expect(receiver.receive() == "WATCHDOG=1")
        // The tick at 120 s, 20 s between steps: stuck outside any bounded call.
        clock.advance(by: .seconds(15))
        #expect(receiver.receive(timeout: .milliseconds(200)) == nil)
    }

    @Test("a watchdog started again replaces its ticks: one ping per interval, not two")
    func watchdogRestarts() throws {
        let (receiver, clock, monitor) = try Self.startedWatchdog("wr")
        monitor.stepStarted(bound: SyncthingTimeouts.pollRequest)  // a long-poll runs throughout
        clock.advance(by: .seconds(5))
        #expect(receiver.receive() == "WATCHDOG=1")
        monitor.startWatchdog(on: clock)  // the service starts after the config.xml wait
        clock.advance(by: .zero)
        #expect(receiver.receive() == "WATCHDOG=1")
        #expect(clock.nextTimer == clock.now() + .seconds(15))
        clock.advance(by: .seconds(15))
        #expect(receiver.receive() == "WATCHDOG=1")
        #expect(receiver.receive(timeout: .milliseconds(200)) == nil)
    }

    @Test("the production runtime's watchdog ticks on its engine queue; a wedged queue sends nothing")
    func watchdogTimer() throws {
        let receiver = try DatagramReceiver(abstract: "vsn-wt-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        let monitor = ServiceMonitor(
            notifier: SystemdNotifier(socket: receiver.notifySocket),
            watchdogInterval: SystemdNotifier.watchdogInterval(environment: ["WATCHDOG_USEC": "100000"]))
        let runtime = DispatchRuntime()
        monitor.startWatchdog(on: runtime)
        #expect(receiver.receive() == "WATCHDOG=1")
        #expect(receiver.receive() == "WATCHDOG=1")
        let release = DispatchSemaphore(value: 0)
        runtime.engine.async { release.wait() }  // wedge the engine queue
        usleep(100_000)
        while receiver.receive(timeout: .milliseconds(10)) != nil {}  // drain a tick that raced the wedge
        #expect(receiver.receive(timeout: .milliseconds(400)) == nil)
        release.signal()
        #expect(receiver.receive() == "WATCHDOG=1")
        monitor.stopping()
    }

    @Test("no NOTIFY_SOCKET: no watchdog, nothing sent, no timer armed")
    func noSocket() {
        let clock = ManualRuntime()
        let monitor = ServiceMonitor(notifier: nil, watchdogInterval: .seconds(1), clock: clock)
        #expect(monitor.watchdogInterval == nil)
        monitor.pollSucceeded()
        monitor.startWatchdog(on: clock)
        #expect(clock.scheduled == 0)
    }

    // MARK: Logs

    @Test("under journald: <N> prefix and no timestamp, text or json; elsewhere a timestamp")
    func sinkLines() throws {
        let record = LogRecord(.warn, .triggerFailed, [.status(503), .delay(.milliseconds(1500))])
        let journald = StderrLogSink(environment: ["JOURNAL_STREAM": "8:12345"])
        #expect(journald.line(record) == #"<4>level=warn msg="wake-up failed; backing off" status=503 delay=1.500"#)
        let journaldJSON = StderrLogSink(environment: ["JOURNAL_STREAM": "8:12345"], format: .json)
        #expect(
            journaldJSON.line(record)
                == #"<4>{"level":"warn","msg":"wake-up failed; backing off","status":503,"delay":1.500}"#)
        let plain = StderrLogSink(environment: [:])
        #expect(plain.line(record).hasSuffix(#"Z level=warn msg="wake-up failed; backing off" status=503 delay=1.500"#))
        // The time is the clock's wall clock, to the millisecond.
        let clock = ManualRuntime()
        clock.stepWallClock(by: .milliseconds(-1))
        #expect(
            StderrLogSink(environment: [:], clock: clock).line(record)
                == #"2024-06-10T06:13:19.999Z level=warn msg="wake-up failed; backing off" status=503 delay=1.500"#)
        let json = StderrLogSink(environment: [:], format: .json)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(json.line(record).utf8)) as? [String: Any])
        #expect((object["time"] as? String)?.hasSuffix("Z") == true)
        #expect(object["status"] as? Int == 503)
        #expect(object["delay"] as? Double == 1.5)
    }
}
