import Testing

@testable import NotifyCore

/// Drives the real `Engine` on virtual time against a scripted Syncthing, performing its requests and waits as the
/// service does, and records what happened. Only moves when the test says so; a long-poll with nothing scripted is
/// "held", which ends a run.
///
/// The relay answers every trigger at once, and the debounce is zero, so that each wake-up shows as one trigger
/// at the instant the engine decided it.
struct PollLoopHarness {
    typealias Failure = PollLoop.Failure

    /// Which phase the run starts in: the engine is brought there through the real start-up first.
    let phase: PollLoop.Phase
    var engine: Engine
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
    /// Whether successive config.xml re-reads after a 401 find a change; none when empty.
    var reauthScript: [Bool] = []

    // What happened.
    /// One short name per request or wait performed: `poll`, `status`, `head`, `reauth` (a re-read after a 401),
    /// `reread` (any other re-read of config.xml), `sleep 0.5`.
    var trace: [String] = []
    /// The poll loop's records (the engine's own and the policy's are in `engineLogs`).
    var logs: [LogRecord] = []
    var engineLogs: [LogRecord] = []
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

    /// Records that are the engine's or the policy's, not the poll loop's.
    static let engineMessages: Set<LogMessage> = [
        .relayHealthy, .syncthingConnected, .eventsReceived, .wakeScheduled, .triggerSending, .triggerDelivered,
        .syncthingRestarted, .eventGap, .deviceIDChanged,
    ]

    /// The actions waiting to be performed, in the order the engine asked: requests, waits and re-reads. One batch
    /// can ask for two (a ConfigSaved's re-read, then the status read), so this is a queue, not a single slot.
    private var pending: [Engine.Action] = []

    init(_ phase: PollLoop.Phase = .poll, head: Int = 0, settings: Engine.Settings = Self.settings) {
        self.phase = phase
        self.head = head
        engine = Engine(settings: settings)
        feed(.start)
        answerPending(.relayHealth(.ok))
        if phase == .connect {
            reset()
            return
        }
        answerPending(.status(.success(status)))
        if phase == .placeHead {
            reset()
            return
        }
        answerPending(.head(.success(head)))
        reset()
    }

    /// The start-up answers the one request it asked for itself.
    private mutating func answerPending(_ input: Engine.Input) {
        pending.removeAll()
        feed(input)
    }

    /// No announce, no sweep, no debounce; Syncthing is never taken for moved.
    static let settings = Engine.Settings(
        policy: WakePolicy.Settings(debounce: .zero, startupAnnounce: false, staleRetrigger: nil),
        rereadWhenUnreachableFor: .seconds(1_000_000))

    private mutating func reset() {
        trace = []
        logs = []
        engineLogs = []
        pollsSucceeded = 0
        unavailable = 0
    }

    /// The engine's cursor and Device ID.
    var cursor: EventCursor { engine.cursor }
    var deviceID: String { engine.deviceID }

    /// Performs requests and waits until the phase finishes, a long-poll has nothing scripted (held: traced, not
    /// performed), or `limit` steps.
    mutating func run(limit: Int = 500) {
        for _ in 0..<limit {
            if outcome != nil { return }
            guard let action = pending.first else {
                Issue.record("the engine asked for nothing")
                return
            }
            if case .request(.poll) = action, polls.isEmpty {
                trace.append("poll")
                return
            }
            pending.removeFirst()
            feed(perform(action))
        }
        Issue.record("no end after \(limit) steps: \(trace.suffix(20))")
    }

    private mutating func perform(_ action: Engine.Action) -> Engine.Input {
        switch action {
        case .request(.status):
            trace.append("status")
            return .status(statusScript.isEmpty ? .success(status) : statusScript.removeFirst())
        case .request(.head):
            trace.append("head")
            return .head(headScript.isEmpty ? .success(head) : headScript.removeFirst())
        case .request(.poll):
            trace.append("poll")
            let (answer, latency) = polls.removeFirst()
            now = now + latency
            return .polled(answer, elapsed: latency)
        case .armTimer(.backoff, let at):
            trace.append("sleep \(Self.seconds(at - now))")
            now = at
            return .timerFired(.backoff)
        case .reread(let reason):
            trace.append(reason == .unauthorized ? "reauth" : "reread")
            // Only the 401's re-read is scripted; any other finds config.xml unchanged.
            let changed = reason == .unauthorized && !reauthScript.isEmpty ? reauthScript.removeFirst() : false
            return .reread(reason, changed ? .changed : .unchanged)
        default:
            preconditionFailure("not a request: \(action)")
        }
    }

    /// Feeds one input and performs what needs no answer from Syncthing at once.
    private mutating func feed(_ input: Engine.Input) {
        let polled = if case .polled = input { true } else { false }
        var actions = engine.handle(input, now: now)
        var resyncLogged = false
        var gapLogged = false
        var reason: WakeReason?
        while !actions.isEmpty {
            let action = actions.removeFirst()
            switch action {
            case .request, .reread, .armTimer(.backoff, _):
                pending.append(action)
            case .exit(let how):
                outcome = .exit(how)
            case .log(let record):
                if Self.engineMessages.contains(record.message) {
                    engineLogs.append(record)
                } else {
                    logs.append(record)
                }
                if record.message == .syncthingRestarted || (record.message == .eventGap && record.fields.isEmpty) {
                    resyncs.append((now, record.message == .syncthingRestarted, false))
                    resyncLogged = true
                }
                if record.message == .eventGap && !record.fields.isEmpty { gapLogged = true }
                if record.message == .wakeScheduled, case .reason(let r)? = record.fields.first?.value { reason = r }
                if record.message == .eventsReceived, case .int(let count)? = record.fields.first?.value {
                    delivered.append((engine.cursor.since - count + 1, count))
                }
            case .monitor(.pollSucceeded):
                pollsSucceeded += 1
            case .monitor(.syncthingUnavailable):
                unavailable += 1
            case .armTimer(.policy(.debounce), _):
                if resyncLogged {
                    resyncs[resyncs.count - 1].wake = true
                    resyncLogged = false
                } else if gapLogged {
                    gapLogged = false
                } else if reason == .change && polled {
                    wokeAtOnce.append(now)
                } else if reason == .resync {
                    owedWakesPaid.append(now)
                }
                reason = nil
                // No debounce: the wake-up goes out now, and the relay takes it.
                actions += engine.handle(.timerFired(.policy(.debounce)), now: now)
            case .sendTrigger:
                actions += engine.handle(.relayOutcome(.delivered(status: 202), jitter: 0), now: now)
            default:
                break
            }
        }
        if phase == .connect, outcome == nil, case .request(.head)? = pending.last {
            outcome = .connected(status)
        }
        if phase == .placeHead, outcome == nil, case .request(.poll)? = pending.last {
            outcome = .placed(head: engine.cursor.since)
        }
    }

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
    func logged(_ message: LogMessage) -> [LogRecord] { (logs + engineLogs).filter { $0.message == message } }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}
