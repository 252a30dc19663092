import Dispatch
import NotifyCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The shell of `MonitorMachine`, which decides everything: it feeds the machine under a lock, with the time, and
/// carries out what it says on the systemd notify socket (`SystemdNotifier`) and the state file (`StateFile`). Both
/// are optional; without NOTIFY_SOCKET nothing is sent, and without a usable state directory nothing is written.
///
/// Called from the poll queue (`stepStarted`, `stepFinished`) and the engine queue (everything else, and the watchdog
/// tick). Thread-safe; I/O happens outside the lock, and nothing here blocks: datagrams are sent with
/// `MSG_DONTWAIT`, and the small state file is written at most as often as `StateWriteThrottle` allows.
///
/// Watchdog: every `watchdogInterval` (half of WATCHDOG_USEC) a timer of the runtime passed to `startWatchdog` (on
/// the engine queue) sends `WATCHDOG=1` only while `WatchdogLiveness` says the poll thread is alive. A wedged
/// engine queue runs no tick; a poll thread stuck past its step's bound fails the liveness test. Either way the
/// pings stop and systemd restarts the service.
package final class ServiceMonitor: Sendable {
    private let notifier: SystemdNotifier?
    private let stateFile: (any StateStore)?
    /// Half of WATCHDOG_USEC; nil when the watchdog is off.
    package let watchdogInterval: Duration?
    private let logger: Logger?
    private let clock: any HostClock

    private struct Inner: ~Copyable {
        var machine: MonitorMachine
        /// The watchdog's latest tick, when it is due, and its run: each `startWatchdog` starts a new run, and an
        /// older run's tick neither pings nor arms another.
        var tick: (timer: any ScheduledTimer, at: Instant, run: Int)?
        var run = 0
    }
    private let inner: ThreadSafe<Inner>

    /// - Parameters:
    ///   - notifier: where notify datagrams go; nil sends nothing.
    ///   - stateFile: where the health state goes (`StateFile`; the simulator keeps it in memory); nil writes nothing.
    ///   - watchdogInterval: how often to ping; nil for no watchdog.
    ///   - logger: receives `stateFileUnavailable` once when a write fails.
    ///   - clock: the service's clocks (`DispatchRuntime` in production): the monotonic one for liveness and write
    ///     throttling, the wall clock for the Unix times in the state file (`last_poll`, ...).
    ///   - writer: this process, recorded in the state file; only when it holds the state file's lock
    ///     (`StateFile.acquireLock`).
    package init(
        notifier: SystemdNotifier? = nil, stateFile: (any StateStore)? = nil, watchdogInterval: Duration? = nil,
        logger: Logger? = nil, clock: any HostClock = SystemClock(), writer: ServiceWriter? = nil
    ) {
        self.notifier = notifier
        self.stateFile = stateFile
        self.watchdogInterval = notifier == nil ? nil : watchdogInterval
        self.logger = logger
        self.clock = clock
        inner = ThreadSafe(Inner(machine: MonitorMachine(now: clock.now(), wall: clock.unixSeconds(), writer: writer)))
    }

    /// The production monitor: NOTIFY_SOCKET and WATCHDOG_USEC/WATCHDOG_PID from `environment`, and the state file
    /// (`StateFile.locate`, the directory created when missing). Logs `stateFileUnavailable` when no state directory
    /// is usable.
    /// - Parameters:
    ///   - writer: this process, when it holds the state file's lock.
    ///   - clock: the service's runtime (its clocks).
    package static func live(
        environment: [String: String], stateFile: StateFile?, writer: ServiceWriter?, logger: Logger,
        clock: any HostClock
    ) -> ServiceMonitor {
        if stateFile == nil { logger.log(.warn, .stateFileUnavailable) }
        return ServiceMonitor(
            notifier: SystemdNotifier(environment: environment), stateFile: stateFile,
            watchdogInterval: SystemdNotifier.watchdogInterval(environment: environment), logger: logger,
            clock: clock, writer: writer)
    }

    // MARK: - Events (`MonitorMachine.Input`)

    /// A fixed status text; sent when it differs from the last one.
    package func status(_ text: ServiceStatusText) { feed(.status(text)) }

    /// An event poll (and the status read after it) succeeded.
    package func pollSucceeded() { feed(.pollSucceeded) }

    /// The service waits up to `wait` for config.xml: the state file says so, so that `--status` tells a service
    /// waiting for a late mount from no service at all.
    package func waitingForConfig(_ wait: Duration) { feed(.waitingForConfig(wait)) }

    /// Syncthing did not answer.
    package func syncthingUnavailable() { feed(.syncthingUnavailable) }

    /// A trigger was answered.
    package func relayOutcome(_ outcome: RelayOutcome) { feed(.relayOutcome(outcome)) }

    /// The engine's state after an input (`Engine.progress`), for `--status`.
    package func progress(_ progress: Engine.Progress) { feed(.progress(progress)) }

    /// The run ends without a stop (`Engine.Exit.Farewell.removeStateFile`).
    package func removeStateFile() { feed(.removeStateFile) }

    /// Shutdown began.
    package func stopping() { feed(.stopping) }

    /// Poll queue (or the main thread during start-up): a blocking step begins that returns within `bound`.
    package func stepStarted(bound: Duration) { feed(.stepStarted(bound: bound)) }

    /// The current step ended.
    package func stepFinished() { feed(.stepFinished) }

    /// Feeds the machine under the lock, then carries out its outputs outside it.
    /// - Returns: whether it sent a notify datagram that the kernel took.
    @discardableResult
    private func feed(_ input: MonitorMachine.Input) -> Bool {
        let now = clock.now()
        let wall = clock.unixSeconds()
        return carryOut(inner.withLock { $0.machine.handle(input, now: now, wall: wall) })
    }

    private func carryOut(_ outputs: [MonitorMachine.Output]) -> Bool {
        var sent = false
        for output in outputs {
            switch output {
            case .notify(let messages):
                sent = notifier?.send(messages) == true || sent
            case .writeState(let state):
                if let stateFile, !stateFile.write(state) { feed(.stateWriteFailed) }
            case .removeStateFile:
                stateFile?.remove()
            case .log(let record):
                logger?.log(record)
            }
        }
        return sent
    }

    // MARK: - Watchdog

    /// Starts (or restarts) the watchdog on `runtime`'s timers, which run on its engine queue: the first tick at
    /// once, then one every `watchdogInterval` on the runtime's monotonic clock. Each tick sends `WATCHDOG=1` when
    /// the event loop is alive. Does nothing when the watchdog is off.
    package func startWatchdog(on runtime: any ServiceRuntime) {
        guard let interval = watchdogInterval else { return }
        let (run, stale) = inner.withLock { s -> (Int, (any ScheduledTimer)?) in
            s.run += 1
            return (s.run, s.tick?.timer)
        }
        stale?.cancel()
        arm(on: runtime, at: runtime.now(), every: max(.milliseconds(1), interval), run: run)
    }

    private func arm(on runtime: any ServiceRuntime, at: Instant, every interval: Duration, run: Int) {
        let timer = runtime.schedule(at: at, alsoOnWallClock: false) { [weak self] in
            guard let self, inner.withLock({ $0.run == run }) else { return }
            feed(.watchdogTick)
            // A tick that ran late (a wedged queue that came back) pings once and starts the beat again from now,
            // instead of catching up on the ticks it missed.
            let now = runtime.now()
            let next = at + interval > now ? at + interval : now + interval
            arm(on: runtime, at: next, every: interval, run: run)
        }
        // A tick due at once may have fired and armed the next before this one is kept: keep the latest.
        let stale = inner.withLock { s -> (any ScheduledTimer)? in
            guard s.run == run else { return timer }
            if let tick = s.tick, tick.run == run, tick.at > at { return nil }
            s.tick = (timer, at, run)
            return nil
        }
        stale?.cancel()
    }

    deinit {
        inner.withLock { $0.tick?.timer.cancel() }
    }
}
