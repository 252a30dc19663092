/// The event long-poll, as one pure state machine: the cursor in Syncthing's event stream and the Device ID it belongs
/// to, which request comes next, how long to back off, whether a failure means a re-sync and whether that re-sync
/// wakes the relay.
///
/// The engine asks `next()` for a `Step`, which is only I/O (a status read, a head read, a long-poll, a wait, a
/// re-read of config.xml) or the end of the run, has the service perform it, and gives its result to `handle(_:)`.
/// That answers with what the loop learned (`Action`: news to read at once, a batch applied to the cursor, events lost
/// before one, a re-sync done, Syncthing back after a fault), which the engine routes to the tracker, the policy and
/// the monitor. No I/O, no clock read; the only time input is how long a long-poll took
/// (`StepResult.polled(_:elapsed:connection:)`).
///
/// It runs three phases, in order: `.connect` (`/rest/system/status` until it answers: the Device ID and the start
/// time), `.placeHead` (the event head, where the cursor starts), `.poll` (the long-poll, each answer followed by a
/// status read unless the connection it came on vouches for it: see `statusRecheck`). What each phase does on each
/// failure is in docs/architecture.md, "The poll loop".
///
/// - Important: a re-sync, once due, stays due until one succeeds: a restart found by ids going back or by a
///   changed Device ID cannot be seen again, so forgetting it would resume from a stale cursor and skip the new
///   run's first events (docs/syncthing-api.md, Restarts).
package struct PollLoop: Sendable {
    /// Where the loop is: see the type's description.
    package enum Phase: Sendable, Equatable {
        case connect, placeHead, poll
    }

    /// A failed Syncthing request, as the loop sees it: the log-safe code and the HTTP status behind it, if any.
    package struct Failure: Error, Sendable, Equatable {
        package var code: ErrorCode
        package var status: Int?

        package init(code: ErrorCode, status: Int? = nil) {
            self.code = code
            self.status = status
        }

        /// 401, or 403 `CSRF Error`: the API key is wrong (docs/syncthing-api.md, Auth and the API key).
        package var isUnauthorized: Bool { code == .syncthingUnauthorized }
    }

    /// The one thing the service does next. Each step but `.exit` is answered by the `StepResult` named with it.
    package enum Step: Sendable, Equatable {
        /// `GET /rest/system/status` → `.status`.
        case readStatus
        /// `since=0&limit=1&timeout=0` → `.head`: the head to place the cursor at (at the start, and at a re-sync).
        case readHead
        /// Long-poll `/rest/events` after event id `since` → `.polled`, with the time it took; over the connection
        /// `onConnection` only, when one is given (`pollConnection`).
        case poll(since: Int, onConnection: Int?)
        /// Wait this long (a shutdown may cut it short) → `.slept`: a backoff, or the pause of a busy stream
        /// (`busyPace`).
        case sleep(Duration)
        /// Re-read config.xml and the environment, and swap a changed API key or address in → `.reauthenticated`.
        case reauthenticate
        /// End the process this way (a wrong API key, a malformed Device ID). Answer nothing; stop asking.
        case exit(Engine.Exit)
    }

    /// What a step came to.
    ///
    /// `connection` is the transport's identity of the connection that carried a Syncthing answer (nil when it
    /// cannot tell): two answers with the same one came from the same Syncthing process, because a restart closes
    /// every connection (docs/syncthing-api.md, Restarts).
    package enum StepResult: Sendable, Equatable {
        case status(Result<SystemStatus, Failure>, connection: Int? = nil)
        /// - Parameter elapsed: from sending the long-poll to its answer (or failure), on a monotonic clock.
        case polled(Result<[SyncthingEvent], Failure>, elapsed: Duration, connection: Int? = nil)
        case head(Result<Int, Failure>)
        case slept
        /// `changed` when something changed and was swapped in.
        case reauthenticated(changed: Bool)

        /// How a Syncthing request went: `.answered`, or `.failed` with why; nil for a wait or a re-read.
        package var request: RequestOutcome? {
            switch self {
            case .status(let answer, _): RequestOutcome(answer)
            case .polled(let answer, _, _): RequestOutcome(answer)
            case .head(let answer): RequestOutcome(answer)
            case .slept, .reauthenticated: nil
            }
        }
    }

    /// A Syncthing request's result without its payload.
    package enum RequestOutcome: Sendable, Equatable {
        case answered
        case failed(Failure)

        init(_ result: Result<some Sendable, Failure>) {
            switch result {
            case .success: self = .answered
            case .failure(let failure): self = .failed(failure)
            }
        }
    }

    /// What the loop learned from a result, in the order it learned it; none of these has an answer.
    package enum Action: Sendable, Equatable {
        case log(LogRecord)
        /// An event poll (or the first head read) succeeded: the monitor's READY=1 and last poll time.
        case pollSucceeded
        /// Syncthing did not answer (the monitor's status).
        case syncthingUnavailable
        /// Connected and the cursor placed at the head: from now on, events are news.
        case ready
        /// A batch past the cursor, handed over at once, before its status read, so that a change's debounce starts
        /// when it arrived. Only the events not handed over before: a batch polled again (its status read failed,
        /// so the cursor did not move) is not news twice; it may be empty then.
        case news([SyncthingEvent])
        /// A batch applied to the cursor. `handedOver`: it came with `.news` already (read it only when not).
        case applied([SyncthingEvent], handedOver: Bool)
        /// A batch applied to the cursor after a hole: events were lost before or inside it (the buffer overflowed).
        case appliedAfterGap([SyncthingEvent], handedOver: Bool)
        /// The cursor was re-placed at the head: Syncthing restarted (`restarted`), or events were lost. `wake`: this
        /// re-sync wakes the relay; one that does not owes a wake-up from now on for what it lost, paid by
        /// `.recovered` unless a trigger goes out first.
        case resynced(restarted: Bool, wake: Bool)
        /// A poll and its status read succeed again after re-syncs that did not wake: the wake-up they owe is due.
        case recovered
    }

    /// Reconnect backoff towards Syncthing on loopback: cheap, so short (0.5 s doubling to 5 s), which keeps a change
    /// made right after a Syncthing restart within the debounce plus a few seconds.
    package static let backoff = Backoff(base: .milliseconds(500), cap: .seconds(5))

    /// An empty poll answer sooner than this counts as early (the poll asks Syncthing to wait 50 s).
    package static let earlyAnswer: Duration = .seconds(1)

    /// How long a status read vouches for the answers that come on its connection, counted in long-poll time.
    ///
    /// A poll answered on the connection the last status read was answered on comes from the process that status
    /// described, so it needs no status read of its own: one request per answer instead of two. The proof fails
    /// where something keeps the connection while Syncthing restarts behind it (a reverse proxy in front of the
    /// GUI): so a status read still follows an answer once this much poll time has passed since the last one, which
    /// bounds how late such a restart is seen (and the re-sync then wakes the relay for what it hid).
    package static let statusRecheck: Duration = .seconds(10)

    /// Under a steady stream of events, the long-poll goes out at most once per this long.
    ///
    /// Syncthing answers a long-poll as soon as one event passes the cursor, so a stream of 380 events a second
    /// costs a request for every two events, and the request, not the events, is most of the CPU. Once
    /// `busyStreak` answers in a row have come sooner than this, the next poll waits out the rest of it and then
    /// collects everything that came meanwhile: at 380 a second, about 38 events per request. What it costs: an
    /// event that comes during the pause is read up to this much later (its debounce starts then), and only while
    /// the stream lasts; a save, a few answers, is read at once. Syncthing keeps the last 1000 events of the
    /// subscription (docs/syncthing-api.md, "Event ids, gaps and the buffer"), so a pause loses none below 10,000
    /// events a second, and one lost above that is a gap, which wakes.
    package static let busyPace: Duration = .milliseconds(100)

    /// Answers with events, each sooner than `busyPace`, that make a stream steady (see `busyPace`).
    package static let busyStreak = 4

    /// The position in Syncthing's event stream; `since` 0 and no start time until the head was placed.
    package private(set) var cursor = EventCursor(head: 0, startTime: "")
    /// Syncthing's Device ID (well-formed); empty until connected. A status read that shows another one adopts it
    /// (the wake-ups carry the new one from then on) and re-syncs.
    package private(set) var deviceID = ""
    package private(set) var phase = Phase.connect

    /// Where the loop stands: what it waits for, with what it needs to read the answer.
    private indirect enum Stage: Sendable {
        // .connect
        case connect
        case connectReauthenticate
        // .placeHead
        case placeHead
        // .poll
        case verify
        case poll
        case pollStatus(Result<[SyncthingEvent], Failure>, handedOver: Bool)
        case resync(Resync, ResyncCause)
        /// After a 401: the status read's failure (for the unavailable record), or nil for a poll's.
        case reauthenticate(statusFailure: Failure?)
        // any phase
        case sleep(Duration, then: Stage)
        /// A steady stream's pause (`busyPace`): a wait as `.sleep`, which a stop reads after (`lastRead`).
        case pause(Duration, then: Stage)
        case exit(Engine.Exit)
    }

    /// Why the cursor is being re-placed; it decides the wait that follows.
    private enum ResyncCause: Sendable {
        case verify, restart, pollFailure
    }

    /// A re-sync that is due: the start time of the run it places the cursor in, and what it is.
    private struct Resync: Sendable {
        var startTime: String
        var restarted: Bool
        var wake: Bool
    }

    /// What one phase counts; each phase starts with none of it.
    private struct Counts: Sendable {
        /// Consecutive failures (connect, head and poll faults; reset when a poll and its status read succeed).
        var failures = 0
        /// `.connect`: config.xml was re-read once already.
        var reloaded = false
        var verifyFirst = false
        /// Early empty answers in a row.
        var earlyEmpty = 0
        /// Re-syncs of the current run of faults did not wake the relay.
        var owedWake = false
        /// The re-sync being tried, or one whose head read failed (see `- Important:`).
        var dueResync: Resync?
        /// The last status read of `.poll` and the connection it came on, while it vouches for answers on that
        /// connection (`statusRecheck`); nil after any failure, so that the next answer is read with a status again.
        var vouch: Vouch?
        /// Pinned polls that found their connection gone right after the status read that vouched for it: the
        /// server (or something in front of it) closes every connection after an answer. From `keepAliveGiveUp` on,
        /// nothing is vouched for in this phase and every answer gets its status read, as without kept-alive
        /// connections.
        var goneAfterRead = 0
        /// Answers with events in a row, each sooner than `busyPace` after its poll went out; a failure, a gone
        /// connection or a re-sync ends the row.
        var quickAnswers = 0
        /// The rest of `busyPace` after the last answer, once the stream is steady: the wait before the next poll.
        var pause: Duration?
    }

    private static let keepAliveGiveUp = 2

    private struct Vouch: Sendable {
        var connection: Int
        var status: SystemStatus
        /// Long-poll time since the status read.
        var polled: Duration = .zero
        /// No answer was vouched for yet: the status read was the last request.
        var fresh = true
    }

    private var stage = Stage.connect
    private var counts = Counts()
    /// The highest event id handed over as `.news` since the cursor was placed.
    private var handedOverThrough = 0

    /// The connection the next long-poll must go over, when a status read vouches for one: a poll that would need a
    /// new connection must not go out with the cursor before a status read has looked at whoever answers there (a
    /// clean stop answers the held poll, then the process exits, and a new one may be up by the next request).
    package var pollConnection: Int? { counts.vouch?.connection }

    /// A loop at the start of `.connect`.
    package init() {}

    /// During a steady stream's pause, the read a stop makes before it flushes: events after `since` with no wait,
    /// over `onConnection` when one vouches. A change that came during the pause is read then, not lost with the
    /// process (the next run starts at the head). Nil when no pause is being waited out: a held long-poll has read
    /// every event up to the stop.
    package var lastRead: (since: Int, onConnection: Int?)? {
        guard case .pause = stage else { return nil }
        return (handedOverThrough, pollConnection)
    }

    /// What a stop's last read (`lastRead`) found that was not handed over before.
    package func lastReadNews(_ events: [SyncthingEvent]) -> [SyncthingEvent] {
        events.filter { $0.id > handedOverThrough }
    }

    /// The step to perform now. The same until `handle(_:)` takes its result.
    package func next() -> Step {
        switch stage {
        case .connect, .verify, .pollStatus: .readStatus
        case .placeHead, .resync: .readHead
        case .poll: .poll(since: cursor.since, onConnection: pollConnection)
        case .connectReauthenticate, .reauthenticate: .reauthenticate
        case .sleep(let duration, _), .pause(let duration, _): .sleep(duration)
        case .exit(let how): .exit(how)
        }
    }

    /// Whether `result` answers the step `next()` returns (a result of another kind is ignored by `handle(_:)`).
    package func awaits(_ result: StepResult) -> Bool {
        switch (next(), result) {
        case (.readStatus, .status), (.readHead, .head), (.poll, .polled), (.sleep, .slept),
            (.reauthenticate, .reauthenticated):
            true
        default: false
        }
    }

    /// Takes the result of the step `next()` returned.
    /// - Parameter result: what the step came to. A result that does not answer the current step is ignored.
    /// - Returns: what the loop learned, in order, to route before asking `next()` again.
    package mutating func handle(_ result: StepResult) -> [Action] {
        switch (stage, result) {
        case (.sleep(let waited, let then), .slept), (.pause(let waited, let then), .slept):
            // Time passes while waiting, as it does during a poll: it counts towards the status re-check.
            counts.vouch?.polled += waited
            stage = then
            return []
        case (.connect, .status(let answer, _)):
            return connected(answer)
        case (.connectReauthenticate, .reauthenticated(let changed)):
            guard changed else { return wrongKey() }
            counts.reloaded = true
            stage = .connect
            return [.log(LogRecord(.info, .syncthingKeyReloaded))]
        case (.placeHead, .head(.success(let head))):
            cursor = EventCursor(head: head, startTime: cursor.startTime)
            handedOverThrough = head
            enter(.poll)
            // The head read is the first successful event poll: READY=1 (see ServiceMonitor).
            return [.pollSucceeded, .ready]
        case (.placeHead, .head(.failure(let failure))):
            counts.failures += 1
            let wait = Self.backoff.ceiling(afterFailures: counts.failures)
            stage = .sleep(wait, then: .placeHead)
            let fields: [LogField] = [.code(failure.code), .attempt(counts.failures), .delay(wait)]
            return [.log(LogRecord(.warn, .eventPollFailed, fields))]
        case (.verify, .status(.success(let status), let connection)):
            setVouch(connection, status)
            return verified(status)
        case (.verify, .status(.failure(let failure), _)):
            return statusFailed(failure)
        case (.poll, .polled(let answer, let elapsed, let connection)):
            return polled(answer, elapsed: elapsed, connection: connection)
        case (.pollStatus(let answer, let handedOver), .status(let status, let connection)):
            if case .success(let read) = status { setVouch(connection, read) }
            return pollStatus(answer, handedOver: handedOver, status: status)
        case (.resync(let due, let cause), .head(let head)):
            return resynced(due, cause: cause, head: head)
        case (.reauthenticate(let statusFailure), .reauthenticated(let changed)):
            counts.vouch = nil
            return reauthenticated(changed, statusFailure: statusFailure)
        default:
            return []
        }
    }

    // MARK: - Internals

    /// The start of a long-poll round.
    private var top: Stage { counts.verifyFirst ? .verify : .poll }

    private mutating func enter(_ next: Phase) {
        phase = next
        counts = Counts()
        stage =
            switch next {
            case .connect: .connect
            case .placeHead: .placeHead
            case .poll: .poll
            }
    }

    private func afterBackoff(_ failures: Int, then next: Stage) -> Stage {
        .sleep(Self.backoff.ceiling(afterFailures: failures), then: next)
    }

    /// Re-syncs now; until that succeeds, the re-sync stays due (see `- Important:` above).
    private mutating func resync(_ due: Resync, _ cause: ResyncCause) {
        counts.dueResync = due
        counts.quickAnswers = 0
        stage = .resync(due, cause)
    }

    /// Whether a re-sync wakes; when it does not, a wake-up is owed. One that wakes pays what earlier faults owed
    /// (its wake-up comes after them), so recovery adds no second wake-up.
    private mutating func owe(unless wake: Bool) -> Bool {
        counts.owedWake = !wake
        return wake
    }

    /// Syncthing restarted, as far as a status read tells: a new start time, or a new Device ID (its identity was
    /// replaced; it is adopted, and logged). Ids going back are the cursor's to see.
    private mutating func restarted(_ status: SystemStatus, _ out: inout [Action]) -> Bool {
        if status.myID != deviceID, DeviceID.isWellFormed(status.myID) {
            deviceID = status.myID
            out.append(.log(LogRecord(.warn, .deviceIDChanged)))
            return true
        }
        return status.startTime != cursor.startTime
    }

    private mutating func connected(_ answer: Result<SystemStatus, Failure>) -> [Action] {
        switch answer {
        case .success(let status):
            guard DeviceID.isWellFormed(status.myID) else {
                stage = .exit(.deviceIDMalformed)
                return [.log(LogRecord(.error, .deviceIDMalformed, [.code(.syncthingMalformed)]))]
            }
            deviceID = status.myID
            cursor = EventCursor(head: 0, startTime: status.startTime)
            enter(.placeHead)
            return []
        case .failure(let failure) where failure.isUnauthorized:
            // Re-read config.xml once: the key may have changed. A key that is still wrong is simply wrong.
            guard counts.reloaded else {
                stage = .connectReauthenticate
                return []
            }
            return wrongKey()
        case .failure(let failure):
            counts.failures += 1
            let wait = Self.backoff.ceiling(afterFailures: counts.failures)
            stage = .sleep(wait, then: .connect)
            let level: LogLevel = counts.failures == 1 || counts.failures % 10 == 0 ? .warn : .debug
            return [
                .log(LogRecord(level, .syncthingUnavailable, fields(failure) + [.delay(wait)])), .syncthingUnavailable,
            ]
        }
    }

    private mutating func wrongKey() -> [Action] {
        stage = .exit(.apiKeyRejected)
        return [.log(LogRecord(.error, .syncthingAuthFailed, [.code(.syncthingUnauthorized)]))]
    }

    /// The verify-first status read answered: re-sync first when Syncthing restarted meanwhile or a re-sync is due.
    private mutating func verified(_ status: SystemStatus) -> [Action] {
        var out: [Action] = []
        let restarted = restarted(status, &out)
        // A restart found here always wakes; a re-sync still due from a failed head read keeps its own flags.
        guard restarted || counts.dueResync != nil else {
            counts.verifyFirst = false
            stage = .poll
            return out
        }
        // One that wakes pays what the failed re-sync owed, as any waking re-sync does.
        let due = Resync(
            startTime: status.startTime, restarted: restarted || counts.dueResync?.restarted == true,
            wake: owe(unless: restarted || counts.dueResync?.wake == true))
        resync(due, .verify)
        return out
    }

    private mutating func polled(
        _ answer: Result<[SyncthingEvent], Failure>, elapsed: Duration, connection: Int?
    ) -> [Action] {
        if case .failure(let failure) = answer, failure.code == .transportConnectionGone {
            // Nothing was sent: not a fault. Read the status on a new connection first, then poll over it; until a
            // status read has answered, every retry starts with one (verify-first), or a retry after a refused read
            // would poll a restarted Syncthing with the old run's cursor.
            if counts.vouch?.fresh == true { counts.goneAfterRead += 1 }
            counts.vouch = nil
            counts.quickAnswers = 0
            counts.verifyFirst = true
            stage = .verify
            return []
        }
        if case .success = answer, let connection, counts.vouch?.connection == connection {
            counts.vouch?.polled += elapsed
        } else {
            counts.vouch = nil
        }
        if case .success(let events) = answer, !events.isEmpty, elapsed < Self.busyPace {
            counts.quickAnswers += 1
        } else {
            counts.quickAnswers = 0
        }
        counts.pause = counts.quickAnswers >= Self.busyStreak ? Self.busyPace - elapsed : nil
        guard case .success(let events) = answer, events.isEmpty, elapsed < Self.earlyAnswer else {
            counts.earlyEmpty = 0
            var out: [Action] = []
            var handedOver = false
            // Ids at or below the cursor are a replay or a restart: the cursor's verdict decides what they mean.
            if case .success(let events) = answer, let first = events.first, first.id > cursor.since {
                out.append(.news(events.filter { $0.id > handedOverThrough }))
                handedOverThrough = max(handedOverThrough, events[events.count - 1].id)
                handedOver = true
            }
            return out + afterPoll(answer, handedOver: handedOver, connection: connection)
        }
        counts.earlyEmpty += 1
        stage = .pollStatus(answer, handedOver: false)
        guard counts.earlyEmpty > 1 else { return [] }
        stage = afterBackoff(counts.earlyEmpty - 1, then: stage)
        return [.log(LogRecord(.debug, .eventPollFailed, [.count(counts.earlyEmpty)]))]
    }

    /// A successful status read vouches for its connection (none when the transport could not name it, or when
    /// connections are not kept here).
    private mutating func setVouch(_ connection: Int?, _ status: SystemStatus) {
        guard let connection, counts.goneAfterRead < Self.keepAliveGiveUp else {
            counts.vouch = nil
            return
        }
        counts.vouch = Vouch(connection: connection, status: status)
    }

    /// After a poll's answer (and its news handed over): the status the connection vouches for, or a status read.
    private mutating func afterPoll(
        _ answer: Result<[SyncthingEvent], Failure>, handedOver: Bool, connection: Int?
    ) -> [Action] {
        if case .success = answer, var held = counts.vouch, held.connection == connection,
            held.polled < Self.statusRecheck
        {
            held.fresh = false
            counts.vouch = held
            return pollStatus(answer, handedOver: handedOver, status: .success(held.status))
        }
        stage = .pollStatus(answer, handedOver: handedOver)
        // A steady stream's pause goes before the status read, so that the read still comes right before the poll
        // it vouches for.
        if let pause = counts.pause {
            counts.pause = nil
            stage = .pause(pause, then: stage)
        }
        return []
    }

    private mutating func pollStatus(
        _ answer: Result<[SyncthingEvent], Failure>, handedOver: Bool, status: Result<SystemStatus, Failure>
    ) -> [Action] {
        switch (answer, status) {
        case (.success(let events), .success(let status)):
            var out: [Action] = [.pollSucceeded]
            apply(events, status, handedOver: handedOver, &out)
            return out
        case (.failure(let failure), .success(let status)):
            // Syncthing answers, but this poll was cut, oversized or unparsable: events may be lost.
            counts.failures += 1
            var out: [Action] = [
                .log(LogRecord(.warn, .eventPollFailed, [.code(failure.code), .attempt(counts.failures)]))
            ]
            if failure.isUnauthorized {
                stage = .reauthenticate(statusFailure: nil)
                return out
            }
            let restarted = restarted(status, &out)
            let wake = owe(unless: counts.failures == 1 || restarted)
            resync(Resync(startTime: status.startTime, restarted: restarted, wake: wake), .pollFailure)
            return out
        case (_, .failure(let failure)):
            counts.verifyFirst = true
            counts.vouch = nil
            return statusFailed(failure)
        }
    }

    /// Applies a polled batch to the cursor, with the status read that followed it (or vouched for it).
    private mutating func apply(
        _ events: [SyncthingEvent], _ status: SystemStatus, handedOver: Bool, _ out: inout [Action]
    ) {
        var restarted = restarted(status, &out)
        if !restarted {
            switch cursor.consume(events, startTime: status.startTime) {
            case .idle: break
            case .events(let batch): out.append(.applied(batch, handedOver: handedOver))
            case .gap(let batch): out.append(.appliedAfterGap(batch, handedOver: handedOver))
            case .restarted: restarted = true
            }
        }
        guard restarted else {
            counts.failures = 0
            stage = top
            if let pause = counts.pause, case .poll = stage { stage = .pause(pause, then: .poll) }
            if counts.owedWake {
                counts.owedWake = false
                out.append(.recovered)
            }
            return
        }
        // A real restart is rare; one that repeats at once (a server replaying old ids) is a fault and must
        // neither spin nor spam: the second and later ones in a row back off and do not wake.
        counts.failures += 1
        let wake = owe(unless: counts.failures == 1)
        resync(Resync(startTime: status.startTime, restarted: true, wake: wake), .restart)
    }

    /// The status read failed (verify-first, or after a poll): retry after a backoff, or at once with a new key.
    private mutating func statusFailed(_ failure: Failure) -> [Action] {
        counts.failures += 1
        // What piles up during the backoff comes at once after it: that is no steady stream.
        counts.quickAnswers = 0
        if failure.isUnauthorized {
            stage = .reauthenticate(statusFailure: failure)
            return []
        }
        stage = afterBackoff(counts.failures, then: top)
        return unavailable(failure)
    }

    /// The re-sync's head read came back: on success the cursor is re-placed there (past the lost events).
    private mutating func resynced(_ due: Resync, cause: ResyncCause, head: Result<Int, Failure>) -> [Action] {
        var out: [Action] = []
        let done: Bool
        switch head {
        case .success(let head):
            cursor.reset(head: head, startTime: due.startTime)
            handedOverThrough = head
            counts.dueResync = nil
            out.append(.resynced(restarted: due.restarted, wake: due.wake))
            done = true
        case .failure:
            counts.vouch = nil
            done = false
        }
        switch (cause, done) {
        case (.verify, true):
            counts.verifyFirst = false
            stage = .poll
        case (.verify, false):
            counts.failures += 1
            stage = afterBackoff(counts.failures, then: top)
        case (.pollFailure, false):
            counts.verifyFirst = true
            stage = afterBackoff(counts.failures, then: top)
        case (.restart, _), (.pollFailure, true):
            if !done { counts.verifyFirst = true }
            // Re-placing the cursor worked (or a restart's head read failed), but faults repeat: never retry in a
            // tight loop.
            stage = counts.failures > 1 ? afterBackoff(counts.failures - 1, then: top) : top
        }
        return out
    }

    private mutating func reauthenticated(_ changed: Bool, statusFailure: Failure?) -> [Action] {
        let record =
            changed
            ? LogRecord(.info, .syncthingKeyReloaded)
            : LogRecord(
                counts.failures <= 1 || counts.failures % 20 == 0 ? .error : .debug, .syncthingAuthFailed,
                [.code(.syncthingUnauthorized), .attempt(counts.failures)])
        guard let failure = statusFailure else {
            // A poll's 401 while the status read worked: back off whatever the re-read found.
            stage = afterBackoff(counts.failures, then: top)
            return [.log(record)]
        }
        guard !changed else {
            stage = top
            return [.log(record)]
        }
        stage = afterBackoff(counts.failures, then: top)
        return [.log(record)] + unavailable(failure)
    }

    private func unavailable(_ failure: Failure) -> [Action] {
        let level: LogLevel = counts.failures == 1 || counts.failures % 20 == 0 ? .warn : .debug
        return [.log(LogRecord(level, .syncthingUnavailable, fields(failure))), .syncthingUnavailable]
    }

    /// `status` (when there is one), `code`, `attempt`.
    private func fields(_ failure: Failure) -> [LogField] {
        var fields: [LogField] = [.code(failure.code), .attempt(counts.failures)]
        if let status = failure.status { fields.insert(.status(status), at: 0) }
        return fields
    }
}
