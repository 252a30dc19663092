import Dispatch
import NotifyCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The running sidecar: carries out what the `Engine` decides and feeds the results back. It holds no decision of
/// its own; what it keeps is executor mechanics (a timer moved later re-arms instead of being replaced, a stale
/// timer's handler is ignored) that never change when an input reaches the engine.
///
/// Threads (docs/architecture.md): the engine queue owns the engine and every timer, and performs the actions;
/// the poll loop's requests (the long-poll among them) run one at a time on the poll queue, and hand each result
/// to the engine queue once; the relay POST and the config reads run on their own queues. At shutdown the long-poll
/// is cut short through `HTTPTransport.cancel()` (`curl_multi_wakeup`).
package final class Service: @unchecked Sendable {
    // @unchecked: every mutable field below is touched only on the engine queue (or before `start()`).
    package struct Dependencies: Sendable {
        package var syncthing: SyncthingClient
        package var relay: RelayClient
        /// Cancels the Syncthing transport (the long-poll) at shutdown. The relay transport is not cancelled: the
        /// pending wake-up must still go out within the grace period.
        package var cancelSyncthing: @Sendable () -> Void
        /// Re-reads config.xml and the environment without waiting (SIGHUP, 401/403, ConfigSaved, a Syncthing that
        /// stays unreachable).
        package var rereadAccess: @Sendable () -> Result<SyncthingAccess, SyncthingAccessError>
        package var logger: Logger
        /// systemd notify and the health state file (default: neither).
        package var monitor: ServiceMonitor
        /// Prints a fatal exit's lines to stderr (the process's: `FatalPrinter`, in LOG_FORMAT's format, given by
        /// `ServiceLifecycle`).
        package var printFatal: @Sendable (FatalLine) -> Void = { FatalPrinter.plainText.print([$0]) }
        /// A uniform random number in 0..<1, for the relay backoff's jitter.
        package var jitter: @Sendable () -> Double = { Double.random(in: 0..<1) }
        /// METRICS_FILE; nil writes no metrics.
        package var metricsFile: MetricsFile?
        /// When the process started, milliseconds since the Unix epoch (`process_start_time_seconds`).
        package var processStart: Int64? = MetricsFile.processStart
        /// Defects planted on purpose (the simulator's build only; `PlantedDefects`).
        package var planted: PlantedDefects = .none

        package init(
            syncthing: SyncthingClient, relay: RelayClient, cancelSyncthing: @escaping @Sendable () -> Void,
            rereadAccess: @escaping @Sendable () -> Result<SyncthingAccess, SyncthingAccessError>, logger: Logger,
            monitor: ServiceMonitor = ServiceMonitor(), metricsFile: MetricsFile? = nil
        ) {
            self.syncthing = syncthing
            self.relay = relay
            self.cancelSyncthing = cancelSyncthing
            self.rereadAccess = rereadAccess
            self.logger = logger
            self.monitor = monitor
            self.metricsFile = metricsFile
        }
    }

    private let deps: Dependencies
    private let io: ServiceIO
    private let runtime: any ServiceRuntime
    private var engine: Engine
    private var timers: [Engine.Timer: ArmedTimer] = [:]
    private var timerSerial = 0
    private var signalSources: [any DispatchSourceSignal] = []
    private var finished = false
    private let metrics: MetricsRecorder?
    private let onExit: @Sendable (ExitStatus) -> Void

    /// - Parameters:
    ///   - settings: the engine's tunables (from the environment).
    ///   - onExit: called once, on the engine queue, with the final status (production: `_exit`).
    package convenience init(
        dependencies: Dependencies, settings: Engine.Settings, onExit: @escaping @Sendable (ExitStatus) -> Void
    ) {
        self.init(dependencies: dependencies, settings: settings, runtime: DispatchRuntime(), onExit: onExit)
    }

    package init(
        dependencies: Dependencies, settings: Engine.Settings, runtime: any ServiceRuntime,
        onExit: @escaping @Sendable (ExitStatus) -> Void
    ) {
        deps = dependencies
        io = ServiceIO(
            syncthing: dependencies.syncthing, relay: dependencies.relay, rereadAccess: dependencies.rereadAccess,
            monitor: dependencies.monitor, planted: dependencies.planted)
        self.runtime = runtime
        engine = Engine(settings: settings)
        metrics = dependencies.metricsFile.map {
            MetricsRecorder(
                file: $0, runtime: runtime, logger: dependencies.logger, processStart: dependencies.processStart)
        }
        self.onExit = onExit
    }

    /// Installs the signal handlers and starts the engine. Returns at once; the work goes on on Dispatch queues.
    package func start() {
        installSignalHandlers()
        begin()
    }

    /// Starts the engine (without signal handlers: tests call `requestStop` and `hangup`).
    package func begin() {
        deps.monitor.startWatchdog(on: runtime)
        runtime.onEngine { [self] in feed(.start) }
    }

    /// SIGTERM or SIGINT: stop polling, flush a pending wake-up within the grace period, then exit 0.
    package func requestStop() { runtime.onEngine { [self] in feed(.stop) } }

    /// SIGHUP: re-read config.xml and the environment.
    package func hangup() { runtime.onEngine { [self] in feed(.hangup) } }

    /// Entries the engine and the executor hold in collections (`Engine.heldEntries`, armed timers): what the
    /// simulator checks stays bounded by the configuration.
    package var heldEntries: Int { engine.heldEntries + timers.count }

    /// The engine's tracker, for a simulator's debugging dump.
    package var tracker: PeerTracker { engine.tracker }

    // MARK: - Engine queue

    private func feed(_ input: Engine.Input) {
        let now = runtime.now()
        for action in engine.handle(input, now: now) {
            // Seen before it is performed: a record counts whatever LOG_LEVEL lets through.
            metrics?.observe(action)
            perform(action)
        }
        deps.monitor.progress(engine.progress(now: now))
        metrics?.flush()
    }

    private func perform(_ action: Engine.Action) {
        switch action {
        case .request(let request):
            runtime.onLane(ServiceIO.lane(request)) { [self] in
                let result = io.perform(request, clock: runtime.now)
                runtime.onEngine { [self] in feed(result) }
            }
        case .reread(let reason):
            // A file read, done here so that the next request already uses what it found.
            let result = io.reread()
            runtime.onEngine { [self] in feed(.reread(reason, result)) }
        case .readConfig(let kind, let generation):
            runtime.onLane(.peers) { [self] in
                let read = io.readConfig()
                runtime.onEngine { [self] in
                    feed(.configRead(kind, generation: generation, read.snapshot, malformed: read.malformed))
                }
            }
        case .observe(let kind, let pairs):
            runtime.onLane(.peers) { [self] in
                let observed = ServiceIO.observe(pairs, client: io.syncthing)
                runtime.onEngine { [self] in feed(.observed(kind, observed.observations, malformed: observed.malformed))
                }
            }
        case .armTimer(let timer, let at):
            if let armed = timers[timer], armed.fires <= at, !timer.alsoOnWallClock {
                // Moved later (the debounce, at every batch of a busy stream): the armed timer stays and re-arms
                // for the rest when it fires, instead of a new Dispatch timer per batch. Not for a wall-clock timer,
                // whose rest would be measured on the monotonic clock, which stops while the machine sleeps.
                timers[timer]?.due = at
            } else {
                timers.removeValue(forKey: timer)?.handle.cancel()
                arm(timer, at: at)
            }
        case .cancelTimer(let timer):
            timers.removeValue(forKey: timer)?.handle.cancel()
        case .sendTrigger(let deviceID, let timeout):
            let relay = deps.relay
            runtime.onLane(.relay) { [self] in
                let outcome = relay.trigger(deviceID: deviceID, timeout: timeout)
                let jitter = deps.jitter()
                runtime.onEngine { [self] in feed(.relayOutcome(outcome, jitter: jitter)) }
            }
        case .monitor(let update):
            switch update {
            case .connecting: deps.monitor.status(.connecting)
            case .pollSucceeded: deps.monitor.pollSucceeded()
            case .syncthingUnavailable: deps.monitor.syncthingUnavailable()
            case .relayOutcome(let outcome): deps.monitor.relayOutcome(outcome)
            case .stopping: deps.monitor.stopping()
            }
        case .log(let record):
            deps.logger.log(record)
        case .cancelSyncthing:
            deps.cancelSyncthing()
        case .decided:
            break
        case .exit(let how):
            if let fatal = how.fatal { deps.printFatal(fatalLine(fatal, status: how.status)) }
            finish(how)
        }
    }

    /// A scheduled timer, and when the engine wants it to fire (`due`, never before `fires`).
    private struct ArmedTimer {
        var handle: any ScheduledTimer
        var serial: Int
        var fires: Instant
        var due: Instant
    }

    private func arm(_ timer: Engine.Timer, at: Instant) {
        timerSerial += 1
        let serial = timerSerial
        let handle = runtime.schedule(at: at, alsoOnWallClock: timer.alsoOnWallClock) { [self] in
            fired(timer, serial: serial)
        }
        timers[timer] = ArmedTimer(handle: handle, serial: serial, fires: at, due: at)
    }

    private func fired(_ timer: Engine.Timer, serial: Int) {
        // A timer cancelled or replaced after its handler was queued is not the engine's timer any more.
        guard let armed = timers[timer], armed.serial == serial else { return }
        timers.removeValue(forKey: timer)?.handle.cancel()
        if armed.due > armed.fires {
            arm(timer, at: armed.due)
        } else {
            feed(.timerFired(timer))
        }
    }

    /// Carries out an exit's farewell, in `Farewell`'s order: the running service's exits and the start-up's
    /// (`ServiceLifecycle`; before any metrics were written, `metrics` is nil).
    static func carryOut(_ farewell: Set<Engine.Exit.Farewell>, monitor: ServiceMonitor, metrics: MetricsRecorder?) {
        for step in Engine.Exit.Farewell.allCases where farewell.contains(step) {
            switch step {
            case .notifyStopping: monitor.stopping()
            case .removeStateFile: monitor.removeStateFile()
            case .metricsDown: metrics?.stop()
            }
        }
    }

    /// The two stderr lines of a fatal exit. Name neither key nor path: they are printed while the service runs.
    private func fatalLine(_ fatal: Engine.Fatal, status: ExitStatus) -> FatalLine {
        switch fatal {
        case .relayNotFound:
            return FatalLine(RelayClient.notFoundMessage, fix: RelayClient.notFoundFix, status: status)
        case .apiKeyRejected:
            let source = deps.syncthing.access.keySource
            return FatalLine(source.rejectedMessage, fix: source.rejectedFix, status: status)
        }
    }

    private func finish(_ how: Engine.Exit) {
        guard !finished else { return }
        finished = true
        Self.carryOut(how.farewell, monitor: deps.monitor, metrics: metrics)
        for timer in timers.values { timer.handle.cancel() }
        timers.removeAll()
        onExit(how.status)
    }

    // MARK: - Signals

    private func installSignalHandlers() {
        StopSignals.route { [self] in requestStop() }
        guard let queue = runtime.engineQueue else { return }
        for sig in ServiceSignals.numbers(.reread) {
            ServiceSignals.prepareSource(sig)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            source.setEventHandler { [self] in feed(.hangup) }
            source.resume()
            signalSources.append(source)
        }
    }
}
