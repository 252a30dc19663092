import NotifyCore
import NotifyRuntime

/// The VaultSync relay as the service reaches it (spec: relay-spec; README, "Relay answers"): its health check, and
/// the trigger, answered as its current mode says. A trigger it accepts becomes a push to the phone unless the relay's
/// push window, counted from its last push on its own (true) clock, swallows it silently. So the checker can tell a
/// trigger that woke the phone from one that was lost.
final class SimRelay: HTTPTransport, @unchecked Sendable {
    // @unchecked: the simulation runs on one thread.

    /// How the relay answers right now.
    enum Mode: Equatable, CustomStringConvertible {
        case healthy
        /// 400–403: no active subscription.
        case inactive(Int)
        /// 404 from a relay that answered before (a deploy behind a proxy).
        case outage404
        /// 404 for everything, health included: RELAY_URL names no relay.
        case wrongURL
        /// 429 with a Retry-After in delta seconds, or as an HTTP-date (with or without a `Date` header).
        case rateLimited(date: Bool, dateHeader: Bool)
        /// A 5xx; `pushes`: the relay pushed before it failed.
        case serverError(Int, pushes: Bool)
        /// No answer until the request's time limit; `pushes`: it was received and pushed.
        case hang(pushes: Bool)
        /// Answers, slowly (1–15 s).
        case slow
        /// The answer is cut after the relay received the trigger.
        case cut(pushes: Bool)
        /// Connection refused.
        case unreachable

        var description: String {
            switch self {
            case .healthy: "healthy"
            case .inactive(let s): "inactive \(s)"
            case .outage404: "outage 404"
            case .wrongURL: "wrong URL"
            case .rateLimited(let date, let header):
                "429 \(date ? "date" : "delta")\(date && !header ? " (no Date)" : "")"
            case .serverError(let s, let p): "\(s)\(p ? " (pushes)" : "")"
            case .hang(let p): "hang\(p ? " (pushes)" : "")"
            case .slow: "slow"
            case .cut(let p): "cut\(p ? " (pushes)" : "")"
            case .unreachable: "unreachable"
            }
        }
    }

    unowned let world: World
    var runtime: SimRuntime { world.runtime }
    let baseURL: String
    /// The relay's push window: it pushes at most once per this long (true time); nil for none.
    let window: Duration?
    var mode = Mode.healthy
    private var rng: SimRandom
    private var lastPush: Duration?
    private(set) var pushes = 0
    private(set) var swallowed = 0
    private(set) var triggers = 0

    init(world: World, seed: UInt64, baseURL: String, window: Duration?) {
        self.world = world
        self.baseURL = baseURL
        self.window = window
        rng = SimRandom.fork(seed, "relay")
    }

    func cancel() {}

    func perform(_ request: HTTPRequest) -> Result<HTTPResponse, TransportError> {
        if request.url.hasSuffix("/api/v1/health") { return health(request) }
        return trigger(request)
    }

    private func answer(_ status: Int, _ body: String, _ headers: [String: String] = [:]) -> Result<
        HTTPResponse, TransportError
    > {
        .success(HTTPResponse(status: status, headers: headers, body: Array(body.utf8)))
    }

    private func health(_ request: HTTPRequest) -> Result<HTTPResponse, TransportError> {
        runtime.spend(rng.duration(.milliseconds(10), .milliseconds(200)))
        let result: Result<HTTPResponse, TransportError>
        switch mode {
        case .wrongURL: result = answer(404, "404 page not found\n")
        case .unreachable: result = .failure(.connect)
        case .serverError(let status, _): result = answer(status, "bad gateway\n")
        case .hang:
            runtime.spend(request.totalTimeout)
            result = .failure(.timeout)
        default: result = answer(200, #"{"status":"ok","version":"1.3.2"}"#)
        }
        let status: Int? = if case .success(let r) = result { r.status } else { nil }
        world.trace("relay health → \(status.map(String.init) ?? "no answer")")
        let at = runtime.now()
        let checker = world.checker
        runtime.atJobTime { checker.relayHealthAnswered(status: status, at: at) }
        return result
    }

    private func trigger(_ request: HTTPRequest) -> Result<HTTPResponse, TransportError> {
        triggers += 1
        let sent = runtime.now()
        let body = String(decoding: request.body ?? [], as: UTF8.self)
        world.checker.triggerSent(at: sent, asked: runtime.jobQueuedAt ?? sent, body: body, url: request.url)
        let limit = request.totalTimeout
        var latency =
            mode == .slow
            ? rng.duration(.seconds(1), .seconds(15)) : rng.duration(.milliseconds(20), .milliseconds(300))
        var receives = false
        var retryAfter: String?
        var intended: Checker.RetryAfterMeaning?
        var date: String?
        var result: Result<HTTPResponse, TransportError>
        switch mode {
        case .healthy, .slow:
            receives = true
            result = answer(202, #"{"status":"accepted","devices_notified":1}"#)
        case .inactive(let status):
            result = answer(status, #"{"error":"no active subscription"}"#)
        case .outage404, .wrongURL:
            result = answer(404, "404 page not found\n")
        case .rateLimited(let isDate, let dateHeader):
            let trueWall = runtime.trueWallNow.components.seconds
            if isDate {
                let delta = Int64(rng.int(-30...3700))
                retryAfter = Self.imfFixdate(trueWall + delta)
                if dateHeader {
                    date = Self.imfFixdate(trueWall)
                    intended = .seconds(delta)
                } else {
                    intended = .dateAgainstHostClock(trueWall + delta)
                }
            } else {
                switch rng.int(0...9) {
                case 0:
                    retryAfter = "soon"
                    intended = .unreadable
                case 1:
                    retryAfter = nil
                    intended = .unreadable
                case 2:
                    retryAfter = "99999999999999"
                    intended = .seconds(Int64(1) << 40)
                default:
                    let delta = Int64(rng.int(0...300))
                    retryAfter = "\(delta)"
                    intended = .seconds(delta)
                }
            }
            var headers: [String: String] = [:]
            if let retryAfter { headers["retry-after"] = retryAfter }
            if let date { headers["date"] = date }
            result = answer(429, #"{"error":"rate limited"}"#, headers)
        case .serverError(let status, let pushes):
            receives = pushes
            result = answer(status, "upstream error\n")
        case .hang(let pushes):
            receives = pushes
            latency = limit
            result = .failure(.timeout)
        case .cut(let pushes):
            receives = pushes
            result = .failure(.truncated)
        case .unreachable:
            latency = .milliseconds(1)
            result = .failure(.connect)
        }
        // A Device ID with no subscription (the server's old one, after its identity changed): the spec's 403.
        if receives, body != #"{"device_id": "\#(world.syncthing.myID)"}"# {
            receives = false
            result = answer(403, #"{"error":"no active subscription"}"#)
        }
        // The relay decides on a push when the trigger reaches it.
        let reached = runtime.trueNow + (sent - runtime.monotonicNow) + latency / 2
        var pushed = false
        if receives, body == #"{"device_id": "\#(world.syncthing.myID)"}"# {
            if let window, let last = lastPush, reached - last < window {
                swallowed += 1
            } else {
                pushed = true
                pushes += 1
                lastPush = reached
            }
        }
        runtime.spend(min(latency, limit))
        let status: Int? = if case .success(let r) = result { r.status } else { nil }
        world.trace(
            "relay trigger → \(status.map(String.init) ?? "no answer") (\(mode))\(pushed ? " pushed" : receives ? " swallowed" : "")"
                + (retryAfter.map { " retry-after=\($0)" } ?? ""))
        let error: TransportError? = if case .failure(let e) = result { e } else { nil }
        let answer = Checker.RelayAnswer(
            status: status, error: error, retryAfter: intended, pushed: pushed, swallowed: receives && !pushed,
            hostWallSeconds: runtime.unixSeconds())
        let at = runtime.now()
        let checker = world.checker
        runtime.atJobTime { checker.triggerAnswered(answer, at: at) }
        return result
    }

    /// An HTTP-date in the IMF-fixdate form (`Sun, 06 Nov 1994 08:49:37 GMT`).
    static func imfFixdate(_ seconds: Int64) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let (y, m, d) = RetryAfter.civilFromDays(days)
        let rest = seconds - days * 86_400
        let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let weekday = weekdays[Int(((days % 7) + 7) % 7)]
        return
            "\(weekday), \(two(d)) \(months[Int(m) - 1]) \(y) \(two(rest / 3600)):\(two(rest % 3600 / 60)):\(two(rest % 60)) GMT"
    }
}
