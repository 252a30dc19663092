import NotifyCore
import NotifyRuntime

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
        /// The relay's own behaviour (`receive(_:at:limit:)`): how long each trigger's answer takes (one that takes
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

/// The relay's own behaviour beyond its scripted answers (README.md, "Relay answers"): each answer takes a while, it
/// pushes to the phone for a trigger it received unless its push window (counted from its last push) swallows it.
extension FakeRelay.State {
    /// Takes one trigger that came at `now` with the request's time limit `limit`; returns how the relay answers it.
    mutating func receive(_ scripted: FakeRelay.Answer, at now: Instant, limit: Duration) -> FakeRelay.Answer {
        // A relay slower than the request's limit is a timeout, at the limit.
        let answer = latency > limit ? .failure(.timeout) : scripted
        let received: Bool
        switch answer {
        case .status(let status, _) where (200...299).contains(status): received = true
        case .status(let status, _) where (500...599).contains(status): received = receivesFailures
        case .failure(.timeout), .failure(.truncated): received = receivesFailures
        default: received = false
        }
        if received {
            if let window = pushWindow, let last = pushes.last, now - last < window {
                swallowed.append(now)
            } else {
                pushes.append(now)
            }
        }
        answerTimes.append(now + min(latency, limit))
        if latency > .zero { holdAnswer?(min(latency, limit)) }
        return answer
    }
}
