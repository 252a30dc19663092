/// The event long-poll's own decisions, as one pure state machine: which request comes next, how long to back off,
/// whether a failure means a re-sync, and whether that re-sync wakes the relay.
///
/// `Engine` drives it: it asks `next()` for a `Step`, has the service perform a request or a wait (or performs an
/// engine step itself), reports the result to `handle(_:)`, and carries out the `Action`s. No I/O, no clock read;
/// the only time input is how long a long-poll took (`StepResult.polled(_:elapsed:)`). One instance runs one
/// `Phase`: `.connect` (`/rest/system/status` until it answers), `.placeHead` (the event head), `.poll` (the
/// long-poll, each answer followed by a status read unless the connection it came on vouches for it: see
/// `statusRecheck`). What each phase does on each failure is in docs/architecture.md, "The poll loop".
///
/// The `Engine` owns the `EventCursor` and the Device ID (the wake rules, the policy and the sweep read them too);
/// this type asks for them through engine steps (`wakeNow`, `consume`, `checkRestart`, `resync`).
///
/// - Important: a re-sync, once due, stays due until one succeeds: a restart found by ids going back or by a
///   changed Device ID cannot be seen again, so forgetting it would resume from a stale cursor and skip the new
///   run's first events (docs/syncthing-api.md, Restarts).
package struct PollLoop: Sendable {
    /// What one instance does; see the type's description.
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

    /// The one thing the shell does next. Each step but `.finished` is answered by the `StepResult` named with it.
    package enum Step: Sendable, Equatable {
        /// `GET /rest/system/status` → `.status`.
        case readStatus
        /// Long-poll `/rest/events` since the engine's cursor → `.polled`, with the time it took.
        case poll
        /// `since=0&limit=1&timeout=0` → `.head`. Only in `.placeHead`.
        case readHead
        /// Back off for this long (a shutdown may cut it short) → `.slept`.
        case sleep(Duration)
        /// Re-read config.xml and the environment, and swap a changed API key or address in → `.reauthenticated`.
        case reauthenticate
        /// Engine: act on a batch of new events at once, before the status read (a change's
        /// debounce starts when it arrived) → `.woken`.
        case wakeNow([SyncthingEvent])
        /// Engine: adopt `status.myID` if it changed, else apply the batch to the cursor and the policy
        /// (`alreadyWoken`: `.woken`'s answer for this batch) → `.consumed`: did Syncthing restart (or change its
        /// Device ID)?
        case consume([SyncthingEvent], status: SystemStatus, alreadyWoken: Bool)
        /// Engine: adopt `myID` if it changed; did that happen, or does `startTime` differ from the cursor's?
        /// → `.restartChecked`.
        case checkRestart(SystemStatus)
        /// Read the head and re-place the cursor there with `startTime`; log a restart (or lost events); when
        /// `wake`, give the policy `.wake(.resync)` and re-read every pair → `.resynced`.
        case resync(startTime: String, restarted: Bool, wake: Bool)
        /// The phase is over. Answer nothing; stop asking.
        case finished(Outcome)
    }

    /// How a phase ends.
    package enum Outcome: Sendable, Equatable {
        /// `.connect`: Syncthing answered.
        case connected(SystemStatus)
        /// `.placeHead`: the head's event id (Syncthing per-subscription event id; 0 for none).
        case placed(head: Int)
        /// End the process this way (a wrong API key: `Engine.Exit.apiKeyRejected`).
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
        /// True when something changed and was swapped in.
        case reauthenticated(changed: Bool)
        /// True when the engine already acted on the batch; handed back to it with `.consume`.
        case woken(Bool)
        case consumed(restarted: Bool)
        case restartChecked(restarted: Bool)
        /// False when Syncthing did not answer the head read (nothing changed then).
        case resynced(Bool)
    }

    /// What to do besides the next step; none of these has an answer.
    package enum Action: Sendable, Equatable {
        case log(LogRecord)
        /// An event poll succeeded (the monitor: READY=1, last poll time).
        case pollSucceeded
        /// Syncthing did not answer (the monitor's status).
        case syncthingUnavailable
        /// Engine: give the policy `.wake(.resync)`, owed by earlier faults whose re-syncs did not wake.
        case payOwedWake
        /// A re-sync that did not wake has re-placed the cursor: from now on a wake-up is owed for the events it lost
        /// (a trigger sent after this instant pays it).
        case owedWake
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

    package let phase: Phase

    /// Where the loop stands: what it waits for, with what it needs to read the answer.
    private indirect enum Stage: Sendable {
        // .connect
        case connect
        case connectReauthenticate
        // .placeHead
        case placeHead
        // .poll
        case verify
        case verifyCheck(SystemStatus)
        case poll
        case wakeNow([SyncthingEvent], connection: Int?)
        case pollStatus(Result<[SyncthingEvent], Failure>, woken: Bool)
        case consume([SyncthingEvent], SystemStatus, woken: Bool)
        case failureCheck(SystemStatus)
        case resync(Resync, ResyncCause)
        /// After a 401: the status read's failure (for the unavailable record), or nil for a poll's.
        case reauthenticate(statusFailure: Failure?)
        // any phase
        case sleep(Duration, then: Stage)
        case finished(Outcome)
    }

    /// Why the cursor is being re-placed; it decides the wait that follows.
    private enum ResyncCause: Sendable {
        case verify, restart, pollFailure
    }

    /// A re-sync that is due: the status it follows, and what it is.
    private struct Resync: Sendable {
        var startTime: String
        var restarted: Bool
        var wake: Bool
    }

    private var stage: Stage
    /// Consecutive failures (connect, head and poll faults; reset when a poll and its status read succeed).
    private var failures = 0
    /// `.connect`: config.xml was re-read once already.
    private var reloaded = false
    private var verifyFirst = false
    /// Early empty answers in a row.
    private var earlyEmpty = 0
    /// Re-syncs of the current run of faults did not wake the relay.
    private var owedWake = false
    /// The re-sync being tried, or one whose head read failed (see `- Important:`).
    private var dueResync: Resync?
    /// The last status read of `.poll` and the connection it came on, while it vouches for answers on that
    /// connection (`statusRecheck`); nil after any failure, so that the next answer is read with a status again.
    private var vouch: Vouch?
    /// Pinned polls that found their connection gone right after the status read that vouched for it: the server (or
    /// something in front of it) closes every connection after an answer. From `keepAliveGiveUp` on, nothing is
    /// vouched for in this phase and every answer gets its status read, as without kept-alive connections.
    private var goneAfterRead = 0
    private static let keepAliveGiveUp = 2

    private struct Vouch: Sendable {
        var connection: Int
        var status: SystemStatus
        /// Long-poll time since the status read.
        var polled: Duration = .zero
        /// No answer was vouched for yet: the status read was the last request.
        var fresh = true
    }

    /// The connection the next long-poll must go over, when a status read vouches for one: a poll that would need a
    /// new connection must not go out with the cursor before a status read has looked at whoever answers there (a
    /// clean stop answers the held poll, then the process exits, and a new one may be up by the next request).
    package var pollConnection: Int? { vouch?.connection }

    package init(_ phase: Phase) {
        self.phase = phase
        switch phase {
        case .connect: stage = .connect
        case .placeHead: stage = .placeHead
        case .poll: stage = .poll
        }
    }

    /// The step to perform now. The same until `handle(_:)` takes its result.
    package func next() -> Step {
        switch stage {
        case .connect, .verify, .pollStatus: .readStatus
        case .placeHead: .readHead
        case .poll: .poll
        case .connectReauthenticate, .reauthenticate: .reauthenticate
        case .verifyCheck(let status), .failureCheck(let status): .checkRestart(status)
        case .wakeNow(let events, _): .wakeNow(events)
        case .consume(let events, let status, let woken): .consume(events, status: status, alreadyWoken: woken)
        case .resync(let due, _): .resync(startTime: due.startTime, restarted: due.restarted, wake: due.wake)
        case .sleep(let duration, _): .sleep(duration)
        case .finished(let outcome): .finished(outcome)
        }
    }

    /// Takes the result of the step `next()` returned.
    /// - Parameter result: what the step came to. A result that does not answer the current step is ignored.
    /// - Returns: the actions to perform, in order, before asking `next()` again.
    package mutating func handle(_ result: StepResult) -> [Action] {
        switch (stage, result) {
        case (.sleep(_, let then), .slept):
            stage = then
            return []
        case (.connect, .status(let answer, _)):
            return connected(answer)
        case (.connectReauthenticate, .reauthenticated(let changed)):
            guard changed else { return wrongKey() }
            reloaded = true
            stage = .connect
            return [.log(LogRecord(.info, .syncthingKeyReloaded))]
        case (.placeHead, .head(.success(let head))):
            // The head read is the first successful event poll: READY=1 (see ServiceMonitor).
            stage = .finished(.placed(head: head))
            return [.pollSucceeded]
        case (.placeHead, .head(.failure(let failure))):
            failures += 1
            let wait = Self.backoff.ceiling(afterFailures: failures)
            stage = .sleep(wait, then: .placeHead)
            return [.log(LogRecord(.warn, .eventPollFailed, [.code(failure.code), .attempt(failures), .delay(wait)]))]
        case (.verify, .status(.success(let status), let connection)):
            setVouch(connection, status)
            stage = .verifyCheck(status)
            return []
        case (.verify, .status(.failure(let failure), _)):
            return statusFailed(failure)
        case (.verifyCheck(let status), .restartChecked(let restarted)):
            // A restart found here always wakes; a re-sync still due from a failed head read keeps its own flags.
            if restarted || dueResync != nil {
                // One that wakes pays what the failed re-sync owed, as any waking re-sync does.
                let due = Resync(
                    startTime: status.startTime, restarted: restarted || dueResync?.restarted == true,
                    wake: owe(unless: restarted || dueResync?.wake == true))
                stage = resync(due, .verify)
            } else {
                verifyFirst = false
                stage = .poll
            }
            return []
        case (.poll, .polled(let answer, let elapsed, let connection)):
            return polled(answer, elapsed: elapsed, connection: connection)
        case (.wakeNow(let events, let connection), .woken(let woken)):
            return afterPoll(.success(events), woken: woken, connection: connection)
        case (.pollStatus(let answer, let woken), .status(let status, let connection)):
            if case .success(let read) = status { setVouch(connection, read) }
            return pollStatus(answer, woken: woken, status: status)
        case (.consume(_, let status, _), .consumed(let restarted)):
            guard restarted else {
                failures = 0
                stage = top
                guard owedWake else { return [] }
                owedWake = false
                return [.payOwedWake]
            }
            // A real restart is rare; one that repeats at once (a server replaying old ids) is a fault and must
            // neither spin nor spam: the second and later ones in a row back off and do not wake.
            failures += 1
            let wake = owe(unless: failures == 1)
            stage = resync(Resync(startTime: status.startTime, restarted: true, wake: wake), .restart)
            return []
        case (.failureCheck(let status), .restartChecked(let restarted)):
            let wake = owe(unless: failures == 1 || restarted)
            stage = resync(Resync(startTime: status.startTime, restarted: restarted, wake: wake), .pollFailure)
            return []
        case (.resync(let due, let cause), .resynced(let done)):
            if !done { vouch = nil }
            resynced(done, cause: cause)
            // The cursor is past the lost events now; a re-sync that did not wake owes the wake-up from here on.
            return done && !due.wake ? [.owedWake] : []
        case (.reauthenticate(let statusFailure), .reauthenticated(let changed)):
            vouch = nil
            return reauthenticated(changed, statusFailure: statusFailure)
        default:
            return []
        }
    }

    // MARK: - Internals

    /// The start of a long-poll round.
    private var top: Stage { verifyFirst ? .verify : .poll }

    private func afterBackoff(_ failures: Int, then next: Stage) -> Stage {
        .sleep(Self.backoff.ceiling(afterFailures: failures), then: next)
    }

    /// Re-syncs now; until that succeeds, the re-sync stays due (see `- Important:` above).
    private mutating func resync(_ due: Resync, _ cause: ResyncCause) -> Stage {
        dueResync = due
        return .resync(due, cause)
    }

    /// Whether a re-sync wakes; when it does not, a wake-up is owed. One that wakes pays what earlier faults owed
    /// (its wake-up comes after them), so recovery adds no second wake-up.
    private mutating func owe(unless wake: Bool) -> Bool {
        owedWake = !wake
        return wake
    }

    private mutating func connected(_ answer: Result<SystemStatus, Failure>) -> [Action] {
        switch answer {
        case .success(let status):
            stage = .finished(.connected(status))
            return []
        case .failure(let failure) where failure.isUnauthorized:
            // Re-read config.xml once: the key may have changed. A key that is still wrong is simply wrong.
            guard reloaded else {
                stage = .connectReauthenticate
                return []
            }
            return wrongKey()
        case .failure(let failure):
            failures += 1
            let wait = Self.backoff.ceiling(afterFailures: failures)
            stage = .sleep(wait, then: .connect)
            let level: LogLevel = failures == 1 || failures % 10 == 0 ? .warn : .debug
            return [
                .log(LogRecord(level, .syncthingUnavailable, fields(failure) + [.delay(wait)])), .syncthingUnavailable,
            ]
        }
    }

    private mutating func wrongKey() -> [Action] {
        stage = .finished(.exit(.apiKeyRejected))
        return [.log(LogRecord(.error, .syncthingAuthFailed, [.code(.syncthingUnauthorized)]))]
    }

    private mutating func polled(
        _ answer: Result<[SyncthingEvent], Failure>, elapsed: Duration, connection: Int?
    ) -> [Action] {
        if case .failure(let failure) = answer, failure.code == .transportConnectionGone {
            // Nothing was sent: not a fault. Read the status on a new connection first, then poll over it.
            if vouch?.fresh == true { goneAfterRead += 1 }
            vouch = nil
            stage = .verify
            return []
        }
        if case .success = answer, let connection, vouch?.connection == connection {
            vouch?.polled += elapsed
        } else {
            vouch = nil
        }
        guard case .success(let events) = answer, events.isEmpty, elapsed < Self.earlyAnswer else {
            earlyEmpty = 0
            if case .success(let events) = answer, !events.isEmpty {
                stage = .wakeNow(events, connection: connection)
                return []
            }
            return afterPoll(answer, woken: false, connection: connection)
        }
        earlyEmpty += 1
        stage = .pollStatus(answer, woken: false)
        guard earlyEmpty > 1 else { return [] }
        stage = afterBackoff(earlyEmpty - 1, then: stage)
        return [.log(LogRecord(.debug, .eventPollFailed, [.count(earlyEmpty)]))]
    }

    /// A successful status read vouches for its connection (none when the transport could not name it, or when
    /// connections are not kept here).
    private mutating func setVouch(_ connection: Int?, _ status: SystemStatus) {
        guard let connection, goneAfterRead < Self.keepAliveGiveUp else {
            vouch = nil
            return
        }
        vouch = Vouch(connection: connection, status: status)
    }

    /// After a poll's answer (and the engine's early look at its events): the status the connection vouches for, or
    /// a status read.
    private mutating func afterPoll(
        _ answer: Result<[SyncthingEvent], Failure>, woken: Bool, connection: Int?
    ) -> [Action] {
        if case .success = answer, var held = vouch, held.connection == connection, held.polled < Self.statusRecheck {
            held.fresh = false
            vouch = held
            return pollStatus(answer, woken: woken, status: .success(held.status))
        }
        stage = .pollStatus(answer, woken: woken)
        return []
    }

    private mutating func pollStatus(
        _ answer: Result<[SyncthingEvent], Failure>, woken: Bool, status: Result<SystemStatus, Failure>
    ) -> [Action] {
        switch (answer, status) {
        case (.success(let events), .success(let status)):
            stage = .consume(events, status, woken: woken)
            return [.pollSucceeded]
        case (.failure(let failure), .success(let status)):
            // Syncthing answers, but this poll was cut, oversized or unparsable: events may be lost.
            failures += 1
            let record = LogRecord(.warn, .eventPollFailed, [.code(failure.code), .attempt(failures)])
            stage = failure.isUnauthorized ? .reauthenticate(statusFailure: nil) : .failureCheck(status)
            return [.log(record)]
        case (_, .failure(let failure)):
            verifyFirst = true
            vouch = nil
            return statusFailed(failure)
        }
    }

    /// The status read failed (verify-first, or after a poll): retry after a backoff, or at once with a new key.
    private mutating func statusFailed(_ failure: Failure) -> [Action] {
        failures += 1
        if failure.isUnauthorized {
            stage = .reauthenticate(statusFailure: failure)
            return []
        }
        stage = afterBackoff(failures, then: top)
        return unavailable(failure)
    }

    private mutating func resynced(_ done: Bool, cause: ResyncCause) {
        if done { dueResync = nil }
        switch (cause, done) {
        case (.verify, true):
            verifyFirst = false
            stage = .poll
        case (.verify, false):
            failures += 1
            stage = afterBackoff(failures, then: top)
        case (.pollFailure, false):
            verifyFirst = true
            stage = afterBackoff(failures, then: top)
        case (.restart, _), (.pollFailure, true):
            if !done { verifyFirst = true }
            // Re-placing the cursor worked (or a restart's head read failed), but faults repeat: never retry in a
            // tight loop.
            stage = failures > 1 ? afterBackoff(failures - 1, then: top) : top
        }
    }

    private mutating func reauthenticated(_ changed: Bool, statusFailure: Failure?) -> [Action] {
        let record =
            changed
            ? LogRecord(.info, .syncthingKeyReloaded)
            : LogRecord(
                failures <= 1 || failures % 20 == 0 ? .error : .debug, .syncthingAuthFailed,
                [.code(.syncthingUnauthorized), .attempt(failures)])
        guard let failure = statusFailure else {
            // A poll's 401 while the status read worked: back off whatever the re-read found.
            stage = afterBackoff(failures, then: top)
            return [.log(record)]
        }
        guard !changed else {
            stage = top
            return [.log(record)]
        }
        stage = afterBackoff(failures, then: top)
        return [.log(record)] + unavailable(failure)
    }

    private func unavailable(_ failure: Failure) -> [Action] {
        let level: LogLevel = failures == 1 || failures % 20 == 0 ? .warn : .debug
        return [.log(LogRecord(level, .syncthingUnavailable, fields(failure))), .syncthingUnavailable]
    }

    /// `status` (when there is one), `code`, `attempt`.
    private func fields(_ failure: Failure) -> [LogField] {
        var fields: [LogField] = [.code(failure.code), .attempt(failures)]
        if let status = failure.status { fields.insert(.status(status), at: 0) }
        return fields
    }
}
