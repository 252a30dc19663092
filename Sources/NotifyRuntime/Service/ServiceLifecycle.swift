import NotifyCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The service process from its first instruction to its exit, in one place: the signals prepared, the start-up
/// (`StartupMachine`'s steps carried out, on the main thread), the running `Service`, its graceful stop and the exit.
/// Every decision is the machine's (the start-up) or the engine's (the running service, `Engine.Exit`); this carries
/// them out and ends the process.
package final class ServiceLifecycle {
    private let environment: [String: String]
    private var machine: StartupMachine
    /// In LOG_FORMAT's format once the configuration is known.
    private var printer: FatalPrinter
    // What the steps found so far; each is set by the step that finds it, before the machine asks for the next.
    private var configuration: Configuration?
    private var logger: Logger?
    private var stateFile: StateFile?
    private var runtime: DispatchRuntime?
    private var monitor: ServiceMonitor?
    private var access: SyncthingAccess?

    private init(environment: [String: String]) {
        self.environment = environment
        machine = StartupMachine(
            stderrIsTerminal: FatalPrinter.stderrIsTerminal, journald: FatalPrinter.journald(environment))
        printer = FatalPrinter(environment: environment)
    }

    /// Runs the service with `environment` (the process's) and never returns: the exit status is the start-up's
    /// (`StartupMachine.Ending`: 75 or 78) or the running service's (`Engine.Exit`: 0, 75 or 78).
    package static func run(environment: [String: String]) -> Never {
        // Before anything that may start a thread: every thread inherits the mask.
        ServiceSignals.prepare()
        let lifecycle = ServiceLifecycle(environment: environment)
        var next = lifecycle.machine.begin()
        while true {
            switch next {
            case .checkEnvironment: next = lifecycle.checkEnvironment()
            case .lockStateFile: next = lifecycle.lockStateFile()
            case .awaitConfig(let step): next = lifecycle.awaitConfig(step)
            case .startService(let step): lifecycle.startService(step)
            case .end(let ending):
                // On the main thread, with no libcurl call in flight: atexit handlers may run.
                lifecycle.carryOut(ending, exit: { exit($0) })
            }
        }
    }

    // MARK: - Start-up steps

    private func checkEnvironment() -> StartupMachine.Next {
        switch App.checkEnvironment(environment) {
        case .success(let c):
            configuration = c
            logger = Logger(
                minimumLevel: c.logLevel, sink: StderrLogSink(environment: environment, format: c.logFormat))
            printer = FatalPrinter(environment: environment, format: c.logFormat)
            let plan = StartupMachine.Plan(
                configWait: c.configWait,
                relayVerifiedAgainstCAs: CurlTransport.verifiesAgainstCAs(HTTPRequest(url: c.relayBaseURL)))
            return machine.handle(.environmentValid(plan))
        case .failure(let problems):
            // Each message names the variable and what it accepts, never the value.
            return machine.handle(
                .environmentInvalid(problems.problems.map { StartupMachine.Problem(message: $0.message, fix: $0.fix) }))
        }
    }

    /// The state file's lock, held for the life of the process: a second service for the same Syncthing instance
    /// would share the file and read as one.
    private func lockStateFile() -> StartupMachine.Next {
        stateFile = StateFile.locate(environment: environment, create: true)
        let lock: StartupMachine.Lock
        switch stateFile?.acquireLock() {
        case .acquired?: lock = .acquired
        case .heldByAnother?: lock = .heldByAnother
        case .unavailable?, nil: lock = .unavailable
        }
        return machine.handle(.lock(lock))
    }

    private func awaitConfig(_ step: StartupMachine.AwaitConfig) -> StartupMachine.Next {
        guard let configuration, let logger else { preconditionFailure("the config.xml wait before the environment") }
        for record in step.records { logger.log(record) }
        // The service's queues, timers and clocks; the monitor and the relay client read its clocks.
        let runtime = DispatchRuntime()
        // systemd notify, the watchdog and the health state file. The watchdog ticks on the engine queue from now
        // on: nothing else runs there until the service starts, and the config.xml wait is one bounded step.
        let monitor = ServiceMonitor.live(
            environment: environment, stateFile: stateFile, writer: step.namesWriter ? StateFile.currentWriter() : nil,
            logger: logger, clock: runtime)
        self.runtime = runtime
        self.monitor = monitor

        // Until the service installs its own handlers (after config.xml was found), a stop signal ends the start-up.
        // One that came before this stays blocked (`ServiceSignals.prepare`) and is handled here. SIGHUP stays
        // blocked until then: it re-reads config.xml, which the start-up is reading anyway.
        let printer = printer
        StopSignals.route {
            // `_exit`: the main thread may be inside the config.xml wait, and must not run atexit handlers under it.
            Self.carryOut(
                StartupMachine.stoppedBeforeStart, logger: logger, printer: printer, monitor: monitor,
                exit: { _exit($0) })
        }
        monitor.status(.starting)
        monitor.startWatchdog(on: runtime)

        monitor.waitingForConfig(step.wait)
        monitor.stepStarted(bound: step.bound)
        let resolved = SyncthingAccess.resolve(
            configuration: configuration, environment: environment,
            home: ConfigLocator.homeDirectory(environment: environment), logger: logger)
        monitor.stepFinished()
        switch resolved {
        case .success(let a):
            access = a
            return machine.handle(.configLoaded)
        case .failure(let error):
            return machine.handle(.configUnusable(error.startupProblem))
        }
    }

    private func startService(_ step: StartupMachine.StartService) -> Never {
        guard let configuration, let logger, let runtime, let monitor, let access else {
            preconditionFailure("the service started before config.xml was read")
        }
        for record in step.records { logger.log(record) }
        // One CA store for both transports; the relay's is the one that verifies against it.
        let trustStore = TrustStore(environment: environment, logger: logger)
        if step.probeRelayCAs { _ = trustStore.current() }
        var dependencies = App.serviceDependencies(
            configuration: configuration, environment: environment,
            home: ConfigLocator.homeDirectory(environment: environment), access: access,
            syncthingTransport: CurlTransport(trustStore: trustStore),
            relayTransport: CurlTransport(trustStore: trustStore),
            logger: logger, monitor: monitor, clock: runtime)
        let printer = printer
        dependencies.printFatal = { printer.print([$0]) }
        let settings = Engine.Settings(configuration: configuration, relayTimeout: RelayTimeouts.request)
        let service = Service(dependencies: dependencies, settings: settings, runtime: runtime) { status in
            // The service printed its lines and carried its farewell out (it holds the metrics). _exit, not exit: the
            // poll thread may still be inside libcurl, and atexit handlers (libcurl, OpenSSL) running under it can
            // abort. Logs are written unbuffered, so nothing is lost.
            _exit(status.rawValue)
        }
        service.start()
        Self.parkMainThread()
    }

    // MARK: - Ending

    private func carryOut(_ ending: StartupMachine.Ending, exit: (Int32) -> Never) -> Never {
        Self.carryOut(ending, logger: logger, printer: printer, monitor: monitor, exit: exit)
    }

    /// Carries out a start-up's ending in `StartupMachine.Ending`'s order; before any metrics were written, so the
    /// farewell has none to take down.
    private static func carryOut(
        _ ending: StartupMachine.Ending, logger: Logger?, printer: FatalPrinter, monitor: ServiceMonitor?,
        exit: (Int32) -> Never
    ) -> Never {
        for record in ending.records { logger?.log(record) }
        printer.print(ending.fatal)
        if let monitor { Service.carryOut(ending.farewell, monitor: monitor, metrics: nil) }
        exit(ending.status.rawValue)
    }

    /// Keeps the main thread asleep for the rest of the process; the service runs on its own Dispatch queues and
    /// ends the process with `_exit`. Not `dispatchMain()`: nothing runs on the main queue, and dispatchMain ends the
    /// main thread with `pthread_exit`, which unwinds that thread's stack through the unwind tables the release
    /// build leaves out (docs/benchmarks.md, "Unwind tables").
    private static func parkMainThread() -> Never {
        while true { pause() }
    }
}

extension SyncthingAccessError {
    /// What the start-up machine needs to know of it: the code, the status, and both wordings of the message.
    package var startupProblem: StartupMachine.ConfigProblem {
        StartupMachine.ConfigProblem(
            code: code, status: status, message: message(showingPath: false),
            messageNamingPath: message(showingPath: true), fix: fix)
    }
}
