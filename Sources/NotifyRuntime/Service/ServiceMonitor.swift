import Dispatch
import NotifyCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the service tells the outside world about its progress: the systemd notify protocol (`SystemdNotifier`:
/// READY, STATUS, STOPPING, WATCHDOG) and the state file `--healthcheck` and `--status` read (`StateFile`). Both are
/// optional; without NOTIFY_SOCKET nothing is sent, and without a usable state directory nothing is written.
///
/// Called from the poll queue (`stepStarted`, `stepFinished`) and the engine queue (everything else, and the watchdog
/// tick). Thread-safe; I/O happens outside the lock, and nothing here blocks: datagrams are sent with
/// `MSG_DONTWAIT`, and the small state file is written at most as often as `StateWriteThrottle` allows.
///
/// Readiness: `READY=1` goes out after the first successful event poll, which is the cursor's head read
/// (`since=0&limit=1&timeout=0`, answered at once): waiting for the first 50 s long-poll would hold start-up
/// back for nothing.
///
/// Watchdog: every `watchdogInterval` (half of WATCHDOG_USEC) a timer on the queue passed to `startWatchdog`
/// (the engine queue) sends `WATCHDOG=1` only while `WatchdogLiveness` says the poll thread is alive. A wedged
/// engine queue runs no tick; a poll thread stuck past its step's bound fails the liveness test. Either way the
/// pings stop and systemd restarts the service.
package final class ServiceMonitor: Sendable {
    private let notifier: SystemdNotifier?
    private let stateFile: StateFile?
    /// Half of WATCHDOG_USEC; nil when the watchdog is off.
    package let watchdogInterval: Duration?
    private let logger: Logger?
    private let monotonic: @Sendable () -> Instant
    private let wallClock: @Sendable () -> Int64

    private struct Inner: ~Copyable {
        var ready = false
        var connected = true
        var relay = RelayOutcomeCategory.none
        var status: ServiceStatusText?
        var state: ServiceState
        var progress: Engine.Progress?
        var throttle = StateWriteThrottle()
        var liveness: WatchdogLiveness
        var stopping = false
        var stateWarned = false
        var timer: TimerBox?
    }
    /// A timer handed across the lock (Dispatch sources are thread-safe but not marked Sendable).
    private final class TimerBox: @unchecked Sendable {
        let timer: any DispatchSourceTimer
        init(_ timer: any DispatchSourceTimer) { self.timer = timer }
    }
    private let inner: ThreadSafe<Inner>

    /// - Parameters:
    ///   - notifier: where notify datagrams go; nil sends nothing.
    ///   - stateFile: the health state file; nil writes nothing.
    ///   - watchdogInterval: how often to ping; nil for no watchdog.
    ///   - logger: receives `stateFileUnavailable` once when a write fails.
    ///   - monotonic: the service's monotonic clock (liveness and write throttling).
    ///   - wallClock: seconds since the Unix epoch (the state file's `last_poll`).
    package init(
        notifier: SystemdNotifier? = nil, stateFile: StateFile? = nil, watchdogInterval: Duration? = nil,
        logger: Logger? = nil, monotonic: @escaping @Sendable () -> Instant = ServiceMonitor.uptime,
        wallClock: @escaping @Sendable () -> Int64 = ServiceMonitor.unixSeconds
    ) {
        self.notifier = notifier
        self.stateFile = stateFile
        self.watchdogInterval = notifier == nil ? nil : watchdogInterval
        self.logger = logger
        self.monotonic = monotonic
        self.wallClock = wallClock
        inner = ThreadSafe(
            Inner(state: ServiceState(started: wallClock()), liveness: WatchdogLiveness(now: monotonic())))
    }

    /// The production monitor: NOTIFY_SOCKET, WATCHDOG_USEC/WATCHDOG_PID and the state file location from
    /// `environment` (the state directory is created when missing). Logs `stateFileUnavailable` when no state
    /// directory is usable.
    package static func live(environment: [String: String], logger: Logger) -> ServiceMonitor {
        let stateFile = StateFile.locate(environment: environment, create: true)
        if stateFile == nil { logger.log(.warn, .stateFileUnavailable) }
        return ServiceMonitor(
            notifier: SystemdNotifier(environment: environment), stateFile: stateFile,
            watchdogInterval: SystemdNotifier.watchdogInterval(environment: environment), logger: logger)
    }

    /// Monotonic time since boot (CLOCK_MONOTONIC through Dispatch).
    @Sendable package static func uptime() -> Instant { MonotonicClock.now() }

    /// Seconds since the Unix epoch (CLOCK_REALTIME).
    @Sendable package static func unixSeconds() -> Int64 { Int64(time(nil)) }

    // MARK: - Events

    /// Sends `STATUS=` when it differs from the last one sent.
    package func status(_ text: ServiceStatusText) {
        let changed = inner.withLock { s -> Bool in
            guard s.status != text, !s.stopping else { return false }
            s.status = text
            return true
        }
        if changed { notifier?.send([.status(text)]) }
    }

    /// An event poll (and the status read after it) succeeded. The first one sends READY=1;
    /// the state file is rewritten when `StateWriteThrottle` says so.
    package func pollSucceeded() {
        let now = monotonic()
        let wall = wallClock()
        let (messages, toWrite) = inner.withLock { s -> ([NotifyMessage], ServiceState?) in
            s.connected = true
            s.state.lastPoll = wall
            s.state.relay = s.relay
            s.state.syncthingReachable = true
            var messages: [NotifyMessage] = []
            if !s.ready && !s.stopping {
                s.ready = true
                messages.append(.ready)
            }
            let text = ServiceStatusText.running(connected: true, relay: s.relay)
            if s.status != text && !s.stopping {
                s.status = text
                messages.append(.status(text))
            }
            return (messages, stateToWrite(&s, now: now, wall: wall))
        }
        // The file first: once READY=1 is out, `--healthcheck` can already pass.
        write(toWrite)
        if !messages.isEmpty { notifier?.send(messages) }
    }

    /// The service waits up to `wait` for config.xml: the state file says so, so that `--status` tells a service
    /// waiting for a late mount from no service at all.
    package func waitingForConfig(_ wait: Duration) {
        let wall = wallClock()
        let state = inner.withLock { s -> ServiceState? in
            guard stateFile != nil, !s.stopping else { return nil }
            var state = s.state
            state.updated = wall
            state.configWaitUntil = wall + wait.components.seconds
            return state
        }
        write(state)
    }

    /// Syncthing did not answer. The state file says so (its `last_poll` stays), so that `--status` tells a
    /// running service with an unreachable Syncthing from no service at all.
    package func syncthingUnavailable() {
        let now = monotonic()
        let wall = wallClock()
        let (text, toWrite) = inner.withLock { s -> (ServiceStatusText, ServiceState?) in
            s.connected = false
            s.state.syncthingReachable = false
            return (.running(connected: false, relay: s.relay), stateToWrite(&s, now: now, wall: wall))
        }
        write(toWrite)
        status(text)
    }

    /// A trigger was answered. Recorded for STATUS at once, and for the state file with the engine's progress that
    /// follows (`progress`).
    package func relayOutcome(_ outcome: RelayOutcome) {
        let category = RelayOutcomeCategory(outcome)
        let text = inner.withLock { s -> ServiceStatusText? in
            s.relay = category
            s.state.relay = category
            return s.ready ? .running(connected: s.connected, relay: category) : nil
        }
        if let text { status(text) }
    }

    /// The engine's state after an input (`Engine.progress`), for `--status`: written when it changed in a way
    /// `StateWriteThrottle` counts, or when a write is due anyway.
    package func progress(_ progress: Engine.Progress) {
        let now = monotonic()
        let wall = wallClock()
        let toWrite = inner.withLock { s -> ServiceState? in
            // The common case (a poll with nothing new) costs one comparison.
            guard s.progress != progress else { return nil }
            s.progress = progress
            s.state.record(progress, now: now, wallNow: wall)
            return stateToWrite(&s, now: now, wall: wall)
        }
        write(toWrite)
    }

    /// The state to write now, if any (`StateWriteThrottle`); nothing once stopping began (the file is removed).
    private func stateToWrite(_ s: inout Inner, now: Instant, wall: Int64) -> ServiceState? {
        guard stateFile != nil, !s.stopping else { return nil }
        s.state.updated = wall
        return s.throttle.shouldWrite(s.state, now: now) ? s.state : nil
    }

    /// Writes `state` when given; logs `stateFileUnavailable` once when the write fails.
    private func write(_ state: ServiceState?) {
        guard let state, let stateFile, !stateFile.write(state) else { return }
        let warn = inner.withLock { s -> Bool in
            s.throttle.reset()
            defer { s.stateWarned = true }
            return !s.stateWarned
        }
        if warn { logger?.log(.warn, .stateFileUnavailable) }
    }

    /// The run ends without a stop (`Engine.Exit.Farewell.removeStateFile`): nothing more is written, and the file
    /// goes, so that `--healthcheck` does not trust a dead process's last poll.
    package func removeStateFile() {
        inner.withLock { $0.stopping = true }
        stateFile?.remove()
    }

    /// Shutdown began: `STOPPING=1` and `STATUS=stopping`, once; the state file goes.
    package func stopping() {
        let first = inner.withLock { s -> Bool in
            guard !s.stopping else { return false }
            s.stopping = true
            s.status = .stopping
            s.liveness.stopped()
            return true
        }
        if first {
            stateFile?.remove()
            notifier?.send([.stopping, .status(.stopping)])
        }
    }

    /// Poll queue (or the main thread during start-up): a blocking step begins that returns within `bound`.
    package func stepStarted(bound: Duration) {
        let now = monotonic()
        inner.withLock { $0.liveness.stepStarted(now: now, bound: bound) }
    }

    /// The current step ended.
    package func stepFinished() {
        let now = monotonic()
        inner.withLock { $0.liveness.stepFinished(now: now) }
    }

    // MARK: - Watchdog

    /// Starts (or moves) the watchdog timer onto `queue`: the first tick at once, then every `watchdogInterval`.
    /// Does nothing when the watchdog is off.
    package func startWatchdog(queue: DispatchQueue) {
        guard let interval = watchdogInterval else { return }
        let ns = max(1_000_000, interval.nanoseconds)
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now(), repeating: .nanoseconds(ns), leeway: .nanoseconds(ns / 10))
        timer.setEventHandler { [weak self] in _ = self?.watchdogTick() }
        timer.resume()
        let box = TimerBox(timer)
        let old = inner.withLock { s -> TimerBox? in
            defer { s.timer = box }
            return s.timer
        }
        old?.timer.cancel()
    }

    /// One watchdog tick: sends `WATCHDOG=1` when the event loop is alive. Returns whether it pinged.
    @discardableResult
    func watchdogTick() -> Bool {
        let now = monotonic()
        let alive = inner.withLock { $0.liveness.isAlive(now: now) }
        guard alive, let notifier else { return false }
        return notifier.send([.watchdog])
    }

    deinit {
        inner.withLock { $0.timer?.timer.cancel() }
    }
}
