import Dispatch
import NotifyCore
import Synchronization
import Testing

@testable import NotifyRuntime

/// A Syncthing on loopback, as the service's transport sees it: answers by path, at one port, with one API key.
/// A request to another port is refused, as is every request while it is down.
final class FakeSyncthing: HTTPTransport {
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
    }
    let state = ThreadSafe(State())
    /// Spends a long-poll's time on the virtual clock.
    let onPoll: @Sendable (Duration) -> Void
    /// The virtual clock, to record when each long-poll was answered.
    let clock: @Sendable () -> Instant
    /// On real threads: a long-poll with no answer scripted waits (up to 10 s) for one, or for `cancel()`.
    let holdsPolls: Bool
    private let pollScripted = DispatchSemaphore(value: 0)
    private let cancelled = Atomic<Bool>(false)

    init(
        holdsPolls: Bool = false, clock: @escaping @Sendable () -> Instant = { .zero },
        onPoll: @escaping @Sendable (Duration) -> Void = { _ in }
    ) {
        self.holdsPolls = holdsPolls
        self.clock = clock
        self.onPoll = onPoll
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
        let (answer, pollTime) = state.withLock { s -> (Result<HTTPResponse, TransportError>, Duration?) in
            let rest = request.url.split(separator: "//", maxSplits: 1).last.map(String.init) ?? ""
            let hostPort = rest.prefix { $0 != "/" }
            let port = Int(hostPort.split(separator: ":").last ?? "") ?? 0
            let pathAndQuery = rest.dropFirst(hostPort.count)
            let path = String(pathAndQuery.prefix { $0 != "?" })
            s.seen.append(path)
            s.ports.append(port)
            if s.down || port != s.port { return (.failure(.connect), nil) }
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
                s.pollTimes.append(clock())
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
        return answer
    }

    private func ok(_ status: Int, _ body: String) -> Result<HTTPResponse, TransportError> {
        .success(HTTPResponse(status: status, headers: [:], body: Array(body.utf8)))
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

    init(
        announce: Bool = true, debounce: Duration = .seconds(5), sweep: Duration? = nil, window: Duration? = nil,
        watched: Set<String> = [], notifySocket: String? = nil, stateFile: StateFile? = nil,
        metricsFile: String? = nil, logLevel: LogLevel = .debug
    ) {
        let runtime = runtime
        syncthing = FakeSyncthing(clock: { runtime.now() }) { runtime.skip($0) }
        relay = FakeRelay { runtime.now() }
        let onDisk = onDisk
        let rereads = rereadCount
        var deps = Service.Dependencies(
            syncthing: SyncthingClient(transport: syncthing, access: Self.access(port: 8384)),
            relay: RelayClient(transport: relay, baseURL: "http://127.0.0.1:9000"), cancelSyncthing: {},
            rereadAccess: {
                rereads.withLock { $0 += 1 }
                return onDisk.withLock { $0 }
            }, logger: Logger(minimumLevel: logLevel, sink: sink),
            // systemd's notify socket and the health state file, on the virtual clock (wall time 1_718_000_000 at
            // the start).
            monitor: ServiceMonitor(
                notifier: notifySocket.flatMap { SystemdNotifier(socket: $0) }, stateFile: stateFile,
                monotonic: { runtime.now() },
                wallClock: { 1_718_000_000 + (runtime.now() - Self.t0).components.seconds }))
        let fatalLines = fatalLines
        deps.printFatal = { line in fatalLines.withLock { $0.append(line) } }
        let jitter = jitter
        deps.jitter = { jitter.withLock { $0 } }
        // METRICS_FILE, its timestamps on the same wall clock as the monitor's.
        deps.metricsFile = metricsFile.map { MetricsFile(path: $0) }
        deps.unixMilliseconds = { 1_718_000_000_000 + (runtime.now() - Self.t0).components.seconds * 1000 }
        let exits = exits
        service = Service(
            dependencies: deps,
            settings: Engine.Settings(
                policy: WakePolicy.Settings(
                    debounce: debounce, startupAnnounce: announce, staleRetrigger: sweep, relayWindow: window),
                watchedFolders: watched),
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

/// A value shared between the test and the service's closures.
typealias Locked = ThreadSafe

extension ServiceState {
    /// The two keys `--healthcheck` reads (the rest is for `--status`).
    var healthcheckFields: ServiceState { ServiceState(lastPoll: lastPoll, relay: relay) }
}
