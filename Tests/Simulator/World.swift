import NotifyCore
import NotifyRuntime

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One seed's run: the simulated world (Syncthing, the relay, the host's clocks, config.xml), the real `Service`
/// built from an environment as `App` builds it, and the checker watching both.
final class World: @unchecked Sendable {
    // @unchecked: the simulation runs on one thread.

    /// What a run came to.
    struct Outcome {
        var seed: UInt64
        var swarm: Swarm
        var violations: [Checker.Violation]
        var traceHash: String
        var traceLines: Int
        /// True time simulated.
        var simulated: Duration
        var exit: ExitStatus?
        var halted: String?
        var triggers: Int
        var pushes: Int
        var footprint: Int
        var captured: [String]
        var tail: [String]
        var failed: Bool { !violations.isEmpty }
    }

    let swarm: Swarm
    let runtime: SimRuntime
    let trace: Trace
    let checker: Checker
    private(set) var syncthing: SimSyncthing!
    private(set) var relay: SimRelay!
    private var service: Service!
    private let store = MemoryStateStore()
    private var rng: SimRandom
    private var jitterRandom: SimRandom
    private var exitStatus: ExitStatus?
    private var ending = false
    private var stateWrites = 0
    private let planted: PlantedDefects
    private var folderIDs: [String] = []

    init(swarm: Swarm, planted: PlantedDefects = .none, capture: ClosedRange<Duration>? = nil) {
        self.swarm = swarm
        self.planted = planted
        // Some day in 2026, to the second.
        var clock = SimRandom.fork(swarm.seed, "clock")
        runtime = SimRuntime(wallOrigin: .seconds(1_767_225_600 + Int64(clock.int(0...(300 * 86_400)))))
        trace = Trace()
        trace.capture = capture
        rng = SimRandom.fork(swarm.seed, "world")
        jitterRandom = SimRandom.fork(swarm.seed, "jitter")
        let runtime = runtime
        checker = Checker(
            settings: Checker.Settings(
                debounce: swarm.debounce, debounceMax: swarm.debounceMax, window: swarm.relayWindow,
                sweep: swarm.sweep, announce: swarm.startupAnnounce),
            trueNow: { runtime.trueNow }, monotonicNow: { runtime.monotonicNow })
        checker.wallNow = { runtime.wallNow }
        checker.onViolation = { runtime.halt("a promise broke") }
        runtime.jobEnded = { [checker] lane, asked, end in if lane == 2 { checker.peersJobEnded(asked: asked, at: end) }
        }
    }

    /// One line of the trace, at the current true time.
    func trace(_ text: String) { trace.add(runtime.trueNowInJob, text) }

    /// One more identifier no output may carry.
    func plant(_ identifier: String) {
        if !checker.identifiers.contains(identifier) { checker.identifiers.append(identifier) }
    }

    // MARK: - Running

    func run() -> Outcome {
        let home = "/home/sim-\(rng.token(6))"
        let directory = home + "/.local/state/syncthing"
        syncthing = SimSyncthing(
            world: self, seed: swarm.seed, folders: swarm.folders, devices: swarm.devices, directory: directory)
        folderIDs = syncthing.folders.map(\.id)
        let relayURL = "https://relay-\(rng.token(8)).example.net"
        relay = SimRelay(world: self, seed: swarm.seed, baseURL: relayURL, window: swarm.relayWindow)
        checker.identifiers = syncthing.identifiers + [relayURL, "relay-", "Journal-", "/srv/vault-", home]
        checker.deviceIDs = syncthing.myIDs
        syncthing.boot()
        let environment = swarm.environment(
            relayURL: relayURL, configPath: syncthing.file.path, folderIDs: folderIDs)
        trace("seed \(swarm.seed) faults \(swarm.faultList)")
        guard build(environment: environment, home: home) else { return outcome() }
        scheduleWorkload()
        scheduleFaults()
        runtime.atTrueTime(swarm.length) { [self] in stop() }
        runtime.hardEnd = swarm.length + .seconds(120)
        service.begin()
        if let at = Self.environment("SIM_DUMP_TRACKER_AT").flatMap(Int64.init) {
            runtime.atTrueTime(.seconds(at)) { [self] in trace("tracker: \(service.tracker)") }
        }
        while runtime.step() {}
        if let halted = runtime.halted, halted.hasPrefix("spin") {
            checker.finishWithSpin(halted)
        }
        checker.statusText(statusTexts())
        checker.footprint(service.heldEntries, folders: swarm.folders, devices: swarm.devices)
        checker.finish(at: runtime.monotonicNow, exited: exitStatus != nil)
        return outcome()
    }

    private func outcome() -> Outcome {
        Outcome(
            seed: swarm.seed, swarm: swarm, violations: checker.violations, traceHash: trace.hashText,
            traceLines: trace.lines, simulated: runtime.trueNow, exit: exitStatus, halted: runtime.halted,
            triggers: relay?.triggers ?? 0, pushes: relay?.pushes ?? 0, footprint: service?.heldEntries ?? 0,
            captured: trace.captured, tail: trace.tail)
    }

    /// The service, as `ServiceLifecycle` builds it once config.xml was found.
    private func build(environment: [String: String], home: String) -> Bool {
        let configuration: Configuration
        switch App.checkEnvironment(environment) {
        case .success(let c): configuration = c
        case .failure(let problems):
            trace("the environment is invalid: \(problems.text)")
            checker.setupFailed("the world's environment is invalid: \(problems.text)")
            return false
        }
        checker.watched = Set(swarm.watched.map { folderIDs[$0] })
        let file = syncthing.file
        let fileSystem = file.fileSystem
        let load: @Sendable (String) throws(ConfigFileError) -> SyncthingGUIConfig = { path throws(ConfigFileError) in
            try file.load(path)
        }
        guard
            case .success(let access) = App.resolveWithoutWait(
                configuration, environment, home, fileSystem: fileSystem, load: load)
        else {
            checker.setupFailed("config.xml could not be read at the start")
            return false
        }
        let runtime = runtime
        let logger = Logger(minimumLevel: configuration.logLevel, sink: WorldLogSink(world: self))
        let monitor = ServiceMonitor(
            notifier: nil, stateFile: store, watchdogInterval: nil, logger: logger,
            clock: runtime)
        var dependencies = App.serviceDependencies(
            configuration: configuration, environment: environment, home: home, access: access,
            syncthingTransport: syncthing, relayTransport: relay, logger: logger, monitor: monitor,
            fileSystem: fileSystem, load: load, clock: runtime, planted: planted)
        dependencies.printFatal = { [unowned self] line in
            trace("stderr: \(line.text.split(separator: "\n").first ?? "")")
        }
        dependencies.jitter = { [unowned self] in
            let j = jitterRandom.unit()
            let checker = checker
            runtime.atJobTime { checker.jitterDrawn(j) }
            return j
        }
        var settings = Engine.Settings(configuration: configuration, relayTimeout: RelayTimeouts.request)
        settings.policy.planted = planted
        store.onWrite = { [unowned self] in
            stateWrites += 1
            if stateWrites % 64 == 0 { checker.statusText(statusTexts()) }
        }
        service = Service(dependencies: dependencies, settings: settings, runtime: runtime) { [unowned self] status in
            exited(status)
        }
        return true
    }

    private func statusTexts() -> String {
        let now = runtime.wallNow.components.seconds
        let report = StatusReport(state: store.state, health: .healthy, now: now, syncthingVersion: "v2.1.3")
        return report.text() + "\n" + report.json()
    }

    private func exited(_ status: ExitStatus) {
        guard exitStatus == nil else { return }
        exitStatus = status
        trace("service exits \(status.rawValue)")
        checker.exited(
            status, at: runtime.now(), configKeyRight: syncthing.file.key == syncthing.key,
            configPresent: syncthing.file.present)
        runtime.halt("the service exited")
    }

    private func stop() {
        ending = true
        // A host asleep at the stop takes the signal at its resume; the grace counts from there.
        runtime.hardEnd = (runtime.suspendedUntil ?? runtime.trueNow) + .seconds(120)
        trace("SIGTERM")
        checker.stopRequested(at: runtime.monotonicNow)
        service.requestStop()
    }

    // MARK: - The workload

    /// A Poisson process on the host: `body` about every `mean`, until the world ends.
    private func every(_ mean: Duration, _ label: String, _ body: @escaping (inout SimRandom) -> Void) {
        var r = SimRandom.fork(swarm.seed, label)
        func next() {
            runtime.onHost(after: r.exponential(mean: mean)) { [self] in
                guard !ending else { return }
                body(&r)
                next()
            }
        }
        next()
    }

    /// The same, on true time (the relay, the host's clocks: outside the host).
    private func everyTrue(_ mean: Duration, _ label: String, _ body: @escaping (inout SimRandom) -> Void) {
        var r = SimRandom.fork(swarm.seed, label)
        func next() {
            runtime.atTrueTime(runtime.trueNow + r.exponential(mean: mean)) { [self] in
                guard !ending else { return }
                body(&r)
                next()
            }
        }
        next()
    }

    private func scheduleWorkload() {
        // The user works in sessions: changes come only during one (the run starts in one).
        var working = true
        var sessions = SimRandom.fork(swarm.seed, "sessions")
        func session(_ active: Bool) {
            let stay = sessions.exponential(mean: active ? swarm.activeFor : swarm.idleFor)
            runtime.onHost(after: stay) { [self] in
                guard !ending else { return }
                working = !active
                trace(working ? "world the user starts working" : "world the user stops working")
                session(!active)
            }
        }
        session(true)
        for index in 0..<swarm.folders {
            every(swarm.changeEvery, "changes-\(index)") { [self] r in
                guard working else { return }
                syncthing.localChange(index)
                // Now and then a few more right after (a save, then another).
                if r.chance(0.3) {
                    for k in 1...r.int(1...4) {
                        runtime.onHost(after: .milliseconds(Int64(k) * Int64(r.int(200...4000)))) { [self] in
                            guard !ending else { return }
                            syncthing.localChange(index)
                        }
                    }
                }
            }
        }
        for index in 0..<swarm.devices {
            var r = SimRandom.fork(swarm.seed, "device-\(index)")
            func toggle(_ connected: Bool) {
                let stay = r.exponential(mean: connected ? swarm.onlineFor : swarm.offlineFor)
                runtime.onHost(after: stay) { [self] in
                    guard !ending else { return }
                    syncthing.setConnected(index, !connected)
                    toggle(!connected)
                }
            }
            toggle(true)
        }
    }

    // MARK: - Faults

    private func seconds(_ fault: Swarm.Fault) -> Duration { .seconds(Int64(swarm.rate(fault))) }

    private func scheduleFaults() {
        let s = swarm
        if s.has(.restart) {
            every(seconds(.restart), "fault-restart") { [self] r in
                syncthing.restart(
                    downtime: r.duration(.seconds(1), .seconds(40)), style: r.chance(0.5) ? .clean : .killed)
            }
        }
        if s.has(.crashLoop) {
            every(seconds(.crashLoop), "fault-crash-loop") { [self] r in
                let restarts = r.int(5...60)
                var at = Duration.zero
                for _ in 0..<restarts {
                    at += r.duration(.seconds(3), .seconds(9))
                    let downtime = r.duration(.milliseconds(1100), .seconds(2))
                    runtime.onHost(after: at) { [self] in
                        guard !ending else { return }
                        syncthing.restart(downtime: downtime, style: .killed)
                    }
                    at += downtime
                }
            }
        }
        if s.has(.busyRestart) {
            every(seconds(.busyRestart), "fault-busy-restart") { [self] r in
                syncthing.restart(downtime: r.duration(.seconds(1), .seconds(5)), style: .clean, busy: true)
            }
        }
        if s.has(.identityChange) {
            every(seconds(.identityChange), "fault-identity") { [self] r in
                syncthing.restart(downtime: r.duration(.seconds(2), .seconds(20)), style: .clean, newIdentity: true)
            }
        }
        if s.has(.handEdit) {
            every(seconds(.handEdit), "fault-hand-edit") { [self] r in
                let port = r.chance(0.6)
                let key = !port || r.chance(0.5)
                let downtime = r.duration(.seconds(5), .seconds(120))
                syncthing.restart(downtime: downtime, style: .clean, handEdit: (port, key))
                if r.chance(0.5) {
                    // The person who edited it tells the service too.
                    runtime.onHost(after: downtime + r.duration(.seconds(1), .seconds(30))) { [self] in
                        guard !ending else { return }
                        trace("SIGHUP (after a hand edit)")
                        service.hangup()
                    }
                }
            }
        }
        if s.has(.eventGap) { every(seconds(.eventGap), "fault-gap") { [self] _ in syncthing.dropNext = true } }
        if s.has(.bufferOverflow) { every(seconds(.bufferOverflow), "fault-burst") { [self] _ in syncthing.burst() } }
        if s.has(.steadyStream) {
            every(seconds(.steadyStream), "fault-stream") { [self] r in
                let folder = r.int(0...(swarm.folders - 1))
                let gap = r.duration(.milliseconds(2), .milliseconds(90))
                let count = r.int(10...2000)
                trace("world a steady stream of \(count) changes")
                for k in 1...count {
                    runtime.onHost(after: gap * k) { [self] in
                        guard !ending else { return }
                        syncthing.localChange(folder, quiet: true)
                    }
                }
            }
        }
        if s.has(.keyChange) {
            every(seconds(.keyChange), "fault-key") { [self] _ in syncthing.guiChange(newPort: false, newKey: true) }
        }
        if s.has(.guiMove) {
            every(seconds(.guiMove), "fault-gui-move") { [self] r in
                syncthing.guiChange(newPort: true, newKey: r.chance(0.2))
            }
        }
        if s.has(.sighup) {
            every(seconds(.sighup), "fault-sighup") { [self] _ in
                trace("SIGHUP")
                service.hangup()
            }
        }
        if s.has(.configMissing) {
            every(seconds(.configMissing), "fault-config-missing") { [self] r in
                syncthing.configMissing(for: .seconds(Int64(r.logUniform(5, 7200))))
            }
        }
        if s.has(.configChurn) { every(seconds(.configChurn), "fault-churn") { [self] _ in syncthing.configChange() } }
        if s.has(.remoteDecline) {
            every(seconds(.remoteDecline), "fault-remote") { [self] _ in syncthing.remoteChange() }
        }
        if s.has(.peerReset) { every(seconds(.peerReset), "fault-peer-reset") { [self] _ in syncthing.peerReset() } }

        // The relay.
        if s.has(.relayWrongURL) { relay.mode = .wrongURL }
        let modes: [(Swarm.Fault, (inout SimRandom) -> SimRelay.Mode)] = [
            (.relayInactive, { r in .inactive(r.pick([400, 401, 402, 403])) }),
            (.relayOutage404, { _ in .outage404 }),
            (.relay429Delta, { _ in .rateLimited(date: false, dateHeader: true) }),
            (.relay429Date, { r in .rateLimited(date: true, dateHeader: r.chance(0.6)) }),
            (.relay5xx, { r in .serverError(r.pick([500, 502, 503, 504]), pushes: r.chance(0.4)) }),
            (.relayHang, { r in .hang(pushes: r.chance(0.5)) }),
            (.relaySlow, { _ in .slow }),
            (.relayCut, { r in .cut(pushes: r.chance(0.5)) }),
            (.relayUnreachable, { _ in .unreachable }),
        ]
        for (fault, make) in modes where s.has(fault) && !s.has(.relayWrongURL) {
            everyTrue(seconds(fault), "fault-\(fault.rawValue)") { [self] r in
                let mode = make(&r)
                let length = Duration.seconds(Int64(r.logUniform(60, 12 * 3600)))
                relay.mode = mode
                trace("relay mode \(mode) for \(length.components.seconds) s")
                runtime.atTrueTime(runtime.trueNow + length) { [self] in
                    if relay.mode == mode {
                        relay.mode = .healthy
                        trace("relay mode healthy")
                    }
                }
            }
        }

        // The host's clocks.
        if s.has(.suspend) {
            everyTrue(seconds(.suspend), "fault-suspend") { [self] r in
                let length = Duration.seconds(Int64(r.logUniform(10, 12 * 3600)))
                guard runtime.suspend(for: length) else { return }
                trace("host suspends for \(length.components.seconds) s")
                // The checker hears of it at the resume, when the host's clocks show it.
                runtime.atTrueTime(runtime.trueNow + length) { [self] in
                    checker.suspended(for: length, at: runtime.monotonicNow)
                }
            }
        }
        if s.has(.ntpStep) {
            everyTrue(seconds(.ntpStep), "fault-ntp") { [self] r in
                let size = Duration.seconds(Int64(r.logUniform(1, 3 * 3600)))
                let step = r.chance(0.5) ? size : .zero - size
                trace("NTP steps the wall clock by \(step.components.seconds) s")
                runtime.stepWallClock(by: step)
                checker.wallClockStepped(by: step, at: runtime.monotonicNow)
            }
        }
    }
}

extension World {
    static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        return String(cString: value)
    }
}

/// The service's log: each record into the trace, and to the checker in both of its renderings.
struct WorldLogSink: LogSink {
    unowned let world: World
    func write(_ record: LogRecord) {
        let text = record.textLine()
        world.trace("log \(text)")
        world.checker.logRecord(record, lines: [text, record.jsonLine()])
    }
}

/// The state file, kept in memory (what `--status` reads).
final class MemoryStateStore: StateStore, @unchecked Sendable {
    // @unchecked: the simulation runs on one thread.
    private(set) var state: ServiceState?
    var onWrite: () -> Void = {}
    func write(_ state: ServiceState) -> Bool {
        self.state = state
        onWrite()
        return true
    }
    func remove() { state = nil }
}
