@testable import NotifyCore

/// Drives a `WakePolicy` on virtual time, like the production shell does on Dispatch: it keeps the armed timers,
/// fires them in order as time advances, and answers each trigger with the next scripted relay outcome after a
/// scripted latency. Only moves when the test says so.
struct PolicyHarness {
    var policy: WakePolicy
    var now = Instant.zero
    var timers: [WakePolicy.Timer: Instant] = [:]
    /// (time sent, reason) for each trigger.
    var sent: [(Instant, WakeReason)] = []
    var sweeps: [Instant] = []
    var logs: [LogRecord] = []
    var exitStatus: ExitStatus?
    /// Outcomes for successive triggers; when empty, triggers are delivered (202).
    var relayScript: [RelayOutcome] = []
    /// How long the relay takes to answer.
    var relayLatency: Duration = .milliseconds(50)
    /// Answer for successive sweeps; when empty, nobody needs data.
    var sweepScript: [Int?] = []
    var jitter = 0.5
    /// The relay's own push window (README.md, "Relay answers"): a delivered trigger within this long of the relay's
    /// last push is accepted but pushes nothing. Nil: every delivered trigger pushes.
    var relayPushWindow: Duration?
    /// When the relay pushed (it receives a trigger at the instant it is sent).
    var pushes: [Instant] = []
    /// Triggers the relay accepted but swallowed inside its push window.
    var swallowed: [Instant] = []
    /// The relay received the triggers whose answers fail with a 5xx, a timeout or a cut (and pushed if it could).
    var relayReceivesFailures = false

    private mutating func recordAtRelay() {
        if let window = relayPushWindow, let last = pushes.last, now - last < window {
            swallowed.append(now)
        } else {
            pushes.append(now)
        }
    }
    private var pendingOutcome: (Instant, RelayOutcome)?
    private var pendingSweep: (Instant, Int?)?
    var maxInFlight = 0
    private var inFlight = 0

    init(_ settings: WakePolicy.Settings) { policy = WakePolicy(settings: settings) }

    mutating func send(_ input: WakePolicy.Input) { perform(policy.handle(input, now: now)) }

    /// Advances virtual time to `target`, firing timers and relay answers that fall due, in time order.
    mutating func advance(to target: Instant) {
        while exitStatus == nil {
            var next: (Instant, Int)?
            if let t = timers.values.min() { next = (t, 0) }
            if let (t, _) = pendingOutcome, next == nil || t < next!.0 { next = (t, 1) }
            if let (t, _) = pendingSweep, next == nil || t < next!.0 { next = (t, 2) }
            guard let (t, kind) = next, t <= target else { break }
            now = max(now, t)
            switch kind {
            case 0:
                let timer = timers.first(where: { $0.value == t })!.key
                timers[timer] = nil
                send(.timerFired(timer))
            case 1:
                let outcome = pendingOutcome!.1
                pendingOutcome = nil
                inFlight -= 1
                send(.relayOutcome(outcome, jitter: jitter))
            default:
                let answer = pendingSweep!.1
                pendingSweep = nil
                send(.sweepFinished(peersNeedingData: answer))
            }
        }
        if exitStatus == nil { now = max(now, target) }
    }

    mutating func advance(by d: Duration) { advance(to: now + d) }
    mutating func advance(seconds s: Double) { advance(to: now + .milliseconds(Int64(s * 1000))) }

    private mutating func perform(_ actions: [WakePolicy.Action]) {
        for action in actions {
            switch action {
            case .sendTrigger(let reason):
                sent.append((now, reason))
                inFlight += 1
                maxInFlight = max(maxInFlight, inFlight)
                precondition(pendingOutcome == nil, "two triggers in flight")
                let outcome = relayScript.isEmpty ? .delivered(status: 202) : relayScript.removeFirst()
                pendingOutcome = (now + relayLatency, outcome)
                if case .delivered = outcome {
                    recordAtRelay()
                } else if relayReceivesFailures && outcome.mayHavePushed {
                    recordAtRelay()
                }

            case .armTimer(let timer, let at):
                timers[timer] = at
            case .cancelTimer(let timer):
                timers[timer] = nil
            case .runSweep:
                sweeps.append(now)
                let answer = sweepScript.isEmpty ? 0 : sweepScript.removeFirst()
                pendingSweep = (now + .milliseconds(10), answer)
            case .log(let record):
                logs.append(record)
            case .exit(let how):
                exitStatus = how.status
            }
        }
    }

    /// Send times in seconds, for readable expectations.
    var sentSeconds: [Double] {
        sent.map {
            Double($0.0.sinceOrigin.components.seconds) + Double($0.0.sinceOrigin.components.attoseconds) / 1e18
        }
    }
    var reasons: [WakeReason] { sent.map(\.1) }

    /// The changes (by the instant they reached the policy) that no push followed.
    func unpushed(_ changes: [Instant]) -> [Instant] {
        changes.filter { change in !pushes.contains { $0 > change } }
    }
}

extension WakePolicy.Settings {
    /// Defaults with no announce and no sweep, so a timeline shows only what the test does.
    static func quiet(debounce: Double = 5, max: Double = 30) -> Self {
        .init(
            debounce: .milliseconds(Int64(debounce * 1000)), debounceMax: .milliseconds(Int64(max * 1000)),
            startupAnnounce: false, staleRetrigger: nil)
    }
}
