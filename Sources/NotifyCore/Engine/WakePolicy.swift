/// When to send a wake-up, as one pure, deterministic state machine inside `Engine`: time is an input, there is no I/O.
///
/// The policy as a whole (the relay's answers are described in README.md and SECURITY.md):
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
/// It is the composition of three values, each with its own rules and tests: the `Debouncer` (the open batch of
/// news), the `TriggerGate` (the due wake-up, the trigger in flight, the waits and the push window, the relay's
/// answers, the shutdown flush and the end of the run) and the `SweepClock` (when the next sweep is due, whether one
/// runs). The policy routes each input to them, and holds the rules that read two of them: news while stopping skips
/// the debouncer; a trigger that goes out takes the open batch with it (`throughGate`); a stop flushes the batch into
/// the gate and unschedules the sweep; a finished sweep wakes only if the gate sent nothing since it began.
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

    private var debouncer: Debouncer
    private var gate: TriggerGate
    private var sweep: SweepClock

    package init(settings: Settings) {
        self.settings = settings
        debouncer = Debouncer(debounce: settings.debounce, maxWait: settings.debounceMax)
        gate = TriggerGate(
            settings: TriggerGate.Settings(
                relayWindow: settings.relayWindow, backoff: settings.backoff, inactiveRecheck: settings.inactiveRecheck,
                shutdownGrace: settings.shutdownGrace, planted: settings.planted))
        sweep = SweepClock(cadence: settings.staleRetrigger)
    }

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
    package var relayHasAnswered: Bool { gate.relayAnswered }

    /// The end of a run whose RELAY_URL names no relay: a 404 before the relay ever answered there, to a trigger or
    /// to the engine's start-up health check. One error record, then exit 78 with the relay's fatal lines.
    package static let relayNotFound: [Action] = [
        .log(LogRecord(.error, .relayEndpointMissing, [.status(404), .code(.relayEndpointMissing)])),
        .exit(.relayNotFound),
    ]

    /// Why the trigger in flight was sent; nil when none is.
    package var inFlightReason: WakeReason? { gate.inFlight }

    /// True while a wake-up waits in a batch, is due, or is in flight.
    package var hasPendingWake: Bool { debouncer.batch != nil || gate.dueReason != nil || gate.inFlight != nil }

    /// A stop's flush would send a wake-up (a batch is open, or one is due): it goes out after everything the
    /// service has not read yet happened.
    package var wakesAtStop: Bool { debouncer.batch != nil || gate.dueReason != nil }

    /// Feeds one input.
    /// - Parameters:
    ///   - input: what happened.
    ///   - now: the current instant on the monotonic timeline.
    /// - Returns: the actions to perform, in order.
    package mutating func handle(_ input: Input, now: Instant) -> [Action] {
        guard !gate.finished else { return [] }
        var actions: [Action] = []
        switch input {
        case .relayHealthy:
            gate.relayHealthy()

        case .start:
            if settings.startupAnnounce {
                actions += throughGate(gate.announce(now: now))
            }
            if let first = sweep.start(now: now) {
                actions.append(.armTimer(.sweep, at: first))
            }

        case .wake(let reason):
            actions += addNews(reason, now: now)

        case .timerFired(.debounce):
            guard let reason = debouncer.close() else { break }
            actions += throughGate(gate.submit(reason, now: now))

        case .timerFired(.retry):
            actions += throughGate(gate.retry(now: now))

        case .timerFired(.sweep):
            let fired = sweep.fire(now: now, stopping: gate.stopping)
            if let next = fired.next {
                actions.append(.armTimer(.sweep, at: next))
            }
            if fired.begins {
                actions += [.log(LogRecord(.debug, .sweepStarted)), .runSweep]
            }

        case .timerFired(.shutdown):
            if gate.stopping {
                actions += gate.finish(pending: hasPendingWake)
            }

        case .relayOutcome(let outcome, let jitter):
            actions += throughGate(gate.answer(outcome, jitter: jitter, now: now))

        case .sweepFinished(let needing):
            guard let started = sweep.finish() else { break }
            actions.append(
                .log(LogRecord(.debug, .sweepFinished, needing.map { [LogField(.needing, .int($0))] } ?? [])))
            // A trigger sent since the sweep began woke the phone after the peers' state was read: no second one.
            let woken = gate.lastSent.map { $0 >= started } ?? false
            if let needing, needing > 0, !gate.stopping, !woken {
                actions += addNews(.stalePeer, now: now)
            }

        case .stop:
            guard !gate.stopping else { break }
            sweep.stop()
            actions.append(.log(LogRecord(.info, .shutdownRequested)))
            actions.append(.cancelTimer(.sweep))
            // Flush the open batch now instead of waiting for its debounce.
            let flushed = debouncer.close()
            if flushed != nil {
                actions.append(.cancelTimer(.debounce))
            }
            actions += throughGate(gate.stop(flushing: flushed, now: now))
        }
        return actions
    }

    /// What the policy holds right now, for `--status` (`WakeProgress`).
    /// - Parameter now: the current instant; gates that ended before it count as over.
    package func progress(now: Instant) -> WakeProgress {
        // A wake-up goes when its debounce is over and no gate (a wait, the push window) holds it back.
        let held = gate.heldUntil(now: now)
        var pending: PendingWake<Instant>?
        if let reason = gate.inFlight {
            pending = .sending(reason)
        } else if let reason = gate.dueReason {
            pending = .scheduled(reason, at: max(held ?? now, now))
        } else if let batch = debouncer.batch {
            pending = .scheduled(batch.reason, at: max(batch.deadline, held ?? batch.deadline))
        }
        return WakeProgress(
            relay: gate.relayState(now: now), pending: pending, lastWake: gate.lastWake, sweep: sweep.schedule)
    }

    // MARK: - Internals

    /// News at `now`: into the open batch, or, while stopping, straight to the gate (it goes out with the flush).
    private mutating func addNews(_ reason: WakeReason, now: Instant) -> [Action] {
        if gate.stopping {
            return throughGate(gate.submit(reason, now: now))
        }
        let batch = debouncer.add(reason, now: now)
        var actions: [Action] = [.armTimer(.debounce, at: batch.deadline)]
        if batch.opened {
            actions.insert(.log(LogRecord(.debug, .wakeScheduled, [.reason(reason)])), at: 0)
        }
        return actions
    }

    /// The gate's actions, and the rule that spans the gate and the debouncer when the gate sends: a trigger that goes
    /// out takes the batch still debouncing with it (news that came while the wake-up waited for a retry or the push
    /// window). The push this trigger brings fetches that news too, and a second trigger at the batch's end would
    /// carry none.
    private mutating func throughGate(_ actions: [Action]) -> [Action] {
        let sent = actions.contains { if case .sendTrigger = $0 { true } else { false } }
        guard sent, debouncer.close() != nil else { return actions }
        return actions + [.cancelTimer(.debounce)]
    }
}
