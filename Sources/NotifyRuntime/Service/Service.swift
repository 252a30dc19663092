import Dispatch
import NotifyCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The running sidecar: the thin I/O shell around `WakePolicy` and `EventCursor`.
///
/// Threads (DESIGN.md "One serial queue owns all state"):
/// - the engine queue owns the policy, the cursor and every timer (DispatchSourceTimer), and performs actions;
/// - the event long-poll runs on its own thread, so event intake never waits for a relay retry; it hands each
///   poll's result to the engine synchronously and is cancelled within milliseconds at shutdown
///   (`curl_multi_wakeup` through `HTTPTransport.cancel()`);
/// - the relay POST and the stale-peer sweep run on their own queues and post their results back.
public final class Service: @unchecked Sendable {
    // @unchecked: every mutable field below is touched only on `engine` (or before `start()`).
    public struct Dependencies: Sendable {
        public var syncthing: SyncthingClient
        public var relay: RelayClient
        /// Cancels the Syncthing transport (the long-poll) at shutdown. The relay transport is not cancelled: the
        /// pending wake-up must still go out within the grace period.
        public var cancelSyncthing: @Sendable () -> Void
        /// Re-reads config.xml and the environment (after 401/403 from Syncthing); nil when nothing changed or
        /// nothing could be read.
        public var reloadAccess: @Sendable () -> SyncthingAccess?
        public var logger: Logger
        /// systemd notify and the health state file (default: neither).
        public var monitor: ServiceMonitor
        /// Re-reads config.xml and the environment on SIGHUP, without waiting; nil falls back to `reloadAccess`.
        public var rereadAccess: (@Sendable () -> Result<SyncthingAccess, SyncthingAccessError>)?

        public init(
            syncthing: SyncthingClient, relay: RelayClient, cancelSyncthing: @escaping @Sendable () -> Void,
            reloadAccess: @escaping @Sendable () -> SyncthingAccess?, logger: Logger,
            monitor: ServiceMonitor = ServiceMonitor(),
            rereadAccess: (@Sendable () -> Result<SyncthingAccess, SyncthingAccessError>)? = nil
        ) {
            self.syncthing = syncthing
            self.relay = relay
            self.cancelSyncthing = cancelSyncthing
            self.reloadAccess = reloadAccess
            self.logger = logger
            self.monitor = monitor
            self.rereadAccess = rereadAccess
        }
    }

    private let deps: Dependencies
    private var policy: WakePolicy
    /// Which events are news, and which peers the sweep wakes (engine queue).
    private var tracker: PeerTracker
    /// A config read for a ConfigSaved event is queued and has not landed yet (engine queue).
    private var configReadQueued = false
    /// How many events of the batch `wakeIfAnyWakes` read were news (for `deliver`'s debug record).
    private var newsReadEarly = 0
    private let engine = DispatchQueue(label: "vaultsync-notify.engine")
    private let relayQueue = DispatchQueue(label: "vaultsync-notify.relay")
    private let sweepQueue = DispatchQueue(label: "vaultsync-notify.sweep")
    private let origin = DispatchTime.now()
    private var timers: [WakePolicy.Timer: any DispatchSourceTimer] = [:]
    private var signalSources: [any DispatchSourceSignal] = []
    private var deviceID = ""
    private var cursor = EventCursor(head: 0, startTime: "")
    private var stopping = false
    private let stopFlag = Atomic<Bool>(false)
    private let wakeSleeper = DispatchSemaphore(value: 0)
    private let onExit: @Sendable (ExitStatus) -> Void

    /// - Parameters:
    ///   - settings: the policy's tunables (from the environment).
    ///   - watchedFolders: WATCHED_FOLDERS; empty means all.
    ///   - onExit: called once, on the engine queue, with the final status (production: flush and `exit`).
    public init(
        dependencies: Dependencies, settings: WakePolicy.Settings, watchedFolders: Set<String>,
        onExit: @escaping @Sendable (ExitStatus) -> Void
    ) {
        deps = dependencies
        tracker = PeerTracker(rules: WakeRules(watchedFolders: watchedFolders))
        policy = WakePolicy(settings: settings)
        self.onExit = onExit
    }

    private var log: Logger { deps.logger }
    private var monitor: ServiceMonitor { deps.monitor }

    /// Poll thread: runs one blocking call that returns within `bound`, announced to the watchdog's liveness.
    private func step<T>(_ bound: Duration, _ body: () -> T) -> T {
        monitor.stepStarted(bound: bound)
        defer { monitor.stepFinished() }
        return body()
    }

    /// Bound of a Syncthing request other than the long-poll (`SyncthingClient`'s 15 s total timeout).
    static let requestBound: Duration = .seconds(15)

    private func now() -> Instant {
        Instant(.nanoseconds(Int64(DispatchTime.now().uptimeNanoseconds &- origin.uptimeNanoseconds)))
    }

    // MARK: - Start-up

    /// Installs the signal handlers, checks the relay, connects to Syncthing, places the cursor at the head,
    /// and starts the policy and the long-poll thread. Returns at once; the work goes on on Dispatch queues.
    public func start() {
        installSignalHandlers()
        monitor.status(.connecting)
        monitor.startWatchdog(queue: engine)
        Thread.detach { [self] in self.bootstrapAndPoll() }
    }

    private func bootstrapAndPoll() {
        // 1. Relay health: a 404 here means RELAY_URL is wrong (relay spec, "Error responses"). An "ok" answer means
        //    the relay is at RELAY_URL, so that a later 404 is an outage, not the configuration (issue 9 §1).
        switch step(RelayClient.requestTimeout, { deps.relay.health() }) {
        case .ok:
            log.log(.info, .relayHealthy)
            engine.sync { perform(policy.handle(.relayHealthy, now: now())) }
        case .endpointMissing:
            engine.async { [self] in
                log.log(.error, .relayEndpointMissing, .status(404), .code(.relayEndpointMissing))
                printRelayNotFound()
                finish(.configuration)
            }
            return
        case .unhealthy(let status, let error):
            var fields: [LogField] = []
            if let status { fields.append(.status(status)) }
            if let error { fields.append(.code(error)) }
            log.log(LogRecord(.warn, .relayUnhealthy, fields))
        }

        // 2. Syncthing: Device ID and start time, retrying with capped backoff while it is down.
        guard let status = connect() else { return }
        guard RelayClient.isDeviceID(status.myID) else {
            log.log(.error, .syncthingUnavailable, .code(.syncthingMalformed))
            engine.async { [self] in finish(.temporary) }
            return
        }
        // 3. The cursor starts at the current head: older events never wake anyone.
        guard let head = placeHead() else { return }
        engine.sync {
            deviceID = status.myID
            cursor = EventCursor(head: head, startTime: status.startTime)
            log.log(.info, .syncthingConnected)
            perform(policy.handle(.start, now: now()))
            // Read who shares what, and each peer's state, before the first change needs them.
            readPeers(.snapshot)
        }
        pollLoop()
    }

    /// Reads `/rest/system/status` until it answers. A wrong API key is re-read from config.xml once, then
    /// reported; the process then exits 78 (configuration).
    private func connect() -> SystemStatus? {
        switch run(.connect) {
        case .connected(let status):
            return status
        case .exit(let status):
            // The key is still rejected after a re-read: the fatal line says where it came from (no key, no path).
            let source = deps.syncthing.access.keySource
            App.printErr(App.fatalText(source.rejectedMessage, fix: source.rejectedFix))
            engine.async { [self] in finish(status) }
        case .placed, nil:
            break
        }
        return nil
    }

    private func placeHead() -> Int? {
        guard case .placed(let head) = run(.placeHead) else { return nil }
        return head
    }

    /// Sleeps on the poll thread; a shutdown wakes it at once.
    private func sleep(_ d: Duration) {
        let (s, atto) = d.components
        let ns = Int(s) * 1_000_000_000 + Int(atto / 1_000_000_000)
        step(d) { _ = wakeSleeper.wait(timeout: .now() + .nanoseconds(ns)) }
    }

    // MARK: - The event long-poll (its own thread)

    private func pollLoop() {
        _ = run(.poll)
    }

    /// Poll thread: drives one phase of `PollLoop`, which makes every decision: ask it for the next step, perform
    /// that step, report the result, perform the actions. Returns how the phase ended; nil when the service stops.
    private func run(_ phase: PollLoop.Phase) -> PollLoop.Outcome? {
        var core = PollLoop(phase)
        while !stopFlag.load(ordering: .relaxed) {
            let result: PollLoop.StepResult
            switch core.next() {
            case .finished(let outcome):
                return outcome
            case .readStatus:
                result = .status(step(Self.requestBound) { deps.syncthing.status() }.mapError(\.pollFailure))
            case .readHead:
                result = .head(step(Self.requestBound) { deps.syncthing.eventHead() }.mapError(\.pollFailure))
            case .poll:
                let since = engine.sync { cursor.since }
                let started = now()
                let polled = step(SyncthingClient.pollClientTimeout) { deps.syncthing.poll(since: since) }
                result = .polled(polled.mapError(\.pollFailure), elapsed: now() - started)
            case .sleep(let duration):
                sleep(duration)
                result = .slept
            case .reauthenticate:
                result = .reauthenticated(changed: reauthenticate())
            case .wakeNow(let events):
                result = .woken(engine.sync { wakeIfAnyWakes(events) })
            case .consume(let events, let st, let woken):
                let restarted = engine.sync {
                    adoptDeviceID(st.myID) || consume(events, startTime: st.startTime, alreadyWoken: woken)
                }
                result = .consumed(restarted: restarted)
            case .checkRestart(let st):
                result = .restartChecked(
                    restarted: engine.sync { adoptDeviceID(st.myID) || cursor.startTime != st.startTime })
            case .resync(let startTime, let restarted, let wake):
                result = .resynced(resync(startTime: startTime, restarted: restarted, wake: wake))
            }
            if stopFlag.load(ordering: .relaxed) { return nil }
            for action in core.handle(result) {
                switch action {
                case .log(let record): log.log(record)
                case .pollSucceeded: monitor.pollSucceeded()
                case .syncthingUnavailable: monitor.syncthingUnavailable()
                case .payOwedWake: engine.sync { perform(policy.handle(.resynced, now: now())) }
                }
            }
        }
        return nil
    }

    /// After a 401/403: re-reads config.xml and the environment and swaps a changed key or address in. Returns true
    /// when something changed.
    private func reauthenticate() -> Bool {
        guard let access = deps.reloadAccess(), access != deps.syncthing.access else { return false }
        deps.syncthing.update(access: access)
        return true
    }

    /// Engine queue: applies one poll's events to the cursor and the policy. Returns true when Syncthing
    /// restarted, so that the poll thread re-places the cursor at the new head.
    private func consume(_ events: [SyncthingEvent], startTime: String, alreadyWoken: Bool) -> Bool {
        let verdict = cursor.consume(events, startTime: startTime)
        let t = now()
        switch verdict {
        case .idle:
            break
        case .events(let batch):
            deliver(batch, now: t, alreadyWoken: alreadyWoken)
        case .gap(let batch):
            log.log(.warn, .eventGap, .count(batch.count))
            deliver(batch, now: t, alreadyWoken: alreadyWoken)
            forgetPeers()
            perform(policy.handle(.resynced, now: t))
        case .restarted:
            return true
        }
        return false
    }

    /// - Parameter alreadyWoken: the batch was already read by `wakeIfAnyWakes` (the tracker must see each event
    ///   once: a FolderCompletion is news only on its first report of a need).
    private func deliver(_ batch: [SyncthingEvent], now t: Instant, alreadyWoken: Bool) {
        let news = alreadyWoken ? newsReadEarly : readNews(batch, now: t)
        log.log(.debug, .eventsReceived, .count(batch.count), LogField(.events, .int(news)))
    }

    /// Engine queue: reads a batch through the tracker, wakes when any event is news, and re-reads the config when
    /// a ConfigSaved came. Returns the number of events that are news.
    private func readNews(_ events: [SyncthingEvent], now t: Instant) -> Int {
        let news = tracker.news(in: events)
        if news > 0 { perform(policy.handle(.wake(.change), now: t)) }
        if tracker.configStale && !configReadQueued {
            configReadQueued = true
            readPeers(.configOnly)
        }
        return news
    }

    /// Engine queue: takes a new Device ID from `/rest/system/status` (Syncthing's identity was replaced, e.g. its
    /// cert.pem and key.pem; SYNCTHING-API.md "Implications" 7). Returns true when it changed: the caller treats that
    /// as a restart, so the cursor is re-placed and the relay woken under the new ID.
    private func adoptDeviceID(_ id: String) -> Bool {
        guard id != deviceID, RelayClient.isDeviceID(id), !deviceID.isEmpty else { return false }
        deviceID = id
        log.log(.warn, .deviceIDChanged)
        return true
    }

    /// Engine queue: reads a fresh batch through the tracker at once (a change's debounce starts now, not after the
    /// status read) and wakes when any event is news. Returns true when the batch was read (then `consume` does not
    /// read it again).
    private func wakeIfAnyWakes(_ events: [SyncthingEvent]) -> Bool {
        // Ids at or below the cursor are a replay or a restart: the cursor verdict decides what they mean.
        guard let first = events.first, first.id > cursor.since else { return false }
        newsReadEarly = readNews(events, now: now())
        return true
    }

    /// Re-places the cursor at the new head (poll thread); returns false when Syncthing did not answer.
    /// - Parameter wake: feed `.resynced` to the policy (one wake-up and a sweep). False while the same fault
    ///   repeats: the first occurrence already woke the relay, and the debt is paid once polls recover.
    private func resync(startTime: String, restarted: Bool, wake: Bool = true) -> Bool {
        guard case .success(let head) = step(Self.requestBound, { deps.syncthing.eventHead() }) else { return false }
        engine.sync {
            cursor.reset(head: head, startTime: startTime)
            forgetPeers()
            log.log(restarted ? .info : .warn, restarted ? .syncthingRestarted : .eventGap)
            if wake { perform(policy.handle(.resynced, now: now())) }
        }
        return true
    }

    // MARK: - Actions (engine queue)

    private func perform(_ actions: [WakePolicy.Action]) {
        for action in actions {
            switch action {
            case .sendTrigger:
                sendTrigger()
            case .armTimer(let timer, let at):
                arm(timer, at: at)
            case .cancelTimer(let timer):
                timers.removeValue(forKey: timer)?.cancel()
            case .runSweep:
                runSweep()
            case .log(let record):
                log.log(record)
                // The policy's 404 record comes right before its exit 78; a fatal exit gets its fix line.
                if record.message == .relayEndpointMissing { printRelayNotFound() }
            case .exit(let status):
                finish(status)
            }
        }
    }

    /// The two fatal lines on stderr that every configuration error gets, for a relay 404 at start-up.
    private func printRelayNotFound() {
        App.printErr(App.fatalText(RelayClient.notFoundMessage, fix: RelayClient.notFoundFix))
    }

    private func arm(_ timer: WakePolicy.Timer, at: Instant) {
        timers.removeValue(forKey: timer)?.cancel()
        let delay = max(.zero, at - now())
        let (s, atto) = delay.components
        let ns = Int(s) * 1_000_000_000 + Int(atto / 1_000_000_000)
        let source = DispatchSource.makeTimerSource(queue: engine)
        if timer == .sweep {
            // The sweep cadence is hours long: use the wall clock so a host suspend does not stretch it.
            source.schedule(wallDeadline: .now() + .nanoseconds(ns), leeway: .seconds(1))
        } else {
            // No leeway: the debounce end is on the wake-up's critical path.
            source.schedule(deadline: .now() + .nanoseconds(ns), leeway: .nanoseconds(0))
        }
        source.setEventHandler { [self] in
            timers.removeValue(forKey: timer)?.cancel()
            perform(policy.handle(.timerFired(timer), now: now()))
        }
        timers[timer] = source
        source.resume()
    }

    private func sendTrigger() {
        let id = deviceID
        let relay = deps.relay
        let timeout: Duration = stopping ? .milliseconds(4500) : RelayClient.requestTimeout
        relayQueue.async { [self] in
            let outcome = relay.trigger(deviceID: id, timeout: timeout)
            let jitter = Double.random(in: 0..<1)
            engine.async { [self] in
                monitor.relayOutcome(outcome)
                perform(policy.handle(.relayOutcome(outcome, jitter: jitter), now: now()))
            }
        }
    }

    private func runSweep() { readPeers(.sweep) }

    /// Engine queue, after lost events or a Syncthing restart: forgets every pair's state (the events that moved it
    /// may be lost) and reads the config and every pair's state again at once, whether or not the sweep is enabled, so
    /// that the next progress report of a running transfer is not taken for news.
    private func forgetPeers() {
        tracker.resynced()
        readPeers(.snapshot)
    }

    /// What `readPeers` reads and whom it tells.
    enum PeerRead {
        /// The config only (after a ConfigSaved event).
        case configOnly
        /// The config and every shared pair's completion, to seed the tracker (at start); wakes nobody.
        case snapshot
        /// The stale-peer sweep: like a snapshot, and its answer goes to the policy (`.sweepFinished`).
        case sweep
    }

    /// Engine queue: reads the config (and, unless `.configOnly`, `/rest/system/connections` and
    /// `/rest/db/completion` for every pair the tracker shares) on the sweep queue, and hands the answers to the
    /// tracker on the engine queue. A sweep that cannot complete answers nil.
    private func readPeers(_ kind: PeerRead) {
        let client = deps.syncthing
        let myID = deviceID
        sweepQueue.async { [self] in
            let generation = engine.sync { tracker.configGeneration }
            var needing: Int?
            defer {
                if kind == .sweep {
                    let answer = needing
                    engine.async { [self] in
                        perform(policy.handle(.sweepFinished(peersNeedingData: answer), now: now()))
                    }
                }
            }
            guard case .success(let devices) = client.devices(), case .success(let folders) = client.folders()
            else {
                // The next ConfigSaved (or sweep, or re-sync) tries again; meanwhile local changes count as news.
                engine.sync { configReadQueued = false }
                return
            }
            let pairs = engine.sync {
                configReadQueued = false
                tracker.setConfig(myID: myID, devices: devices, folders: folders, generation: generation)
                if tracker.configStale {
                    // A ConfigSaved came while this read ran: read again.
                    configReadQueued = true
                    readPeers(.configOnly)
                }
                return tracker.sweepPairs
            }
            if kind == .configOnly { return }
            guard let observations = Self.observe(pairs, client: client) else { return }
            needing = engine.sync { tracker.absorb(observations) }
        }
    }

    /// Asks Syncthing whether each pair's device is connected and what it still needs; nil when Syncthing did not
    /// answer. A 404 for a pair (a folder paused since the config was read, SYNCTHING-API.md §e) skips that pair.
    static func observe(_ pairs: [SweepPair], client: SyncthingClient) -> [SweepObservation]? {
        if pairs.isEmpty { return [] }
        guard case .success(let connections) = client.connections() else { return nil }
        var observations: [SweepObservation] = []
        for pair in pairs {
            switch client.completion(device: pair.device, folder: pair.folder) {
            case .success(let completion):
                let connected = connections[pair.device]?.connected ?? false
                observations.append(SweepObservation(pair: pair, connected: connected, completion: completion))
            case .failure(.notFound): continue
            case .failure: return nil
            }
        }
        return observations
    }

    // MARK: - Signals and exit

    /// A parent may start us with signals blocked (Dispatch worker threads block them, and a child inherits the
    /// spawning thread's mask): unblock the ones the sidecar handles, on the calling thread. Call it on the main
    /// thread before any other thread exists, so that every later thread inherits the unblocked mask.
    public static func unblockHandledSignals() {
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for sig in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&unblock, sig) }
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
    }

    private func installSignalHandlers() {
        Self.unblockHandledSignals()
        signal(SIGPIPE, SIG_IGN)
        StopSignals.route { [self] in engine.async { self.requestStop() } }
        signal(SIGHUP, SIG_IGN)
        let hangup = DispatchSource.makeSignalSource(signal: SIGHUP, queue: engine)
        hangup.setEventHandler { [self] in rereadConfiguration() }
        hangup.resume()
        signalSources.append(hangup)
    }

    /// Engine queue, on SIGHUP: re-reads config.xml and the environment without waiting and swaps a changed
    /// address or API key into the Syncthing client; the next request uses it (a long-poll in flight finishes
    /// first). A config.xml that cannot be used keeps the current access and logs a warning.
    private func rereadConfiguration() {
        if stopping { return }
        let reread =
            deps.rereadAccess?() ?? deps.reloadAccess().map { .success($0) } ?? .failure(.configFile(.notFound))
        switch reread {
        case .success(let access) where access == deps.syncthing.access:
            log.log(.info, .configReloadUnchanged)
        case .success(let access):
            deps.syncthing.update(access: access)
            log.log(.info, .configReloaded)
        case .failure(let error):
            log.log(.warn, .configReloadFailed, .code(error.code))
        }
    }

    /// Engine queue: stop polling at once, flush a pending wake-up within the grace period, then exit 0.
    private func requestStop() {
        if stopping { return }
        stopping = true
        monitor.stopping()
        stopFlag.store(true, ordering: .relaxed)
        wakeSleeper.signal()
        deps.cancelSyncthing()
        if deviceID.isEmpty {
            // Not started yet (still waiting for Syncthing): nothing can be pending. The same two records as every
            // other stop (`WakePolicy`'s `.stop` with nothing to flush).
            log.log(.info, .shutdownRequested)
            log.log(.info, .stopped)
            finish(.ok)
            return
        }
        perform(policy.handle(.stop, now: now()))
    }

    private var finished = false

    private func finish(_ status: ExitStatus) {
        guard !finished else { return }
        finished = true
        monitor.stopping()
        stopFlag.store(true, ordering: .relaxed)
        wakeSleeper.signal()
        for timer in timers.values { timer.cancel() }
        timers.removeAll()
        onExit(status)
    }
}

/// SIGTERM and SIGINT for the whole process, from the moment the service starts to start up (before config.xml is
/// found) to its exit: one Dispatch signal source per signal, installed once, that calls whatever handler was routed
/// last. Switching the handler from the start-up one (`Service.stopBeforeStart`) to the running service's leaves no
/// moment in which a signal is lost or handled twice.
enum StopSignals {
    private struct State {
        var handler: (@Sendable () -> Void)?
        var installed = false
    }
    private static let state = Mutex(State())
    /// The sources, kept for the process's lifetime; written once, by the first `route`, and never read.
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []
    private static let queue = DispatchQueue(label: "vaultsync-notify.signals")

    /// Makes `handle` the reaction to SIGTERM and SIGINT (installing the signal sources the first time). Call it
    /// from one thread (the main thread).
    static func route(_ handle: @escaping @Sendable () -> Void) {
        let install = state.withLock { s -> Bool in
            s.handler = handle
            defer { s.installed = true }
            return !s.installed
        }
        guard install else { return }
        #if os(Linux)
            // Dispatch installs its signal handler (and signalfd) later, on its manager thread. Until then the
            // signals are SIG_IGN and one that arrives is discarded: a SIGTERM right after start-up was lost in 3 of
            // 60 tries. Blocked, a signal stays pending instead, and reaches the source once it is in place.
            var stops = sigset_t()
            sigemptyset(&stops)
            for sig in [SIGTERM, SIGINT] { sigaddset(&stops, sig) }
            pthread_sigmask(SIG_BLOCK, &stops, nil)
            defer { pthread_sigmask(SIG_UNBLOCK, &stops, nil) }
        #endif
        for sig in [SIGTERM, SIGINT] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            source.setEventHandler { state.withLock { $0.handler }?() }
            source.resume()
            sources.append(source)
        }
        #if os(Linux)
            waitForDispatchHandlers([SIGTERM, SIGINT])
        #endif
    }

    #if os(Linux)
        /// Waits (at most 5 s) until Dispatch has replaced SIG_IGN with its own handler for each of `signals`.
        private static func waitForDispatchHandlers(_ signals: [Int32]) {
            let deadline = ContinuousClock.now + .seconds(5)
            for sig in signals {
                while ContinuousClock.now < deadline {
                    var current = sigaction()
                    sigaction(sig, nil, &current)
                    if unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self)
                        != unsafeBitCast(SIG_IGN, to: Int.self)
                    {
                        break
                    }
                    usleep(1000)
                }
            }
        }
    #endif
}

extension Service {
    /// Until a `Service` starts (while config.xml is awaited, up to SYNCTHING_CONFIG_WAIT_SECONDS), SIGTERM and SIGINT
    /// end the process with status 0 after the same records as every other stop (`shutdown requested`, `stopped`;
    /// issue 9 §4): nothing can be pending yet.
    public static func stopBeforeStart(logger: Logger) {
        unblockHandledSignals()
        StopSignals.route {
            logger.log(.info, .shutdownRequested)
            logger.log(.info, .stopped)
            _exit(ExitStatus.ok.rawValue)
        }
    }
}

/// A minimal detached thread on pthreads (FoundationEssentials has no Thread).
enum Thread {
    static func detach(_ body: @escaping @Sendable () -> Void) {
        final class Box: @unchecked Sendable {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(
            &thread, nil,
            { raw in
                let box = Unmanaged<AnyObject>.fromOpaque(raw!).takeRetainedValue() as! Box
                box.body()
                return nil
            }, box)
        precondition(rc == 0, "pthread_create failed")
        pthread_detach(thread)
    }
}

extension SyncthingError {
    /// The failure as `PollLoop` reads it: the log-safe code and the HTTP status.
    fileprivate var pollFailure: PollLoop.Failure { PollLoop.Failure(code: code, status: status) }
}
