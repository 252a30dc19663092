import NotifyCore
import NotifyRuntime
import Testing

/// The real `Service` on virtual time, against a fake Syncthing and relay.
final class ServiceRig: @unchecked Sendable {
    static let idA = "AAAAAAA-BBBBBBB-CCCCCCC-DDDDDDD-EEEEEEE-FFFFFFF-GGGGGGG-HHHHHHH"
    static let idB = "ZZZZZZZ-BBBBBBB-CCCCCCC-DDDDDDD-EEEEEEE-FFFFFFF-GGGGGGG-HHHHHHH"
    static let phone = "3QS6B4R-BPY5SWQ-47G2S54-F46T34Y-3Z3C33C-FPJLDKZ-CWKDRFD-G4XJAAD"

    let runtime = ManualRuntime()
    let syncthing: FakeSyncthingTransport
    let relay: FakeRelay
    let sink = RecordingLogSink()
    let service: Service
    /// What config.xml and the environment give on a re-read.
    let onDisk = Locked<Result<SyncthingAccess, SyncthingAccessError>>(.success(ServiceRig.access(port: 8384)))
    let rereadCount = Locked(0)
    let exits = Locked<[NotifyCore.ExitStatus]>([])
    let fatalLines = Locked<[String]>([])

    var rereads: Int { rereadCount.withLock { $0 } }

    static func access(port: Int, key: String = "k3y") -> SyncthingAccess {
        SyncthingAccess(
            endpoint: SyncthingEndpoint(baseURLs: ["http://127.0.0.1:\(port)"], tls: false), apiKey: key,
            certificatePath: nil, source: .configFile, keySource: .configFile, configFilePath: "/st/config.xml")
    }

    /// The virtual clock's reading when the rig starts.
    static let t0 = Instant.seconds(1000)

    /// The relay backoff's jitter (`Service.Dependencies.jitter`), read at each relay outcome.
    let jitter = Locked(0.5)

    /// Each log record with when it was written and how many of Syncthing's exchanges came before it.
    let timedRecords = Locked<[(record: LogRecord, at: Instant, exchanges: Int)]>([])

    /// The rig's own environment: the relay on loopback, no startup announce when `announce` is false, no sweep and
    /// no relay window unless given, every folder unless `watched`, LOG_LEVEL `logLevel`.
    static func environment(
        announce: Bool = true, debounce: Duration = .seconds(5), sweep: Duration? = nil, window: Duration? = nil,
        watched: Set<String> = [], metricsFile: String? = nil, logLevel: LogLevel = .debug
    ) -> [String: String] {
        var environment = [
            "RELAY_URL": "http://127.0.0.1:9000", "STARTUP_ANNOUNCE": announce ? "true" : "false",
            "DEBOUNCE_SECONDS": decimalSeconds(debounce),
            "STALE_RETRIGGER_SECONDS": sweep.map { "\($0.components.seconds)" } ?? "0",
            "RELAY_WINDOW_SECONDS": window.map { "\($0.components.seconds)" } ?? "0",
            "LOG_LEVEL": logLevel.name,
        ]
        if !watched.isEmpty { environment["WATCHED_FOLDERS"] = watched.sorted().joined(separator: ",") }
        if let metricsFile { environment["METRICS_FILE"] = metricsFile }
        return environment
    }

    /// `duration` as DEBOUNCE_SECONDS reads it: whole seconds, or decimal to the millisecond (`0.5`).
    static func decimalSeconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let milliseconds = attoseconds / 1_000_000_000_000_000
        guard milliseconds > 0 else { return "\(seconds)" }
        let fraction = String(milliseconds + 1000).dropFirst()
        return "\(seconds).\(fraction)"
    }

    /// The rig with its own environment (`environment(announce:…)`).
    convenience init(
        announce: Bool = true, debounce: Duration = .seconds(5), sweep: Duration? = nil, window: Duration? = nil,
        watched: Set<String> = [], notifySocket: String? = nil, watchdog: Duration? = nil, stateFile: StateFile? = nil,
        metricsFile: String? = nil, logLevel: LogLevel = .debug
    ) {
        self.init(
            environment: Self.environment(
                announce: announce, debounce: debounce, sweep: sweep, window: window, watched: watched,
                metricsFile: metricsFile, logLevel: logLevel), notifySocket: notifySocket, watchdog: watchdog,
            stateFile: stateFile)
    }

    /// The service as App.swift builds it from `environment` (parsed by `Configuration.parse(environment:)`, the
    /// settings by `Engine.Settings(configuration:relayTimeout:)`); an invalid environment fails the test. With
    /// `notifySocket`, systemd's notify socket, and a watchdog every `watchdog` when given.
    init(
        environment: [String: String], notifySocket: String? = nil, watchdog: Duration? = nil,
        stateFile: StateFile? = nil
    ) {
        let configuration: Configuration
        switch Configuration.parse(environment: environment) {
        case .success(let parsed): configuration = parsed
        case .failure(let error):
            Issue.record("the rig's environment is invalid: \(error.message)")
            configuration = Configuration(relayBaseURL: "http://127.0.0.1:9000")
        }
        let runtime = runtime
        syncthing = FakeSyncthingTransport(
            clock: { runtime.now() }, onPoll: { runtime.skip($0) },
            onSlowAnswer: { runtime.deferNextEngineWork(by: $0) })
        relay = FakeRelay { runtime.now() }
        let onDisk = onDisk
        let rereads = rereadCount
        let syncthing = syncthing
        let timedRecords = timedRecords
        let sink = sink
        var deps = Service.Dependencies(
            syncthing: SyncthingClient(transport: syncthing, access: Self.access(port: 8384)),
            relay: RelayClient(transport: relay, baseURL: configuration.relayBaseURL, clock: runtime),
            cancelSyncthing: {},
            rereadAccess: {
                rereads.withLock { $0 += 1 }
                syncthing.state.withLock {
                    $0.exchanges.append(
                        FakeSyncthingTransport.Exchange(
                            route: .configFile, since: nil, at: runtime.now(), ends: runtime.now()))
                }
                return onDisk.withLock { $0 }
            },
            logger: Logger(
                minimumLevel: configuration.logLevel,
                sink: TimedLogSink(sink: sink) { record in
                    let exchanges = syncthing.state.withLock { $0.exchanges.count }
                    timedRecords.withLock { $0.append((record, runtime.now(), exchanges)) }
                }),
            // systemd's notify socket and the health state file, on the runtime's clocks.
            monitor: ServiceMonitor(
                notifier: notifySocket.flatMap { SystemdNotifier(socket: $0) }, stateFile: stateFile,
                watchdogInterval: watchdog, clock: runtime))
        let fatalLines = fatalLines
        deps.printFatal = { line in fatalLines.withLock { $0.append(line.text) } }
        let jitter = jitter
        deps.jitter = { jitter.withLock { $0 } }
        // METRICS_FILE; its timestamps are the runtime's wall clock, as the monitor's.
        deps.metricsFile = configuration.metricsFile.map { MetricsFile(path: $0) }
        deps.processStart = 1_717_999_999_500
        let exits = exits
        runtime.answerHeldPolls {
            syncthing.state.withLock { s in
                // A refused poll leaves them buffered for the next one.
                guard !s.buffered.isEmpty, !s.down else { return false }
                s.polls.append(.success("[" + s.buffered.joined(separator: ",") + "]"))
                s.buffered = []
                return true
            }
        }
        service = Service(
            dependencies: deps,
            settings: Engine.Settings(configuration: configuration, relayTimeout: RelayTimeouts.request),
            runtime: runtime
        ) { status in exits.withLock { $0.append(status) } }
    }

    /// Starts the service and runs it until its first long-poll is held.
    func start() {
        service.begin()
        runtime.drain()
    }

    /// Syncthing answers the held long-poll with `body` (a JSON array of events). When no long-poll is out (a steady
    /// stream's pause, `PollLoop.busyPace`), Syncthing keeps the events, and the next poll gets all it kept at once.
    func answer(_ body: String) {
        guard runtime.holdsLongPoll else {
            let events = body.dropFirst().dropLast()
            if !events.isEmpty { syncthing.state.withLock { $0.buffered.append(String(events)) } }
            return
        }
        syncthing.state.withLock { $0.polls.append(.success(body)) }
        runtime.releaseLongPoll()
    }

    /// Moves the clock to the next timer until a long-poll is held (a steady stream's pause ends).
    private func awaitLongPoll() {
        for _ in 0..<100 where !runtime.holdsLongPoll {
            guard let next = runtime.nextTimer else { return }
            runtime.advance(by: max(.zero, next - runtime.now()))
        }
    }

    /// Syncthing answers the held long-poll with these events.
    func answer(_ events: [(id: Int, type: String)]) {
        answer(
            "["
                + events.map { #"{"id":\#($0.id),"type":"\#($0.type)","data":{"folder":"vault"}}"# }.joined(
                    separator: ",") + "]")
    }

    /// The held long-poll fails with `error`.
    func fail(_ error: TransportError) {
        awaitLongPoll()
        syncthing.state.withLock { $0.polls.append(.failure(error)) }
        runtime.releaseLongPoll()
    }

    /// Syncthing stops: the held long-poll (or the next, during a pause) fails to connect, and so does every request
    /// until `down` is cleared.
    func takeSyncthingDown() {
        syncthing.state.withLock { $0.down = true }
        if runtime.holdsLongPoll { runtime.releaseLongPoll() }
    }

    /// SIGTERM, and all that follows on the engine queue.
    func stop() {
        service.requestStop()
        runtime.drain()
    }

    /// The records a stop logs.
    var stopRecords: [LogRecord] { records.filter { $0.message == .shutdownRequested || $0.message == .stopped } }

    func advance(seconds: Double) { runtime.advance(by: .milliseconds(Int64(seconds * 1000))) }

    /// Syncthing answers every long-poll with `body` as soon as it comes, until `seconds` have passed on the virtual
    /// clock (what a misbehaving server does); the backoff timers fire in between. A poll loop that asked again
    /// without a wait would never let the clock move: that is caught as a spin.
    func answerEveryPoll(_ body: String, for seconds: Double) {
        let end = runtime.now() + .milliseconds(Int64(seconds * 1000))
        for _ in 0..<10_000 {
            if runtime.holdsLongPoll, runtime.now() < end {
                answer(body)
                continue
            }
            guard let next = runtime.nextTimer, next <= end else {
                runtime.advance(by: max(.zero, end - runtime.now()))
                return
            }
            runtime.advance(by: max(.zero, next - runtime.now()))
        }
        Issue.record("the poll loop spun: 10 000 polls without the clock reaching the end")
    }

    /// When each long-poll was answered and each trigger came, from the rig's start.
    var pollTimes: [Duration] { syncthing.state.withLock { $0.pollTimes }.map { $0 - Self.t0 } }
    var triggerTimes: [Duration] { relay.state.withLock { $0.triggerTimes }.map { $0 - Self.t0 } }

    var records: [LogRecord] { sink.records }
    func logged(_ message: LogMessage) -> [LogRecord] { records.filter { $0.message == message } }
    var triggers: Int { relay.state.withLock { $0.triggerTimeouts.count } }
    var reasons: [WakeReason] {
        logged(.triggerDelivered).compactMap { record in
            record.fields.first { $0.key == .reason }.flatMap { if case .reason(let r) = $0.value { r } else { nil } }
        }
    }
}

extension ServiceRig {
    /// Scripts Syncthing's next answers on `route`, each used once (a long-poll's before those `answer` scripts).
    func script(_ route: FakeSyncthingTransport.Route, _ replies: [FakeSyncthingTransport.Reply]) {
        syncthing.state.withLock { $0.replies[route, default: []] += replies }
    }

    /// Runs the service until its long-poll is held with no answer scripted (or it exits): fires the timers that are
    /// due, lets each scripted long-poll answer, and moves the clock to the next timer. Fails the test after `limit`
    /// steps.
    func settle(limit: Int = 1000) {
        for _ in 0..<limit {
            runtime.drain()
            let now = runtime.now()
            if let next = runtime.nextTimer, next <= now {
                runtime.advance(by: .zero)
                continue
            }
            if runtime.holdsLongPoll {
                let scripted = syncthing.state.withLock { !$0.polls.isEmpty || !($0.replies[.poll] ?? []).isEmpty }
                guard scripted else { return }
                runtime.releaseLongPoll()
                continue
            }
            guard exits.withLock({ $0.isEmpty }), let next = runtime.nextTimer else { return }
            runtime.advance(by: next - now)
        }
        Issue.record("the service did not settle in \(limit) steps")
    }

    /// Every request Syncthing saw, with re-reads of config.xml, in order.
    var exchanges: [FakeSyncthingTransport.Exchange] { syncthing.state.withLock { $0.exchanges } }
    /// The `since=` of the held long-poll: lets it answer `[]` after 2 s (and the status read that follows run).
    func heldPollCursor() -> Int? {
        guard runtime.holdsLongPoll else { return nil }
        script(.poll, [.body("[]", takes: .seconds(2))])
        runtime.releaseLongPoll()
        return pollCursors.last
    }

    /// The `since=` of each long-poll, in order.
    var pollCursors: [Int] { exchanges.compactMap { $0.route == .poll ? $0.since : nil } }
}

/// A value shared between the test and the service's closures.
typealias Locked = ThreadSafe
