/// When to send a wake-up, as one pure, deterministic state machine inside `Engine`: time is an input, there is no I/O.
///
/// Owns (the relay's answers are described in README.md and SECURITY.md):
/// - the trailing debounce (`debounce`) capped by `debounceMax`: a continuous stream of changes cannot hold a
///   wake-up back longer than `debounceMax` after the first change of the batch;
/// - the startup announce (sent at once, not debounced);
/// - the stale-peer sweep every `staleRetrigger`, which wakes when an offline peer still needs data (after a re-sync
///   the engine re-reads the peers' state itself; the re-sync's own wake-up covers them);
/// - at most one trigger in flight; changes that arrive meanwhile form the next batch;
/// - the relay's push window (`relayWindow`): the relay turns at most one trigger per Device ID per ~30 s
///   into a push and silently swallows the others (a debounced signal counts as observed but never
///   as another push). So no trigger is sent within `relayWindow` of the last one the relay accepted (2xx,
///   the startup announce included), or of one it may have accepted although the answer failed (a 5xx, a timeout:
///   `RelayOutcome.mayHavePushed`; a retry inside that window would be swallowed); a wake-up that falls due inside the
///   window waits and goes out once, when the window ends, carrying every change that came meanwhile. Whatever the
///   input (a crash-looping Syncthing, an event stream that keeps failing, repeated re-syncs), at most one trigger goes
///   out per window;
/// - the reaction to each relay outcome: backoff with full jitter, Retry-After, the slow re-check while no
///   subscription is active, and the 404: fatal (exit 78, a wrong RELAY_URL) until the relay has answered at this
///   URL during this run (`relayHasAnswered`), a relay outage after that (a reverse proxy answers 404
///   while the relay's backend is being replaced), backed off like a 5xx and the wake-up kept;
/// - the shutdown flush: a pending wake-up is sent once more before exit, within `shutdownGrace`.
///
/// The shell feeds `Input`s with the current `Instant` and performs the returned `Action`s in order.
package struct WakePolicy: Sendable {
    /// Tunables, all durations.
    package struct Settings: Sendable, Equatable {
        /// Quiet time after the last change before a wake-up is sent (DEBOUNCE_SECONDS, default
        /// `Configuration.defaultDebounce`).
        package var debounce: Duration
        /// Longest a continuous stream of changes may hold back a wake-up (DEBOUNCE_MAX_SECONDS, default
        /// `Configuration.defaultDebounceMax`).
        package var debounceMax: Duration
        /// Send one wake-up at start (STARTUP_ANNOUNCE, default `Configuration.defaultStartupAnnounce`).
        package var startupAnnounce: Bool
        /// Stale-peer sweep cadence (STALE_RETRIGGER_SECONDS, default `Configuration.defaultStaleRetrigger`);
        /// nil disables the sweep.
        package var staleRetrigger: Duration?
        /// Re-check cadence while the relay reports no active subscription (60 s).
        package var inactiveRecheck: Duration
        /// Backoff for transient relay failures (1 s doubling to 5 min).
        package var backoff: Backoff
        /// How long a shutdown may wait for a pending wake-up (5 s).
        package var shutdownGrace: Duration
        /// The relay's push window (RELAY_WINDOW_SECONDS): no trigger within this long of the last accepted one. Nil
        /// disables it. No default here: the service passes the configured one (`Configuration.defaultRelayWindow`
        /// when unset), and every other caller says whether it wants the window.
        package var relayWindow: Duration?
        /// Defects planted on purpose (the simulator's build only; `PlantedDefects`).
        package var planted: PlantedDefects = .none

        package init(
            debounce: Duration = Configuration.defaultDebounce,
            debounceMax: Duration = Configuration.defaultDebounceMax,
            startupAnnounce: Bool = Configuration.defaultStartupAnnounce,
            staleRetrigger: Duration? = Configuration.defaultStaleRetrigger, inactiveRecheck: Duration = .seconds(60),
            backoff: Backoff = Backoff(), shutdownGrace: Duration = .seconds(5), relayWindow: Duration?
        ) {
            self.debounce = debounce
            self.debounceMax = max(debounceMax, debounce)
            self.startupAnnounce = startupAnnounce
            self.staleRetrigger = staleRetrigger
            self.inactiveRecheck = inactiveRecheck
            self.backoff = backoff
            self.shutdownGrace = shutdownGrace
            self.relayWindow = relayWindow
        }
    }

    /// The timers the policy arms. At most one of each kind is armed at a time; arming replaces.
    package enum Timer: Sendable, Hashable, CaseIterable {
        /// End of the current debounce batch.
        case debounce
        /// End of a backoff, Retry-After or subscription re-check wait, or of the relay's push window.
        case retry
        /// Next stale-peer sweep.
        case sweep
        /// End of the shutdown grace period.
        case shutdown
    }

    package enum Input: Sendable, Equatable {
        /// The relay's `GET /api/v1/health` answered 200 with `"status":"ok"` at RELAY_URL (the start-up health
        /// check): from now on a 404 is an outage, not a wrong RELAY_URL. May come before `.start`.
        case relayHealthy
        /// The service is ready (Device ID known, event cursor placed).
        case start
        /// A change to wake for: `.change` from the wake rules; `.resync` after lost events or a restart, when the
        /// cursor was re-placed (the lost events may have held a change; the engine re-reads every pair's state
        /// itself, so no sweep wakes for it).
        case wake(WakeReason)
        /// A timer fired.
        case timerFired(Timer)
        /// The in-flight trigger ended. `jitter` is a uniform random number in 0..<1 for the backoff.
        case relayOutcome(RelayOutcome, jitter: Double)
        /// The stale-peer sweep ended: `peersNeedingData` shared pairs whose device is not connected still need data
        /// (`PeerTracker.absorb`); nil when the sweep could not complete (Syncthing unreachable).
        case sweepFinished(peersNeedingData: Int?)
        /// SIGTERM or SIGINT.
        case stop
    }

    package enum Action: Sendable, Equatable {
        /// POST one trigger. Only one is ever in flight; its outcome must come back as `.relayOutcome`.
        case sendTrigger(WakeReason)
        case armTimer(Timer, at: Instant)
        case cancelTimer(Timer)
        /// Ask `/rest/system/connections` and `/rest/db/completion` for each shared pair (`PeerTracker.sweepPairs`);
        /// answer with `.sweepFinished`.
        case runSweep
        case log(LogRecord)
        /// End the process: `.stopped` after `.stop`, `.relayNotFound` on a 404 before the relay has answered.
        case exit(Engine.Exit)
    }

    package let settings: Settings

    // The open debounce batch: when its first change came, when its debounce ends, and the reason to send.
    private var batchStart: Instant?
    private var batchDeadline: Instant?
    private var batchReason: WakeReason?
    // A wake-up whose debounce is over and that waits to be sent (for the retry gate or the in-flight trigger).
    private var dueReason: WakeReason?
    private var inFlight: WakeReason?
    // No trigger before this instant (backoff, Retry-After, subscription re-check), and which of them it is.
    private var notBefore: Instant?
    private var notBeforeKind: RelayWait?
    // The last trigger the relay answered: when, why, and the answer (`progress`).
    private var lastWake: LastWake<Instant>?
    // When the sweep timer is armed for (`progress`).
    private var nextSweep: Instant?
    // When the relay last accepted a trigger (2xx), or may have (`RelayOutcome.mayHavePushed`): its push window runs
    // from about then.
    private var lastAccepted: Instant?
    // True while a due wake-up waits for the push window to end (so the wait is logged once).
    private var heldForWindow = false
    private var consecutiveFailures = 0
    /// See `relayHasAnswered`.
    private var relayAnswered = false
    private var sweepRunning = false
    /// When the running (or last) sweep began, and when the last trigger was sent.
    private var sweepStarted: Instant?
    private var lastSent: Instant?
    private var stopping = false
    private var finished = false

    package init(settings: Settings) { self.settings = settings }

    /// True once the relay has answered at RELAY_URL during this run with an answer that only the relay gives: its
    /// health check's 200 with `"status":"ok"` (`.relayHealthy`), or a trigger answered 2xx, 400–403 or 429 (the
    /// answers the relay defines for `POST /trigger`). A 3xx, another 4xx, a 5xx or a transport
    /// failure does not count: a proxy or another server in front of a wrong path gives those too (a 502 while the
    /// backend is down, then 404 once it is up, must still read as a wrong RELAY_URL). RELAY_URL does not change
    /// during a run, so "this run" is "this URL". Once true it stays true.
    ///
    /// Until then a 404 (`RelayOutcome.endpointMissing`) means the operator's RELAY_URL is wrong: one error record
    /// and exit 78. After it, a 404 cannot be the operator's configuration: it is a relay outage (a broken
    /// relay deployment), logged as an error and backed off like a 5xx (1 s doubling to the 5 min cap),
    /// keeping the wake-up until the relay answers again.
    package var relayHasAnswered: Bool { relayAnswered }

    /// The end of a run whose RELAY_URL names no relay: a 404 before the relay ever answered there, to a trigger or
    /// to the engine's start-up health check. One error record, then exit 78 with the relay's fatal lines.
    package static let relayNotFound: [Action] = [
        .log(LogRecord(.error, .relayEndpointMissing, [.status(404), .code(.relayEndpointMissing)])),
        .exit(.relayNotFound),
    ]

    /// Why the trigger in flight was sent; nil when none is.
    package var inFlightReason: WakeReason? { inFlight }

    /// True while a wake-up waits in a batch, is due, or is in flight.
    package var hasPendingWake: Bool { batchReason != nil || dueReason != nil || inFlight != nil }

    /// Feeds one input.
    /// - Parameters:
    ///   - input: what happened.
    ///   - now: the current instant on the monotonic timeline.
    /// - Returns: the actions to perform, in order.
    package mutating func handle(_ input: Input, now: Instant) -> [Action] {
        guard !finished else { return [] }
        var actions: [Action] = []
        switch input {
        case .relayHealthy:
            relayAnswered = true

        case .start:
            if settings.startupAnnounce {
                dueReason = .announce
                actions += trySend(now: now)
            }
            if let cadence = settings.staleRetrigger {
                nextSweep = now + cadence
                actions.append(.armTimer(.sweep, at: now + cadence))
            }

        case .wake(let reason):
            actions += addToBatch(reason, now: now)

        case .timerFired(.debounce):
            guard let reason = batchReason else { break }
            batchStart = nil
            batchDeadline = nil
            batchReason = nil
            dueReason = merge(dueReason, reason)
            actions += trySend(now: now)

        case .timerFired(.retry):
            actions += trySend(now: now)

        case .timerFired(.sweep):
            nextSweep = nil
            if let cadence = settings.staleRetrigger, !stopping {
                nextSweep = now + cadence
                actions.append(.armTimer(.sweep, at: now + cadence))
            }
            actions += startSweep(now: now)

        case .timerFired(.shutdown):
            if stopping {
                actions += finish(pending: hasPendingWake)
            }

        case .relayOutcome(let outcome, let jitter):
            actions += handleOutcome(outcome, jitter: jitter, now: now)

        case .sweepFinished(let needing):
            guard sweepRunning else { break }
            sweepRunning = false
            actions.append(
                .log(LogRecord(.debug, .sweepFinished, needing.map { [LogField(.needing, .int($0))] } ?? [])))
            // A trigger sent since the sweep began woke the phone after the peers' state was read: no second one.
            let woken = lastSent.map { sent in sweepStarted.map { sent >= $0 } ?? false } ?? false
            if let needing, needing > 0, !stopping, !woken {
                actions += addToBatch(.stalePeer, now: now)
            }

        case .stop:
            guard !stopping else { break }
            stopping = true
            nextSweep = nil
            actions.append(.log(LogRecord(.info, .shutdownRequested)))
            actions.append(.cancelTimer(.sweep))
            if batchReason != nil {
                // Flush the open batch now instead of waiting for its debounce.
                dueReason = merge(dueReason, batchReason!)
                batchStart = nil
                batchDeadline = nil
                batchReason = nil
                actions.append(.cancelTimer(.debounce))
            }
            if dueReason == nil && inFlight == nil {
                actions += finish()
                break
            }
            actions.append(.log(LogRecord(.info, .shutdownFlushing)))
            shutdownDeadline = now + settings.shutdownGrace
            actions.append(.armTimer(.shutdown, at: now + settings.shutdownGrace))
            // A backoff gate is ignored for the last attempt; a Retry-After (rate limit) is honoured only if it
            // ends within the grace period, which the shutdown timer enforces anyway.
            if let gate = notBefore, gate > now, !lastFailureWasRateLimit {
                notBefore = nil
            }
            if let gate = [notBefore, windowEnd].compactMap({ $0 }).max(), inFlight == nil,
                gate > now + settings.shutdownGrace
            {
                // The relay asked us to wait past the grace period, or its push window would swallow the trigger
                // (no push): nothing useful can be sent in time; stop now and say a wake-up was left pending.
                actions += finish(pending: true)
                break
            }
            actions += trySend(now: now)
        }
        return actions
    }

    /// What the policy holds right now, for `--status` (`WakeProgress`).
    /// - Parameter now: the current instant; gates that ended before it count as over.
    package func progress(now: Instant) -> WakeProgress {
        var relay = RelayGate<Instant>.open
        var gateEnd: Instant?
        if let gate = notBefore, gate > now, let kind = notBeforeKind {
            relay = .waiting(kind, until: gate)
            gateEnd = gate
        } else if let end = windowEnd, end > now {
            relay = .window(until: end)
        }
        // A wake-up goes when its debounce is over and no gate (a wait, the push window) holds it back.
        let held = [gateEnd, windowEnd.flatMap { $0 > now ? $0 : nil }].compactMap { $0 }.max()
        var pending: PendingWake<Instant>?
        if let reason = inFlight {
            pending = .sending(reason)
        } else if let reason = dueReason {
            pending = .scheduled(reason, at: max(held ?? now, now))
        } else if let reason = batchReason, let deadline = batchDeadline {
            pending = .scheduled(reason, at: max(deadline, held ?? deadline))
        }
        return WakeProgress(
            relay: relay, pending: pending, lastWake: lastWake,
            sweep: settings.staleRetrigger == nil ? .off : nextSweep.map { .at($0) } ?? .notScheduled)
    }

    // MARK: - Internals

    private var lastFailureWasRateLimit = false
    private var shutdownDeadline: Instant?

    private func merge(_ a: WakeReason?, _ b: WakeReason) -> WakeReason {
        // The first reason of a batch is kept; an announce stays an announce.
        a ?? b
    }

    private mutating func addToBatch(_ reason: WakeReason, now: Instant) -> [Action] {
        if stopping {
            // Changes seen while stopping still go out with the flush.
            if inFlight == nil && dueReason == nil {
                dueReason = reason
                return trySend(now: now)
            }
            dueReason = merge(dueReason, reason)
            return []
        }
        let start = batchStart ?? now
        batchStart = start
        let isNew = batchReason == nil
        batchReason = merge(batchReason, reason)
        let deadline = min(now + settings.debounce, start + settings.debounceMax)
        batchDeadline = deadline
        var actions: [Action] = [.armTimer(.debounce, at: deadline)]
        if isNew {
            actions.insert(.log(LogRecord(.debug, .wakeScheduled, [.reason(reason)])), at: 0)
        }
        return actions
    }

    /// The end of the relay's push window, if one is running.
    private var windowEnd: Instant? {
        guard let window = settings.relayWindow, let accepted = lastAccepted, !settings.planted.has(.sendInsideWindow)
        else { return nil }
        return accepted + window
    }

    private mutating func trySend(now: Instant) -> [Action] {
        guard let reason = dueReason, inFlight == nil || settings.planted.has(.secondPostInFlight) else { return [] }
        if let gate = notBefore, gate > now {
            return [.armTimer(.retry, at: max(gate, windowEnd ?? gate))]
        }
        notBefore = nil
        notBeforeKind = nil
        if let end = windowEnd, end > now {
            // Inside the relay's push window a trigger is swallowed without a push: hold it until the window ends.
            var actions: [Action] = []
            if !heldForWindow {
                heldForWindow = true
                actions.append(.log(LogRecord(.debug, .triggerHeldForWindow, [.reason(reason), .delay(end - now)])))
            }
            return actions + [.armTimer(.retry, at: end)]
        }
        heldForWindow = false
        dueReason = nil
        inFlight = reason
        lastSent = now
        var actions: [Action] = [.log(LogRecord(.debug, .triggerSending, [.reason(reason)])), .sendTrigger(reason)]
        if batchReason != nil {
            // A batch still debouncing (news that came while this wake-up waited for a retry or the push window) goes
            // with it: the push this trigger brings fetches that news too, and a second trigger at the batch's end
            // would carry none.
            batchStart = nil
            batchDeadline = nil
            batchReason = nil
            actions.append(.cancelTimer(.debounce))
        }
        return actions
    }

    private mutating func startSweep(now: Instant) -> [Action] {
        guard settings.staleRetrigger != nil, !sweepRunning, !stopping else { return [] }
        sweepRunning = true
        sweepStarted = now
        return [.log(LogRecord(.debug, .sweepStarted)), .runSweep]
    }

    /// Ends the run: one "stopped" record (a warning with `pending=true` when a wake-up could not be sent).
    private mutating func finish(pending: Bool = false) -> [Action] {
        finished = true
        let record =
            pending ? LogRecord(.warn, .stopped, [LogField(.pending, .bool(true))]) : LogRecord(.info, .stopped)
        return [
            .cancelTimer(.debounce), .cancelTimer(.retry), .cancelTimer(.sweep), .cancelTimer(.shutdown),
            .log(record), .exit(.stopped),
        ]
    }

    /// One more consecutive failure (a 5xx, a transport failure, or a 404 during an outage): the backoff delay before
    /// the retry, 1 s doubling to the cap, with full jitter (`Backoff`).
    private mutating func backOff(jitter: Double) -> Duration {
        lastFailureWasRateLimit = false
        consecutiveFailures += 1
        return settings.backoff.delay(afterFailures: consecutiveFailures, jitter: jitter)
    }

    private mutating func handleOutcome(_ outcome: RelayOutcome, jitter: Double, now: Instant) -> [Action] {
        guard let reason = inFlight else { return [] }
        inFlight = nil
        var actions: [Action] = []
        var retryIn: Duration?
        // A 2xx opens the relay's push window; so may a failed answer (a 5xx, a timeout: the relay may have pushed
        // anyway), and a retry inside it would be swallowed.
        if outcome.mayHavePushed { lastAccepted = now }
        if outcome.isRelaysOwnAnswer { relayAnswered = true }
        lastWake = LastWake(at: now, reason: reason, answer: RelayOutcomeCategory(outcome))
        var waitKind = RelayWait.backoff
        switch outcome {
        case .delivered(let status):
            consecutiveFailures = 0
            lastFailureWasRateLimit = false
            actions.append(.log(LogRecord(.info, .triggerDelivered, [.status(status), .reason(reason)])))
        case .subscriptionInactive(let status):
            lastFailureWasRateLimit = false
            retryIn = settings.inactiveRecheck
            waitKind = .inactiveRecheck
            actions.append(
                .log(
                    LogRecord(
                        .warn, .triggerSubscriptionInactive,
                        [.status(status), .code(.relaySubscriptionInactive), .delay(settings.inactiveRecheck)])))
        case .rateLimited(let wait):
            lastFailureWasRateLimit = true
            retryIn = wait
            waitKind = .rateLimited
            actions.append(
                .log(LogRecord(.warn, .triggerRateLimited, [.status(429), .code(.relayRateLimited), .delay(wait)])))
        case .endpointMissing where relayAnswered:
            // The relay answered at this URL before: a deploy or an outage behind a proxy, not a wrong RELAY_URL.
            let wait = backOff(jitter: jitter)
            retryIn = wait
            actions.append(
                .log(
                    LogRecord(
                        .error, .relayEndpointMissingOutage,
                        [.status(404), .attempt(consecutiveFailures), .delay(wait), .code(.relayEndpointMissing)])))
        case .endpointMissing:
            finished = true
            return Self.relayNotFound
        case .transient(let status, let error):
            let wait = backOff(jitter: jitter)
            retryIn = wait
            var fields: [LogField] = [.attempt(consecutiveFailures), .delay(wait)]
            if let status { fields.insert(.status(status), at: 0) }
            fields.append(.code(error ?? .relayTransient))
            actions.append(.log(LogRecord(.warn, .triggerFailed, fields)))
        }
        if let retryIn {
            // Keep the wake-up: it goes out once the wait is over (merged with anything that came meanwhile).
            if !(settings.planted.has(.dropNewsOn5xx) && outcome.isServerError) { dueReason = merge(dueReason, reason) }
            notBefore = now + retryIn
            notBeforeKind = waitKind
        }
        if stopping {
            // One attempt during shutdown: after its outcome, stop, unless a Retry-After ends within the grace
            // period (then the retry goes out at its end, and the shutdown timer still bounds the wait).
            let fitsGrace =
                lastFailureWasRateLimit && retryIn != nil && shutdownDeadline.map { now + retryIn! <= $0 } == true
            if retryIn == nil || !fitsGrace {
                return actions + finish(pending: retryIn != nil || dueReason != nil)
            }
        }
        actions += trySend(now: now)
        return actions
    }
}
