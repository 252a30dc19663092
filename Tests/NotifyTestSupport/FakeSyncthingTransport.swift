import Dispatch
import NotifyCore
import NotifyRuntime
import Synchronization
import Testing

/// Syncthing as the service's transport sees it, in memory (no socket, no process): answers by path, at one port,
/// with one API key. A request to another port is refused, as is every request while it is down. The end-to-end
/// suites' `FakeSyncthingProcess` is the process-level counterpart.
final class FakeSyncthingTransport: HTTPTransport {
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
        /// Events that came while no long-poll was out (JSON objects, in order): the next poll's answer.
        var buffered: [String] = []
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
        if holdsPolls, request.url.contains("/rest/events?"), !request.url.hasSuffix("timeout=0") {
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
            case "/rest/events" where pathAndQuery.hasSuffix("timeout=0"):
                // A read that does not wait (a stop's last read): what Syncthing kept meanwhile, or nothing.
                defer { s.buffered = [] }
                return (ok(200, "[" + s.buffered.joined(separator: ",") + "]"), nil)
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
