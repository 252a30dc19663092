import Dispatch
import NotifyCore
import NotifyRuntime
import Synchronization
import Testing

/// A Syncthing on loopback, as the service's transport sees it: answers by path, at one port, with one API key.
/// A request to another port is refused, as is every request while it is down.
final class FakeSyncthing: HTTPTransport {
    /// What a request asks for, as the service names it.
    enum Route: Hashable, Sendable {
        case status, version, devices, folders, connections, other
        /// The event head (`since=0&limit=1&timeout=0`).
        case head
        /// The event long-poll.
        case poll
        /// `/rest/db/completion` for this folder.
        case completion(folder: String)
        /// Not a request: a re-read of config.xml and the environment (recorded by `ServiceRig`).
        case configFile
    }

    /// One scripted answer: a status and a body, or a transport failure; `takes` is the time a long-poll takes on
    /// the virtual clock (nil: `State.pollTakes`). Any other request that `takes` a while (a slow status read, a slow
    /// config or completion read) reaches the engine that much later on the virtual clock, timers firing meanwhile
    /// (nil: at once).
    struct Reply: Sendable {
        var result: Result<HTTPResponse, TransportError>
        var takes: Duration?

        static func body(_ body: String, status: Int = 200, takes: Duration? = nil) -> Reply {
            Reply(result: .success(HTTPResponse(status: status, headers: [:], body: Array(body.utf8))), takes: takes)
        }
        static func failure(_ error: TransportError, takes: Duration? = nil) -> Reply {
            Reply(result: .failure(error), takes: takes)
        }
    }

    /// One request as it came, in order: where it went, the `since=` of a long-poll, and when it started and ended
    /// on the virtual clock.
    struct Exchange: Equatable, Sendable {
        var route: Route
        var since: Int?
        var at: Instant
        var ends: Instant
    }

    struct State {
        var port = 8384
        var apiKey = "k3y"
        var down = false
        var myID = ServiceRig.idA
        var startTime = "2026-12-01T00:00:00Z"
        var head = 0
        /// Long-poll answers, in order: a body, or a transport failure.
        var polls: [Result<String, TransportError>] = []
        /// How long each long-poll takes, on the virtual clock.
        var pollTakes: Duration = .seconds(2)
        var devices =
            #"[{"deviceID":"\#(ServiceRig.idA)","paused":false},{"deviceID":"\#(ServiceRig.phone)","paused":false}]"#
        var folders =
            #"[{"id":"vault","paused":false,"devices":[{"deviceID":"\#(ServiceRig.idA)"},{"deviceID":"\#(ServiceRig.phone)"}]}]"#
        /// Move the GUI to this port right after the next long-poll answer.
        var moveAfterPoll: Int?
        /// Request paths (without the query) that were answered, including refused ones.
        var seen: [String] = []
        /// Long-polls that came in (on real threads).
        var longPolls = 0
        /// Ports asked.
        var ports: [Int] = []
        /// When each long-poll was answered, on the virtual clock.
        var pollTimes: [Instant] = []
        /// What `/rest/system/connections` says of the phone, and what `/rest/db/completion` says it still needs.
        var phoneConnected = true
        var phoneNeedBytes = 0
        /// The phone's index sequence for the folder: 0 while no index from it has arrived.
        var phoneSequence = 5
        /// Replace `/rest/system/connections`' and `/rest/db/completion`'s answers (a malformed body).
        var connectionsBody: String?
        var completionBody: String?
        /// Scripted answers by route, each used once, before the answer the fields above give (a long-poll's before
        /// `polls`). Refusals (`down`, another port) still come first.
        var replies: [Route: [Reply]] = [:]
        /// Every request that came, in order, with re-reads of config.xml among them.
        var exchanges: [Exchange] = []
    }
    let state = ThreadSafe(State())
    /// Spends a long-poll's time on the virtual clock.
    let onPoll: @Sendable (Duration) -> Void
    /// Holds the answer to any other request for this long on the virtual clock (`Reply.takes`).
    let onSlowAnswer: @Sendable (Duration) -> Void
    /// The virtual clock, to record when each long-poll was answered.
    let clock: @Sendable () -> Instant
    /// On real threads: a long-poll with no answer scripted waits (up to 10 s) for one, or for `cancel()`.
    let holdsPolls: Bool
    private let pollScripted = DispatchSemaphore(value: 0)
    private let cancelled = Atomic<Bool>(false)

    init(
        holdsPolls: Bool = false, clock: @escaping @Sendable () -> Instant = { .zero },
        onPoll: @escaping @Sendable (Duration) -> Void = { _ in },
        onSlowAnswer: @escaping @Sendable (Duration) -> Void = { _ in }
    ) {
        self.holdsPolls = holdsPolls
        self.clock = clock
        self.onPoll = onPoll
        self.onSlowAnswer = onSlowAnswer
    }

    /// Scripts the next long-poll answer and wakes a long-poll that waits for one.
    func script(_ body: String) {
        state.withLock { $0.polls.append(.success(body)) }
        pollScripted.signal()
    }

    func cancel() {
        cancelled.store(true, ordering: .relaxed)
        pollScripted.signal()
    }

    func perform(_ request: HTTPRequest) -> Result<HTTPResponse, TransportError> {
        if holdsPolls, request.url.contains("/rest/events?"), !request.url.contains("limit=1&timeout=0") {
            state.withLock { $0.longPolls += 1 }
            while state.withLock({ $0.polls.isEmpty }) {
                if cancelled.load(ordering: .relaxed) { return .failure(.cancelled) }
                guard pollScripted.wait(timeout: .now() + .seconds(10)) == .success else { return .failure(.timeout) }
            }
        }
        return answer(request)
    }

    private func answer(_ request: HTTPRequest) -> Result<HTTPResponse, TransportError> {
        var slow: Duration?
        let (answer, pollTime) = state.withLock { s -> (Result<HTTPResponse, TransportError>, Duration?) in
            let rest = request.url.split(separator: "//", maxSplits: 1).last.map(String.init) ?? ""
            let hostPort = rest.prefix { $0 != "/" }
            let port = Int(hostPort.split(separator: ":").last ?? "") ?? 0
            let pathAndQuery = rest.dropFirst(hostPort.count)
            let path = String(pathAndQuery.prefix { $0 != "?" })
            s.seen.append(path)
            s.ports.append(port)
            let route = Self.route(path: path, query: pathAndQuery.dropFirst(path.count))
            let now = clock()
            s.exchanges.append(Exchange(route: route.route, since: route.since, at: now, ends: now))
            if s.down || port != s.port { return (.failure(.connect), nil) }
            if let reply = s.replies[route.route]?.first {
                s.replies[route.route]?.removeFirst()
                guard route.route == .poll else {
                    slow = reply.takes
                    if let takes = reply.takes { s.exchanges[s.exchanges.count - 1].ends = now + takes }
                    return (reply.result, nil)
                }
                let takes = reply.takes ?? s.pollTakes
                s.pollTimes.append(now)
                s.exchanges[s.exchanges.count - 1].ends = now + takes
                return (reply.result, takes)
            }
            let key = request.headers.first { $0.0 == "X-API-Key" }?.1
            if key != s.apiKey { return (ok(401, "Unauthorized\n"), nil) }
            switch path {
            case "/rest/system/status":
                return (ok(200, #"{"myID":"\#(s.myID)","startTime":"\#(s.startTime)"}"#), nil)
            case "/rest/system/version":
                return (ok(200, #"{"arch":"amd64","os":"linux","version":"v1.29.5"}"#), nil)
            case "/rest/events" where pathAndQuery.contains("limit=1&timeout=0"):
                return (ok(200, s.head == 0 ? "[]" : #"[{"id":\#(s.head),"type":"LocalIndexUpdated"}]"#), nil)
            case "/rest/events":
                guard !s.polls.isEmpty else {
                    Issue.record("a long-poll ran with no answer scripted")
                    return (.failure(.cancelled), nil)
                }
                if let port = s.moveAfterPoll {
                    s.port = port
                    s.moveAfterPoll = nil
                }
                s.pollTimes.append(now)
                s.exchanges[s.exchanges.count - 1].ends = now + s.pollTakes
                return (s.polls.removeFirst().flatMap { ok(200, $0) }, s.pollTakes)
            case "/rest/config/devices": return (ok(200, s.devices), nil)
            case "/rest/config/folders": return (ok(200, s.folders), nil)
            case "/rest/system/connections" where s.connectionsBody != nil: return (ok(200, s.connectionsBody!), nil)
            case "/rest/db/completion" where s.completionBody != nil: return (ok(200, s.completionBody!), nil)
            case "/rest/system/connections":
                let connected = s.phoneConnected
                return (
                    ok(200, #"{"connections":{"\#(ServiceRig.phone)":{"connected":\#(connected),"paused":false}}}"#),
                    nil
                )
            case "/rest/db/completion":
                let need = s.phoneNeedBytes
                let sequence = s.phoneSequence
                let items = need > 0 ? 1 : 0
                return (
                    ok(
                        200,
                        #"{"needBytes":\#(need),"needItems":\#(items),"needDeletes":0,"remoteState":"valid","sequence":\#(sequence)}"#
                    ),
                    nil
                )
            default:
                return (ok(404, "not found"), nil)
            }
        }
        if let pollTime { onPoll(pollTime) }
        if let slow { onSlowAnswer(slow) }
        return answer
    }

    private func ok(_ status: Int, _ body: String) -> Result<HTTPResponse, TransportError> {
        .success(HTTPResponse(status: status, headers: [:], body: Array(body.utf8)))
    }

    /// The route of a request path and query (`?…`), and a long-poll's `since=`.
    private static func route(path: String, query: Substring) -> (route: Route, since: Int?) {
        let parameters = query.dropFirst().split(separator: "&")
        func value(_ name: String) -> String? {
            parameters.first { $0.hasPrefix(name + "=") }.map { String($0.dropFirst(name.count + 1)) }
        }
        switch path {
        case "/rest/system/status": return (.status, nil)
        case "/rest/system/version": return (.version, nil)
        case "/rest/events" where query.contains("limit=1&timeout=0"): return (.head, nil)
        case "/rest/events": return (.poll, value("since").flatMap { Int($0) })
        case "/rest/config/devices": return (.devices, nil)
        case "/rest/config/folders": return (.folders, nil)
        case "/rest/system/connections": return (.connections, nil)
        case "/rest/db/completion": return (.completion(folder: value("folder") ?? ""), nil)
        default: return (.other, nil)
        }
    }
}

/// The relay: answers its health check and every trigger as scripted (default 200 and 202), and records each
/// trigger's time limit and when it came.
final class FakeRelay: HTTPTransport {
    /// How the relay answers one trigger.
    enum Answer: Sendable {
        /// This status, with a `Retry-After` header when given (the relay sends one with a 429).
        case status(Int, retryAfter: String? = nil)
        /// No answer: the request failed (relay unreachable).
        case failure(TransportError)
    }
    struct State {
        var health = 200
        var triggers: [Answer] = []
        var triggerTimeouts: [Duration] = []
        var triggerTimes: [Instant] = []
        var bodies: [String] = []
        /// The relay's own behaviour (ServiceRig+Relay.swift): how long each trigger's answer takes (one that takes
        /// longer than the request's time limit times out), and where the answer is held meanwhile.
        var latency: Duration = .zero
        var holdAnswer: (@Sendable (Duration) -> Void)?
        /// The relay's push window: a trigger it receives within this long of its last push pushes nothing.
        var pushWindow: Duration?
        /// Whether the relay received the triggers whose answers failed with a 5xx, a timeout or a cut.
        var receivesFailures = false
        /// When the relay pushed to the phone, and when it swallowed a trigger inside its push window.
        var pushes: [Instant] = []
        var swallowed: [Instant] = []
        /// When each trigger's answer was due.
        var answerTimes: [Instant] = []
    }
    let state = ThreadSafe(State())
    let clock: @Sendable () -> Instant

    init(clock: @escaping @Sendable () -> Instant = { .zero }) { self.clock = clock }

    func perform(_ request: HTTPRequest) -> Result<HTTPResponse, TransportError> {
        state.withLock { s in
            if request.url.hasSuffix("/api/v1/health") {
                let body = s.health == 200 ? #"{"status":"ok"}"# : "not found"
                return .success(HTTPResponse(status: s.health, headers: [:], body: Array(body.utf8)))
            }
            s.triggerTimeouts.append(request.totalTimeout)
            s.triggerTimes.append(clock())
            s.bodies.append(String(decoding: request.body ?? [], as: UTF8.self))
            switch s.receive(
                s.triggers.isEmpty ? .status(202) : s.triggers.removeFirst(), at: clock(), limit: request.totalTimeout)
            {
            case .failure(let error):
                return .failure(error)
            case .status(let status, let retryAfter):
                let body = status == 202 ? #"{"status":"accepted"}"# : #"{"error":"scripted"}"#
                return .success(
                    HTTPResponse(
                        status: status, headers: retryAfter.map { ["retry-after": $0] } ?? [:], body: Array(body.utf8)))
            }
        }
    }

    func cancel() {}
}

/// The real `Service` on virtual time, against a fake Syncthing and relay.
final class ServiceRig: @unchecked Sendable {
    static let idA = "AAAAAAA-BBBBBBB-CCCCCCC-DDDDDDD-EEEEEEE-FFFFFFF-GGGGGGG-HHHHHHH"
    static let idB = "ZZZZZZZ-BBBBBBB-CCCCCCC-DDDDDDD-EEEEEEE-FFFFFFF-GGGGGGG-HHHHHHH"
    static let phone = "3QS6B4R-BPY5SWQ-47G2S54-F46T34Y-3Z3C33C-FPJLDKZ-CWKDRFD-G4XJAAD"

    let runtime = ManualRuntime()
    let syncthing: FakeSyncthing
    let relay: FakeRelay
    let sink = ConfigLogSink()
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
        watched: Set<String> = [], notifySocket: String? = nil, stateFile: StateFile? = nil,
        metricsFile: String? = nil, logLevel: LogLevel = .debug
    ) {
        self.init(
            environment: Self.environment(
                announce: announce, debounce: debounce, sweep: sweep, window: window, watched: watched,
                metricsFile: metricsFile, logLevel: logLevel), notifySocket: notifySocket, stateFile: stateFile)
    }

    /// The service as App.swift builds it from `environment` (parsed by `Configuration.parse(environment:)`, the
    /// settings by `Engine.Settings(configuration:relayTimeout:)`); an invalid environment fails the test.
    init(environment: [String: String], notifySocket: String? = nil, stateFile: StateFile? = nil) {
        let configuration: Configuration
        switch Configuration.parse(environment: environment) {
        case .success(let parsed): configuration = parsed
        case .failure(let error):
            Issue.record("the rig's environment is invalid: \(error.message)")
            configuration = Configuration(relayBaseURL: "http://127.0.0.1:9000")
        }
        let runtime = runtime
        syncthing = FakeSyncthing(
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
            relay: RelayClient(transport: relay, baseURL: configuration.relayBaseURL), cancelSyncthing: {},
            rereadAccess: {
                rereads.withLock { $0 += 1 }
                syncthing.state.withLock {
                    $0.exchanges.append(
                        FakeSyncthing.Exchange(route: .configFile, since: nil, at: runtime.now(), ends: runtime.now()))
                }
                return onDisk.withLock { $0 }
            },
            logger: Logger(
                minimumLevel: configuration.logLevel,
                sink: TimedLogSink(sink: sink) { record in
                    let exchanges = syncthing.state.withLock { $0.exchanges.count }
                    timedRecords.withLock { $0.append((record, runtime.now(), exchanges)) }
                }),
            // systemd's notify socket and the health state file, on the virtual clock (wall time 1_718_000_000 at
            // the start).
            monitor: ServiceMonitor(
                notifier: notifySocket.flatMap { SystemdNotifier(socket: $0) }, stateFile: stateFile,
                monotonic: { runtime.now() },
                wallClock: { 1_718_000_000 + (runtime.now() - Self.t0).components.seconds }))
        let fatalLines = fatalLines
        deps.printFatal = { line in fatalLines.withLock { $0.append(line.text) } }
        let jitter = jitter
        deps.jitter = { jitter.withLock { $0 } }
        // METRICS_FILE, its timestamps on the same wall clock as the monitor's.
        deps.metricsFile = configuration.metricsFile.map { MetricsFile(path: $0) }
        deps.unixMilliseconds = { 1_718_000_000_000 + (runtime.now() - Self.t0).components.seconds * 1000 }
        deps.processStart = 1_717_999_999_500
        let exits = exits
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

    /// Syncthing answers the held long-poll with `body` (a JSON array of events).
    func answer(_ body: String) {
        syncthing.state.withLock { $0.polls.append(.success(body)) }
        runtime.releaseLongPoll()
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
        syncthing.state.withLock { $0.polls.append(.failure(error)) }
        runtime.releaseLongPoll()
    }

    /// Syncthing stops: the held long-poll fails to connect, and so does every request until `down` is cleared.
    func takeSyncthingDown() {
        syncthing.state.withLock { $0.down = true }
        runtime.releaseLongPoll()
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
    func script(_ route: FakeSyncthing.Route, _ replies: [FakeSyncthing.Reply]) {
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
    var exchanges: [FakeSyncthing.Exchange] { syncthing.state.withLock { $0.exchanges } }
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

/// Passes each record on to a sink and to an observer.
final class TimedLogSink: LogSink {
    private let sink: any LogSink
    private let observe: @Sendable (LogRecord) -> Void
    init(sink: any LogSink, observe: @escaping @Sendable (LogRecord) -> Void) {
        self.sink = sink
        self.observe = observe
    }
    func write(_ record: LogRecord) {
        observe(record)
        sink.write(record)
    }
}

/// A value shared between the test and the service's closures.
typealias Locked = ThreadSafe

extension ServiceState {
    /// The two keys `--healthcheck` reads (the rest is for `--status`).
    var healthcheckFields: ServiceState { ServiceState(lastPoll: lastPoll, relay: relay) }
}
