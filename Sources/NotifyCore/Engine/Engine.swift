/// Every decision of the running sidecar, as one pure, deterministic state machine: time is an input, there is no
/// I/O. The service feeds it `Input`s with the current `Instant` and performs the `Action`s it returns, in order.
///
/// It owns the poll loop (`PollLoop`: connect, place the head, long-poll; it keeps the event cursor and the Device
/// ID), the `PeerTracker`, the `WakePolicy` and the config reads, routes what the loop learns to them, and decides
/// how the run ends.
///
/// - Start: check the relay (a 404 exits 78 with its fatal lines), connect to Syncthing (a malformed Device ID
///   exits 75; a key still rejected after a re-read exits 78), place the cursor at the head, start the policy and
///   read the config and every pair's state.
/// - Each polled batch is read through the tracker at once (a change's debounce starts when it arrived), then
///   applied to the cursor once its status read came back. A gap wakes and re-reads every pair's state; a restart
///   (new start time, new Device ID, or ids going back) re-places the cursor.
/// - config.xml and the environment are re-read on SIGHUP, after a 401/403, on a ConfigSaved event, and when
///   Syncthing stays unreachable (`Settings.rereadWhenUnreachableFor`, then at most every
///   `Settings.rereadWhileUnreachableEvery`): a moved GUI address, a new key or TLS pin is taken.
package struct Engine: Sendable {
    package let settings: Settings

    /// Margin kept from the shutdown grace for the exit itself.
    package static let exitMargin: Duration = .milliseconds(500)

    package private(set) var policy: WakePolicy
    package private(set) var tracker: PeerTracker
    /// Syncthing's Device ID; empty until connected (the poll loop's).
    package var deviceID: String { loop.deviceID }

    private enum Phase: Sendable, Equatable {
        case idle, relayCheck, loop, stopping, exited
    }
    private var phase = Phase.idle
    private var loop = PollLoop()
    /// Counted news of the batch handed over early (`PollLoop.Action.news`, for the `events received` record).
    private var newsReadEarly = 0
    /// `PeerTracker.eventsRead` when each observation still to come was asked for, in order (the peers lane answers
    /// in order): what an answer may change of the tracker (`PeerTracker.absorb`).
    private var observeAsked: [Int] = []
    /// When the batch being applied came (`PollLoop.Action.news`).
    private var batchArrived: Instant?
    /// A config read for a ConfigSaved is queued and has not landed yet.
    private var configReadQueued = false
    /// Since when Syncthing has been unreachable (nil while it answers), and when config.xml was last re-read for it.
    private var unreachableSince: Instant?
    private var lastUnreachableReread: Instant?
    private var malformedAnswers = MalformedAnswerLog()
    /// Requests asked for (`Action.request`) and not answered yet: one at most, unless the shell broke that rule.
    private var requestsInFlight = 0
    /// A stop waits for its last read (`PollLoop.lastRead`) before it flushes.
    private var readingLast = false
    /// When the last re-sync that did not wake re-placed the cursor (`PollLoop.Action.resynced`), and when the last
    /// trigger was sent: an owed wake-up is paid by any trigger sent after it.
    private var owedSince: Instant?
    private var lastTriggerSent: Instant?
    /// The last decisions, for `--status` (`Progress.recent`).
    package private(set) var decisions = DecisionLog()

    package init(settings: Settings) {
        self.settings = settings
        policy = WakePolicy(settings: settings.policy)
        tracker = PeerTracker(rules: WakeRules(watchedFolders: settings.watchedFolders))
    }

    /// How many entries the engine holds in collections (`PeerTracker.heldEntries`; the rest is fixed-size).
    package var heldEntries: Int { tracker.heldEntries }

    /// True once the engine asked for the exit; later inputs are ignored.
    package var hasExited: Bool { phase == .exited }

    /// The records of a stop with nothing pending: what every stop logs before the service has anything to flush
    /// (also before the engine exists, while config.xml is awaited).
    package static var idleStopRecords: [LogRecord] {
        var policy = WakePolicy(
            settings: WakePolicy.Settings(startupAnnounce: false, staleRetrigger: nil, relayWindow: nil))
        return policy.handle(.stop, now: .zero).compactMap {
            if case .log(let record) = $0 { record } else { nil }
        }
    }

    /// Feeds one input.
    /// - Returns: the actions to perform, in order.
    package mutating func handle(_ input: Input, now: Instant) -> [Action] {
        guard phase != .exited else { return [] }
        var out: [Action] = []
        switch input {
        case .start:
            guard phase == .idle else { break }
            phase = .relayCheck
            out = [.monitor(.connecting), ask(.relayHealth)]
        case .relayHealth(let health):
            requestsInFlight = max(0, requestsInFlight - 1)
            if phase == .relayCheck {
                out = relayChecked(health, now: now)
            } else if phase != .stopping {
                out = answeredUnasked(now: now)
            }
        case .status(let answer, let connection):
            out = answered(.status(answer, connection: connection), now: now)
        case .head(let answer):
            out = answered(.head(answer), now: now)
        case .polled(let answer, let elapsed, let connection):
            out = answered(.polled(answer, elapsed: elapsed, connection: connection), now: now)
        case .reread(let reason, let result):
            out = reread(reason, result, now: now)
        case .configRead(let kind, let generation, let snapshot, let malformed):
            out = malformedAnswers.note(malformed, now: now).map { .log($0) }
            out += configRead(kind, generation: generation, snapshot, now: now)
        case .observed(let kind, let observations, let malformed):
            out = malformedAnswers.note(malformed, now: now).map { .log($0) }
            let asked = observeAsked.isEmpty ? nil : observeAsked.removeFirst()
            let needing = observations.map { tracker.absorb($0, askedAt: asked) }
            if kind == .sweep { out += swept(observations, needing: needing, now: now) }
        case .timerFired(.backoff):
            out = answered(.slept, now: now)
        case .timerFired(.policy(let timer)):
            out = policyActions(.timerFired(timer), now: now)
        case .relayOutcome(let outcome, let jitter):
            let reason = policy.inFlightReason
            let reacted = policyActions(.relayOutcome(outcome, jitter: jitter), now: now)
            // Noted before the policy's actions, which may end the run.
            let noted = reason.map { answered(outcome, reason: $0, now: now) } ?? []
            out = [.monitor(.relayOutcome(outcome))] + noted + reacted
        case .stop:
            out = stop(now: now)
        case .hangup:
            if phase != .stopping { out = [.reread(.hangup)] }
        }
        return out
    }

    /// What `--status` shows of the engine at `now`: the policy's `WakeProgress` and how much is shared.
    package func progress(now: Instant) -> Progress {
        let counts = tracker.sharedCounts
        return Progress(
            wake: policy.progress(now: now), sharedFolders: counts?.folders, sharedDevices: counts?.devices,
            recent: decisions.entries)
    }

    /// The engine's state as `--status` shows it. Counts and instants only.
    package struct Progress: Sendable, Equatable {
        package var wake: WakeProgress
        /// Watched, unpaused folders shared with at least one unpaused remote device; nil until the config is read.
        package var sharedFolders: Int?
        /// The distinct remote devices those folders are shared with; nil until the config is read.
        package var sharedDevices: Int?
        /// The last decisions (`DecisionLog`), oldest first.
        package var recent: [Decision<Instant>]

        package init(
            wake: WakeProgress = WakeProgress(), sharedFolders: Int? = nil, sharedDevices: Int? = nil,
            recent: [Decision<Instant>] = []
        ) {
            self.wake = wake
            self.sharedFolders = sharedFolders
            self.sharedDevices = sharedDevices
            self.recent = recent
        }
    }

    // MARK: - Start-up

    private mutating func relayChecked(_ health: RelayHealth, now: Instant) -> [Action] {
        var out: [Action] = []
        switch health {
        case .ok:
            out = [.log(LogRecord(.info, .relayHealthy))] + policyActions(.relayHealthy, now: now)
        case .endpointMissing:
            // A 404 before the relay ever answered here: RELAY_URL is wrong, as for a trigger answered 404.
            return carryOut(WakePolicy.relayNotFound)
        case .unhealthy(let status, let error):
            var fields: [LogField] = []
            if let status { fields.append(.status(status)) }
            if let error { fields.append(.code(error)) }
            out = [.log(LogRecord(.warn, .relayUnhealthy, fields))]
        }
        phase = .loop
        loop = PollLoop()
        return out + advance(now: now)
    }

    // MARK: - The poll loop

    /// A result of the request or wait the loop asked for.
    private mutating func answered(_ result: PollLoop.StepResult, now: Instant) -> [Action] {
        if readingLast {
            switch result {
            case .polled, .slept: return lastReadAnswered(result, now: now)
            default: break
            }
        }
        // A request cut short by a stop still answers; so does none asked before the start.
        if result != .slept { requestsInFlight = max(0, requestsInFlight - 1) }
        guard phase == .loop else { return phase == .stopping ? [] : answeredUnasked(now: now) }
        guard loop.awaits(result) else { return answeredUnasked(now: now) }
        let out = result.request.map { unreachability($0, now: now) } ?? []
        return out + route(loop.handle(result), now: now) + advance(now: now)
    }

    /// An answer the loop did not ask for, or of another kind than it waits for: a shell that broke "one request
    /// at a time, answered once". Dropped with an error record; when no other answer is coming, the loop asks again
    /// for what it waits for, so that polling goes on instead of stalling until the watchdog.
    private mutating func answeredUnasked(now: Instant) -> [Action] {
        let record = Action.log(LogRecord(.error, .unexpectedAnswer))
        guard phase == .loop, requestsInFlight == 0 else { return [record] }
        return [record] + advance(now: now)
    }

    private mutating func ask(_ request: Request) -> Action {
        requestsInFlight += 1
        return .request(request)
    }

    /// Carries out the loop's next step: a request, the backoff timer, a re-read of config.xml, or the exit.
    private mutating func advance(now: Instant) -> [Action] {
        guard phase == .loop else { return [] }
        switch loop.next() {
        case .readStatus: return [ask(.status)]
        case .readHead: return [ask(.head)]
        case .poll(let since, let connection): return [ask(.poll(since: since, onConnection: connection))]
        case .sleep(let duration): return [.armTimer(.backoff, at: now + duration)]
        case .reauthenticate: return [.reread(.unauthorized)]
        case .exit(let how): return exit(how, after: nil)
        }
    }

    /// Routes what the loop learned: news to the tracker and the policy, a re-sync to the peers and the policy, the
    /// loop's health to the monitor.
    private mutating func route(_ learned: [PollLoop.Action], now: Instant) -> [Action] {
        var out: [Action] = []
        for fact in learned {
            switch fact {
            case .log(let record): out.append(.log(record))
            case .pollSucceeded: out.append(.monitor(.pollSucceeded))
            case .syncthingUnavailable: out.append(.monitor(.syncthingUnavailable))
            case .ready: out += ready(now: now)
            case .news(let events):
                batchArrived = now
                newsReadEarly = readNews(events, now: now, out: &out)
            case .applied(let batch, let handedOver): deliver(batch, handedOver: handedOver, now: now, out: &out)
            case .appliedAfterGap(let batch, let handedOver): lost(before: batch, handedOver, now: now, out: &out)
            case .resynced(let restarted, let wake): out += resynced(restarted: restarted, wake: wake, now: now)
            case .recovered: out += payOwedWake(now: now)
            }
        }
        return out
    }

    /// Connected, and the cursor at the head: read who shares what, and each peer's state, before the first change
    /// needs them.
    private mutating func ready(now: Instant) -> [Action] {
        var out: [Action] = [.log(LogRecord(.info, .syncthingConnected))]
        let started = policyActions(.start, now: now)
        if settings.policy.startupAnnounce { out += note(.announce, after: started, now: now) }
        return out + started + [.readConfig(.snapshot, generation: tracker.configGeneration)]
    }

    /// The wake-up that re-syncs without one owed, once polling works again: not sent when a trigger already went
    /// out after the last of those re-syncs (its push fetches what they lost), so recovery adds no second wake-up.
    private mutating func payOwedWake(now: Instant) -> [Action] {
        defer { owedSince = nil }
        if let owed = owedSince, let sent = lastTriggerSent, sent >= owed { return [] }
        let woken = policyActions(.wake(.resync), now: now)
        return note(.syncthingBack, after: woken, now: now) + woken
    }

    /// A batch applied after a hole: events were lost. They may have held a change, so the gap always wakes, and
    /// every pair's state is read again.
    private mutating func lost(
        before batch: [SyncthingEvent], _ handedOver: Bool, now: Instant, out: inout [Action]
    ) {
        out.append(.log(LogRecord(.warn, .eventGap, [.count(batch.count)])))
        deliver(batch, handedOver: handedOver, now: now, out: &out)
        out += forgetPeers()
        // Unless a trigger already went out after the batch came (its push fetches what the gap lost).
        let paid = lastTriggerSent.map { sent in batchArrived.map { sent >= $0 } ?? false } ?? false
        if paid {
            out += note(.eventsLost, .alreadyWoken, now: now)
        } else if !settings.policy.planted.has(.forgetGapWake) {
            let woken = policyActions(.wake(.resync), now: now)
            out += note(.eventsLost, after: woken, now: now) + woken
        }
    }

    private mutating func deliver(_ batch: [SyncthingEvent], handedOver: Bool, now: Instant, out: inout [Action]) {
        let news = handedOver ? newsReadEarly : readNews(batch, now: now, out: &out)
        out.append(.log(LogRecord(.debug, .eventsReceived, [.count(batch.count), LogField(.events, .int(news))])))
    }

    /// Reads events through the tracker; wakes when any is news; a ConfigSaved re-reads the config and config.xml.
    private mutating func readNews(_ events: [SyncthingEvent], now: Instant, out: inout [Action]) -> Int {
        let generation = tracker.configGeneration
        let reading = tracker.read(events)
        let woken = reading.news > 0 ? policyActions(.wake(.change), now: now) : []
        let outcome = reading.news > 0 ? wakeOutcome(after: woken, now: now) : .notWoken
        for decision in reading.decisions {
            out += note(
                decision.cause, decision.cause.isNews ? outcome : .notWoken, devices: decision.devices, now: now)
        }
        out += woken
        let news = reading.news
        if tracker.configGeneration != generation { out.insert(.reread(.configSaved), at: 0) }
        if tracker.configStale && !configReadQueued {
            configReadQueued = true
            out.append(.readConfig(.configOnly, generation: tracker.configGeneration))
        }
        return news
    }

    /// The loop re-placed the cursor at the head: every pair's state is read again; the relay is woken, or the
    /// wake-up is owed from now on (`payOwedWake`).
    private mutating func resynced(restarted: Bool, wake: Bool, now: Instant) -> [Action] {
        var out = forgetPeers()
        out.append(.log(restarted ? LogRecord(.info, .syncthingRestarted) : LogRecord(.warn, .eventGap)))
        let cause: DecisionCause = restarted ? .syncthingRestarted : .eventsLost
        guard wake else {
            owedSince = now
            return out + note(cause, .deferred, now: now)
        }
        let woken = policyActions(.wake(.resync), now: now)
        return out + note(cause, after: woken, now: now) + woken
    }

    /// After lost events or a restart: forget every pair's state (the events that moved it may be lost) and read
    /// the config and every pair's state again at once, so that the next progress report of a running transfer is
    /// not taken for news.
    private mutating func forgetPeers() -> [Action] {
        tracker.resynced()
        return [.readConfig(.snapshot, generation: tracker.configGeneration)]
    }

    // MARK: - A moved GUI

    /// Failures that say the address, scheme or certificate in use may be out of date (docs/syncthing-api.md, When
    /// the GUI address changes): nothing listens there any more (refused, timed out, a name that no longer resolves),
    /// the GUI now wants https (a redirect), or the TLS handshake fails (TLS switched off, another certificate).
    /// Answers with a status (a 5xx, a 404) and malformed bodies come from a Syncthing at the right address.
    static let accessMayBeStale: Set<ErrorCode> = [
        .transportConnect, .transportTimeout, .transportDNS, .syncthingRedirect, .transportTLS,
    ]

    /// Tracks how long Syncthing has been unreachable at the access in use (`accessMayBeStale`), and re-reads
    /// config.xml when that lasts (bounded, see `Settings`). Any answer with a status ends the run.
    private mutating func unreachability(_ request: PollLoop.RequestOutcome, now: Instant) -> [Action] {
        guard case .failed(let failure) = request, Self.accessMayBeStale.contains(failure.code) else {
            // An answer, or a failure with a status, came from a Syncthing at the access in use; another failure
            // (a body cut short, a malformed one) tells nothing either way.
            if case .failed(let failure) = request, failure.status == nil { return [] }
            unreachableSince = nil
            lastUnreachableReread = nil
            return []
        }
        let since = unreachableSince ?? now
        unreachableSince = since
        guard now - since >= settings.rereadWhenUnreachableFor else { return [] }
        if let last = lastUnreachableReread, now - last < settings.rereadWhileUnreachableEvery { return [] }
        lastUnreachableReread = now
        return [.reread(.unreachable)]
    }

    // MARK: - config.xml and the config

    private mutating func reread(_ reason: RereadReason, _ result: Reread, now: Instant) -> [Action] {
        switch reason {
        case .unauthorized:
            let answer = PollLoop.StepResult.reauthenticated(changed: result == .changed)
            guard phase == .loop, loop.awaits(answer) else { return [] }
            return route(loop.handle(answer), now: now) + advance(now: now)
        case .hangup:
            switch result {
            case .changed: return [.log(LogRecord(.info, .configReloaded))]
            case .unchanged: return [.log(LogRecord(.info, .configReloadUnchanged))]
            case .failed(let code): return [.log(LogRecord(.warn, .configReloadFailed, [.code(code)]))]
            }
        case .unreachable, .configSaved:
            switch result {
            case .changed: return [.log(LogRecord(.info, .syncthingAccessChanged))]
            case .unchanged: return []
            case .failed(let code): return [.log(LogRecord(.debug, .syncthingAccessRereadFailed, [.code(code)]))]
            }
        }
    }

    private mutating func configRead(
        _ kind: PeerRead, generation: Int, _ snapshot: ConfigSnapshot?, now: Instant
    ) -> [Action] {
        configReadQueued = false
        guard let snapshot else {
            // The next ConfigSaved (or sweep, or re-sync) tries again; meanwhile local changes count as news.
            return kind == .sweep ? policyActions(.sweepFinished(peersNeedingData: nil), now: now) : []
        }
        var out: [Action] = []
        tracker.setConfig(myID: deviceID, devices: snapshot.devices, folders: snapshot.folders, generation: generation)
        if tracker.configStale {
            // A ConfigSaved came while this read ran: read again.
            configReadQueued = true
            out.append(.readConfig(.configOnly, generation: tracker.configGeneration))
        }
        if kind != .configOnly {
            observeAsked.append(tracker.eventsRead)
            out.append(.observe(kind, tracker.sweepPairs))
        }
        return out
    }

    // MARK: - Decisions

    /// Notes a decision in `decisions`; the action tells METRICS_FILE.
    private mutating func note(
        _ cause: DecisionCause, _ outcome: DecisionOutcome<Instant>, devices: Int? = nil, reason: WakeReason? = nil,
        now: Instant
    ) -> [Action] {
        decisions.note(cause, at: now, devices: devices, reason: reason, outcome: outcome)
        return [.decided(cause)]
    }

    /// Notes news that was handed to the policy, with what the policy did with it (`wakeOutcome`).
    private mutating func note(_ cause: DecisionCause, after woken: [Action], devices: Int? = nil, now: Instant)
        -> [Action]
    {
        note(cause, wakeOutcome(after: woken, now: now), devices: devices, now: now)
    }

    /// What became of news the policy was just given (`woken`: the actions it answered with): sent at once, waiting
    /// for its debounce, held back by the relay, or after the trigger in flight.
    private func wakeOutcome(after woken: [Action], now: Instant) -> DecisionOutcome<Instant> {
        if woken.contains(where: { if case .sendTrigger = $0 { true } else { false } }) { return .sent }
        let progress = policy.progress(now: now)
        switch progress.pending {
        case .sending?:
            return .afterInFlight
        case .scheduled(_, let at)?:
            switch progress.relay {
            case .waiting(_, let until) where at >= until, .window(let until) where at >= until:
                return .held(progress.relay)
            default:
                return .scheduled(at: at)
            }
        case nil:
            // The policy took nothing (it is stopping and the flush is over).
            return .notWoken
        }
    }

    /// The stale-peer sweep's answers: the policy wakes for offline peers that need data; the decisions say which
    /// of the three it was (offline peers, connected ones, all in sync).
    private mutating func swept(_ observations: [SweepObservation]?, needing: Int?, now: Instant) -> [Action] {
        let before = policy.hasPendingWake
        let woken = policyActions(.sweepFinished(peersNeedingData: needing), now: now)
        guard let observations, let needing else { return woken }
        var out: [Action] = []
        if needing > 0 {
            // The policy leaves it when a trigger went out since the sweep began (its push fetches the same data).
            let taken = woken.contains { action in
                switch action {
                case .sendTrigger, .armTimer(.policy(.debounce), _): true
                default: false
                }
            }
            let outcome = taken || before ? wakeOutcome(after: woken, now: now) : .alreadyWoken
            out += note(.sweepOffline, outcome, devices: needing, now: now)
        }
        let connected = tracker.connectedNeeding(observations)
        if connected > 0 { out += note(.sweepConnected, .notWoken, devices: connected, now: now) }
        if needing == 0 && connected == 0 { out += note(.sweepInSync, .notWoken, now: now) }
        return out + woken
    }

    /// The relay answered the trigger sent for `reason`; when the wake-up is kept, when it goes out again.
    private mutating func answered(_ outcome: RelayOutcome, reason: WakeReason, now: Instant) -> [Action] {
        let category = RelayOutcomeCategory(outcome)
        var retryAt: Instant?
        if category != .delivered, case .scheduled(_, let at)? = policy.progress(now: now).pending { retryAt = at }
        return note(.relayAnswer, .answered(category, retryAt: retryAt), reason: reason, now: now)
    }

    // MARK: - The policy, stopping and the exit

    private mutating func policyActions(_ input: WakePolicy.Input, now: Instant) -> [Action] {
        let actions = carryOut(policy.handle(input, now: now))
        if actions.contains(where: { if case .sendTrigger = $0 { true } else { false } }) { lastTriggerSent = now }
        return actions
    }

    /// The policy's actions, as the engine's.
    private mutating func carryOut(_ actions: [WakePolicy.Action]) -> [Action] {
        actions.flatMap { action -> [Action] in
            switch action {
            case .sendTrigger:
                let stopping = phase == .stopping
                return [
                    .sendTrigger(
                        deviceID: deviceID,
                        timeout: stopping ? settings.relayTimeoutWhileStopping : settings.relayTimeout)
                ]
            case .armTimer(let timer, let at): return [.armTimer(.policy(timer), at: at)]
            case .cancelTimer(let timer): return [.cancelTimer(.policy(timer))]
            case .runSweep: return [.readConfig(.sweep, generation: tracker.configGeneration)]
            case .log(let record): return [.log(record)]
            case .exit(let how): return exit(how, after: nil)
            }
        }
    }

    /// Stops polling and lets the policy flush a pending wake-up within the grace period. In a steady stream's
    /// pause with no wake-up to send, events may have come since the last answer: they are read first
    /// (`PollLoop.lastRead`), for `SyncthingTimeouts.lastRead` at most, then the flush follows. Before the service
    /// started, nothing is pending, and the policy's records are those of every other stop.
    private mutating func stop(now: Instant) -> [Action] {
        guard phase != .stopping else { return [] }
        // A wake-up the flush sends goes out after the pause's events, and its push fetches them too.
        let last = phase == .loop && !policy.wakesAtStop ? loop.lastRead : nil
        phase = .stopping
        if let last {
            readingLast = true
            return [
                .monitor(.stopping), .cancelTimer(.backoff), .armTimer(.backoff, at: now + SyncthingTimeouts.lastRead),
                ask(.lastRead(since: last.since, onConnection: last.onConnection)),
            ]
        }
        return [.monitor(.stopping)] + flush(now: now)
    }

    /// Stops polling at once and lets the policy flush a pending wake-up within the grace period.
    private mutating func flush(now: Instant) -> [Action] {
        [.cancelSyncthing, .cancelTimer(.backoff)] + policyActions(.stop, now: now)
    }

    /// The stop's last read answered, or its time ran out (`.slept`): what it found is read as news (a change opens
    /// a batch for the flush), then the stop goes on. A failed or late read changes nothing. Without a vouching
    /// connection, a Syncthing restarted meanwhile may answer with its new run's ids: at worst one wake-up more.
    private mutating func lastReadAnswered(_ result: PollLoop.StepResult, now: Instant) -> [Action] {
        readingLast = false
        if result != .slept { requestsInFlight = max(0, requestsInFlight - 1) }
        var out: [Action] = []
        if case .polled(.success(let events), _, _) = result {
            let news = loop.lastReadNews(events)
            if !news.isEmpty {
                _ = readNews(news, now: now, out: &out)
                // No config reads while stopping: their answers would come to nobody.
                out.removeAll {
                    switch $0 {
                    case .reread, .readConfig: true
                    default: false
                    }
                }
            }
        }
        return out + flush(now: now)
    }

    private mutating func exit(_ how: Exit, after record: LogRecord?) -> [Action] {
        phase = .exited
        return (record.map { [.log($0)] } ?? []) + [.exit(how)]
    }
}
