/// Which wake-up goes to the relay and when, as one pure value on virtual time (`Instant`, `Duration`): part of
/// `WakePolicy`, and speaking its `Action`s.
///
/// It holds at most one wake-up that is due (its debounce over) and at most one trigger in flight; a wake-up that
/// comes while one waits or is in flight merges into the one that waits (`Debouncer.merge`). A due wake-up goes out
/// (`.sendTrigger`) once nothing holds it back:
/// - a trigger in flight: its outcome must come back (`answer`) first;
/// - a wait after an answer (`RelayWait`): the backoff after a 5xx, a transport failure or an outage's 404 (`backoff`,
///   doubling per consecutive failure, with full jitter; reset by a 2xx), a 429's Retry-After, or the re-check
///   (`inactiveRecheck`) while no subscription is active. The failed wake-up is kept and goes when the wait ends;
/// - the relay's push window (`relayWindow`): no trigger within it of the last one the relay accepted (2xx) or may
///   have (`RelayOutcome.mayHavePushed`), since the relay would swallow it without a push; a due wake-up waits for the
///   window's end (logged once).
/// A wait is armed as the `.retry` timer, at the later of its end and the window's.
///
/// It also decides what a 404 means (`relayHasAnswered`: a wrong RELAY_URL, exit 78, until the relay has answered at
/// this URL; an outage after that), and the shutdown flush: after `stop`, a wake-up that waits gets one attempt within
/// `shutdownGrace` (a backoff is skipped, a Retry-After honoured only if it ends in time), then the run ends
/// (`finish`, which cancels every timer of the policy).
package struct TriggerGate: Sendable {
    /// Tunables; `WakePolicy.Settings` gives them.
    package struct Settings: Sendable, Equatable {
        /// The relay's push window; nil disables it.
        package var relayWindow: Duration?
        /// Backoff for transient relay failures.
        package var backoff: Backoff
        /// Re-check cadence while the relay reports no active subscription.
        package var inactiveRecheck: Duration
        /// How long a shutdown may wait for a pending wake-up.
        package var shutdownGrace: Duration
        /// Defects planted on purpose (the simulator's build only).
        package var planted: PlantedDefects

        package init(
            relayWindow: Duration?, backoff: Backoff = Backoff(), inactiveRecheck: Duration = .seconds(60),
            shutdownGrace: Duration = .seconds(5), planted: PlantedDefects = .none
        ) {
            self.relayWindow = relayWindow
            self.backoff = backoff
            self.inactiveRecheck = inactiveRecheck
            self.shutdownGrace = shutdownGrace
            self.planted = planted
        }
    }

    package typealias Action = WakePolicy.Action

    package let settings: Settings

    /// A wake-up whose debounce is over and that waits to be sent (for a wait, the push window or the trigger in
    /// flight).
    package private(set) var dueReason: WakeReason?
    /// Why the trigger in flight was sent; nil when none is.
    package private(set) var inFlight: WakeReason?
    // No trigger before `until` (backoff, Retry-After, subscription re-check), and which of them it is.
    private var wait: (kind: RelayWait, until: Instant)?
    /// The last trigger the relay answered: when, why, and the answer (`progress`).
    package private(set) var lastWake: LastWake<Instant>?
    // When the relay last accepted a trigger (2xx), or may have (`RelayOutcome.mayHavePushed`): its push window runs
    // from about then.
    private var lastAccepted: Instant?
    // True while a due wake-up waits for the push window to end (so the wait is logged once).
    private var heldForWindow = false
    private var consecutiveFailures = 0
    /// See `WakePolicy.relayHasAnswered`.
    package private(set) var relayAnswered = false
    /// When the last trigger was sent.
    package private(set) var lastSent: Instant?
    /// True once `stop` came.
    package private(set) var stopping = false
    /// True once the run ended (`finish`, or a 404 before the relay answered): every later input is ignored.
    package private(set) var finished = false
    // The end of the shutdown grace period, once `stop` came with a wake-up to flush.
    private var shutdownDeadline: Instant?

    package init(settings: Settings) { self.settings = settings }

    /// The relay answered its health check at RELAY_URL: from now on a 404 is an outage.
    package mutating func relayHealthy() { relayAnswered = true }

    /// The startup announce: due at once, not debounced.
    package mutating func announce(now: Instant) -> [Action] {
        dueReason = .announce
        return trySend(now: now)
    }

    /// A wake-up is due at `now` (its debounce is over, or news came while stopping): it goes as soon as nothing holds
    /// it back, with anything that already waits.
    package mutating func submit(_ reason: WakeReason, now: Instant) -> [Action] {
        let waiting = inFlight != nil || dueReason != nil
        dueReason = Debouncer.merge(dueReason, reason)
        // While stopping, a wake-up that already waits keeps the flush's schedule; the news just joins it.
        if stopping && waiting { return [] }
        return trySend(now: now)
    }

    /// The `.retry` timer fired: the wait or the push window that held a wake-up back may be over.
    package mutating func retry(now: Instant) -> [Action] { trySend(now: now) }

    /// The end of the relay's push window, if one is running.
    package var windowEnd: Instant? {
        guard let window = settings.relayWindow, let accepted = lastAccepted, !settings.planted.has(.sendInsideWindow)
        else { return nil }
        return accepted + window
    }

    /// The relay as `--status` shows it at `now`: a wait that has not ended, else a push window that has not.
    package func relayState(now: Instant) -> RelayGate<Instant> {
        if let wait, wait.until > now { return .waiting(wait.kind, until: wait.until) }
        if let end = windowEnd, end > now { return .window(until: end) }
        return .open
    }

    /// Until when a due wake-up is held back at `now` (the later of a wait's end and the push window's); nil when
    /// nothing holds it.
    package func heldUntil(now: Instant) -> Instant? {
        [wait.flatMap { $0.until > now ? $0.until : nil }, windowEnd.flatMap { $0 > now ? $0 : nil }]
            .compactMap { $0 }.max()
    }

    private mutating func trySend(now: Instant) -> [Action] {
        guard let reason = dueReason, inFlight == nil || settings.planted.has(.secondPostInFlight) else { return [] }
        if let gate = wait?.until, gate > now {
            return [.armTimer(.retry, at: max(gate, windowEnd ?? gate))]
        }
        wait = nil
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
        return [.log(LogRecord(.debug, .triggerSending, [.reason(reason)])), .sendTrigger(reason)]
    }

    // MARK: - Relay outcomes

    /// The trigger in flight ended at `now`. `jitter` is a uniform random number in 0..<1 for the backoff.
    /// - Returns: the outcome's record, then what follows it: the wake-up that waits goes out (or its wait is armed),
    ///   or, while stopping or on a 404 before the relay answered, the end of the run.
    package mutating func answer(_ outcome: RelayOutcome, jitter: Double, now: Instant) -> [Action] {
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
            actions.append(.log(LogRecord(.info, .triggerDelivered, [.status(status), .reason(reason)])))
        case .subscriptionInactive(let status):
            retryIn = settings.inactiveRecheck
            waitKind = .inactiveRecheck
            actions.append(
                .log(
                    LogRecord(
                        .warn, .triggerSubscriptionInactive,
                        [.status(status), .code(.relaySubscriptionInactive), .delay(settings.inactiveRecheck)])))
        case .rateLimited(let wait):
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
            return WakePolicy.relayNotFound
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
            if !(settings.planted.has(.dropNewsOn5xx) && outcome.isServerError) {
                dueReason = Debouncer.merge(dueReason, reason)
            }
            wait = (waitKind, now + retryIn)
        }
        if stopping {
            // One attempt during shutdown: after its outcome, stop, unless a Retry-After ends within the grace
            // period (then the retry goes out at its end, and the shutdown timer still bounds the wait).
            let fitsGrace =
                waitKind == .rateLimited && retryIn != nil && shutdownDeadline.map { now + retryIn! <= $0 } == true
            if retryIn == nil || !fitsGrace {
                return actions + finish(pending: retryIn != nil || dueReason != nil)
            }
        }
        return actions + trySend(now: now)
    }

    /// One more consecutive failure (a 5xx, a transport failure, or a 404 during an outage): the backoff delay before
    /// the retry, 1 s doubling to the cap, with full jitter (`Backoff`).
    private mutating func backOff(jitter: Double) -> Duration {
        consecutiveFailures += 1
        return settings.backoff.delay(afterFailures: consecutiveFailures, jitter: jitter)
    }

    // MARK: - Stopping

    /// The service stops at `now`, with `flushed` (the open batch, closed early) joining the wake-up that waits.
    /// - Returns: the end of the run when nothing waits or nothing useful can be sent within the grace period;
    ///   otherwise the shutdown timer and the flush's one attempt.
    package mutating func stop(flushing flushed: WakeReason?, now: Instant) -> [Action] {
        stopping = true
        if let flushed { dueReason = Debouncer.merge(dueReason, flushed) }
        if dueReason == nil && inFlight == nil { return finish() }
        var actions: [Action] = [.log(LogRecord(.info, .shutdownFlushing))]
        shutdownDeadline = now + settings.shutdownGrace
        actions.append(.armTimer(.shutdown, at: now + settings.shutdownGrace))
        // A backoff gate is ignored for the last attempt; a Retry-After (rate limit) is honoured only if it
        // ends within the grace period, which the shutdown timer enforces anyway.
        if let gate = wait, gate.until > now, gate.kind != .rateLimited {
            wait = nil
        }
        if let gate = [wait?.until, windowEnd].compactMap({ $0 }).max(), inFlight == nil,
            gate > now + settings.shutdownGrace
        {
            // The relay asked us to wait past the grace period, or its push window would swallow the trigger
            // (no push): nothing useful can be sent in time; stop now and say a wake-up was left pending.
            return actions + finish(pending: true)
        }
        return actions + trySend(now: now)
    }

    /// Ends the run: one "stopped" record (a warning with `pending=true` when a wake-up could not be sent), after
    /// every timer of the policy is cancelled.
    package mutating func finish(pending: Bool = false) -> [Action] {
        finished = true
        let record =
            pending ? LogRecord(.warn, .stopped, [LogField(.pending, .bool(true))]) : LogRecord(.info, .stopped)
        return [
            .cancelTimer(.debounce), .cancelTimer(.retry), .cancelTimer(.sweep), .cancelTimer(.shutdown),
            .log(record), .exit(.stopped),
        ]
    }
}
