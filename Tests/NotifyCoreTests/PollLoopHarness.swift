import Testing

@testable import NotifyCore

/// Drives a `PollLoop` on virtual time, like the production shell does on its poll thread: it performs each step
/// against a scripted Syncthing and a model of the engine (a real `EventCursor` and Device ID), and records what
/// happened. Only moves when the test says so; a long-poll with nothing scripted is "held", which ends a run.
struct PollLoopHarness {
    typealias Failure = PollLoop.Failure

    var loop: PollLoop
    var now = Instant.zero

    // Syncthing, as scripted.
    /// What the status read answers when `statusScript` is empty.
    var status = SystemStatus(myID: Self.idA, startTime: "2026-12-01T00:00:00Z")
    var statusScript: [Result<SystemStatus, Failure>] = []
    /// The head when `headScript` is empty.
    var head = 0
    var headScript: [Result<Int, Failure>] = []
    /// Successive long-poll answers and how long each takes.
    var polls: [(Result<[SyncthingEvent], Failure>, Duration)] = []
    /// Whether successive config.xml re-reads find a change; none when empty.
    var reauthScript: [Bool] = []

    // The engine, as modelled.
    var cursor: EventCursor
    var deviceID = Self.idA

    // What happened.
    /// One short name per step performed, e.g. `poll`, `status`, `sleep 0.5`.
    var trace: [String] = []
    var logs: [LogRecord] = []
    /// When a change woke at once (before its status read).
    var wokeAtOnce: [Instant] = []
    /// Batches the engine applied: (first id, count).
    var delivered: [(Int, Int)] = []
    /// Re-syncs that placed the cursor: (when, restarted, wake).
    var resyncs: [(at: Instant, restarted: Bool, wake: Bool)] = []
    var owedWakesPaid: [Instant] = []
    var pollsSucceeded = 0
    var unavailable = 0
    var outcome: PollLoop.Outcome?

    static let idA = "AAAAAAA-BBBBBBB-CCCCCCC-DDDDDDD-EEEEEEE-FFFFFFF-GGGGGGG-HHHHHHH"
    static let idB = "ZZZZZZZ-BBBBBBB-CCCCCCC-DDDDDDD-EEEEEEE-FFFFFFF-GGGGGGG-HHHHHHH"

    init(_ phase: PollLoop.Phase = .poll, head: Int = 0) {
        loop = PollLoop(phase)
        self.head = head
        cursor = EventCursor(head: head, startTime: "2026-12-01T00:00:00Z")
    }

    /// Performs steps until the phase finishes, a long-poll has nothing scripted (held: traced, not performed), or
    /// `limit` steps.
    mutating func run(limit: Int = 500) {
        for _ in 0..<limit {
            let step = loop.next()
            if case .finished(let outcome) = step {
                self.outcome = outcome
                return
            }
            if step == .poll && polls.isEmpty {
                trace.append("poll")
                return
            }
            let result = perform(step)
            for action in loop.handle(result) {
                switch action {
                case .log(let record): logs.append(record)
                case .pollSucceeded: pollsSucceeded += 1
                case .syncthingUnavailable: unavailable += 1
                case .payOwedWake: owedWakesPaid.append(now)
                }
            }
        }
        Issue.record("no end after \(limit) steps: \(trace.suffix(20))")
    }

    private mutating func perform(_ step: PollLoop.Step) -> PollLoop.StepResult {
        switch step {
        case .readStatus:
            trace.append("status")
            return .status(statusScript.isEmpty ? .success(status) : statusScript.removeFirst())
        case .readHead:
            trace.append("head")
            return .head(nextHead())
        case .poll:
            trace.append("poll")
            let (answer, latency) = polls.removeFirst()
            now = now + latency
            return .polled(answer, elapsed: latency)
        case .sleep(let d):
            trace.append("sleep \(Self.seconds(d))")
            now = now + d
            return .slept
        case .reauthenticate:
            trace.append("reauth")
            return .reauthenticated(changed: reauthScript.isEmpty ? false : reauthScript.removeFirst())
        case .wakeNow(let events):
            trace.append("wake")
            guard let first = events.first, first.id > cursor.since, events.contains(where: Self.wakes) else {
                return .woken(false)
            }
            wokeAtOnce.append(now)
            return .woken(true)
        case .consume(let events, let st, _):
            trace.append("consume")
            if adopt(st.myID) { return .consumed(restarted: true) }
            switch cursor.consume(events, startTime: st.startTime) {
            case .events(let batch), .gap(let batch): delivered.append((batch[0].id, batch.count))
            case .idle: break
            case .restarted: return .consumed(restarted: true)
            }
            return .consumed(restarted: false)
        case .checkRestart(let st):
            trace.append("check")
            return .restartChecked(restarted: adopt(st.myID) || cursor.startTime != st.startTime)
        case .resync(let startTime, let restarted, let wake):
            trace.append("resync")
            guard case .success(let head) = nextHead() else { return .resynced(false) }
            cursor.reset(head: head, startTime: startTime)
            resyncs.append((now, restarted, wake))
            return .resynced(true)
        case .finished:
            preconditionFailure("handled by run()")
        }
    }

    private mutating func nextHead() -> Result<Int, Failure> {
        headScript.isEmpty ? .success(head) : headScript.removeFirst()
    }

    private mutating func adopt(_ id: String) -> Bool {
        guard id != deviceID else { return false }
        deviceID = id
        return true
    }

    /// The engine's wake rule, simplified: a LocalIndexUpdated wakes, anything else does not.
    static func wakes(_ event: SyncthingEvent) -> Bool { event.type == "LocalIndexUpdated" }

    // MARK: - Scripting and reading

    static func change(_ id: Int) -> SyncthingEvent {
        SyncthingEvent(id: id, type: "LocalIndexUpdated", folder: "vault")
    }
    static func inSync(_ id: Int) -> SyncthingEvent {
        SyncthingEvent(id: id, type: "FolderCompletion", folder: "vault", needItems: 0, needBytes: 0, needDeletes: 0)
    }

    /// A long-poll answered with `events` after `seconds`.
    mutating func answer(_ events: [SyncthingEvent], after seconds: Double = 2) {
        polls.append((.success(events), .milliseconds(Int64(seconds * 1000))))
    }

    /// A long-poll that fails with `code` after `seconds`.
    mutating func fail(_ code: ErrorCode, status: Int? = nil, after seconds: Double = 0.1) {
        polls.append((.failure(Failure(code: code, status: status)), .milliseconds(Int64(seconds * 1000))))
    }

    /// The trace without the sleeps.
    var requests: [String] { trace.filter { !$0.hasPrefix("sleep") } }
    /// Every backoff, in seconds.
    var sleeps: [Double] { trace.filter { $0.hasPrefix("sleep ") }.map { Double($0.dropFirst(6))! } }
    var seconds: Double { Self.seconds(now.sinceOrigin) }
    func logged(_ message: LogMessage) -> [LogRecord] { logs.filter { $0.message == message } }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}
