import Dispatch
import NotifyCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The executable's whole behaviour: parse the command line, pick the mode, and run it to an exit status.
package enum App {
    /// Runs the process and never returns.
    package static func main(arguments: [String], environment: [String: String]) -> Never {
        // First of all: the process's start time for METRICS_FILE (`process_start_time_seconds`).
        _ = MetricsFile.processStart
        signal(SIGPIPE, SIG_IGN)
        switch Mode.parse(arguments) {
        case .version:
            printOut(Mode.versionText)
            exit(ExitStatus.ok.rawValue)
        case .help:
            printOut(Mode.helpText)
            exit(ExitStatus.ok.rawValue)
        case .usage(let problem):
            // Before any configuration: LOG_FORMAT alone says the format.
            printFatal([.usage(problem, usageLine: Mode.usageLine)], environment: environment)
            exit(ExitStatus.usage.rawValue)
        case .doctor(let json, let trigger):
            exit(Doctor.run(environment: environment, json: json, trigger: trigger).rawValue)
        case .healthcheck:
            exit(Healthcheck.run(environment: environment).rawValue)
        case .status(let json):
            exit(Status.run(environment: environment, json: json).rawValue)
        case .checkConfig:
            let result = checkConfig(environment: environment)
            if let out = result.stdout { printOut(out) }
            if !result.problems.isEmpty { printFatal(result.problems, environment: environment) }
            exit(result.status.rawValue)
        case .run:
            runService(environment: environment)
        }
    }

    /// The process's environment as `[name: value]`, read from `environ` (no Foundation: `ProcessInfo` would
    /// link it) and parsed by `EnvironmentEntries.parse`.
    package static func processEnvironment() -> [String: String] {
        let start: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        #if canImport(Darwin)
            // macOS declares no `environ` to Swift; this is its accessor for the same array.
            start = _NSGetEnviron().pointee
        #else
            start = environ
        #endif
        guard var cursor = start else { return [:] }
        var entries: [String] = []
        while let entry = cursor.pointee {
            entries.append(String(cString: entry))
            cursor += 1
        }
        return EnvironmentEntries.parse(entries)
    }

    static func runService(environment: [String: String]) -> Never {
        // Before anything that may start a thread: every thread inherits the mask.
        Service.prepareSignals()
        let configuration: Configuration
        switch checkEnvironment(environment) {
        case .success(let c): configuration = c
        case .failure(let problems):
            // Each message names the variable and what it accepts, never the value.
            printFatal(problems.lines, environment: environment)
            exit(ExitStatus.configuration.rawValue)
        }
        let logger = Logger(
            minimumLevel: configuration.logLevel,
            sink: StderrLogSink(environment: environment, format: configuration.logFormat))
        // The state file's lock, held for the life of the process: a second service for the same Syncthing
        // instance would share the file and read as one. Temporary, not a configuration error: the service manager
        // starts this one again, and it runs once the other has stopped.
        let stateFile = StateFile.locate(environment: environment, create: true)
        var writer: ServiceWriter?
        switch stateFile?.acquireLock() {
        case .acquired?: writer = StateFile.currentWriter()
        case .heldByAnother?:
            printFatal([alreadyRunningLine], format: configuration.logFormat, environment: environment)
            exit(ExitStatus.temporary.rawValue)
        case .unavailable?, nil: break
        }
        logger.log(.info, .starting)

        // The service's queues, timers and clocks; the monitor and the relay client read its clocks.
        let runtime = DispatchRuntime()
        // systemd notify, the watchdog and the health state file. The watchdog ticks on the engine queue from now
        // on: nothing else runs there until the service starts, and the config.xml wait is one bounded step.
        let monitor = ServiceMonitor.live(
            environment: environment, stateFile: stateFile, writer: writer, logger: logger, clock: runtime)

        // Until the service installs its own handlers (after config.xml was found, which may take up to
        // SYNCTHING_CONFIG_WAIT_SECONDS), the stop signals log "stopped" and exit 0: nothing can be pending yet.
        // A stop signal that came before this stays blocked (`prepareSignals`) and is handled here.
        // SIGHUP stays blocked until then: it re-reads config.xml, which the start-up is reading anyway.
        Service.stopBeforeStart(logger: logger, monitor: monitor)
        monitor.status(.starting)
        monitor.startWatchdog(on: runtime)

        let home = ConfigLocator.homeDirectory(environment: environment)
        let resolve: @Sendable () -> Result<SyncthingAccess, SyncthingAccessError> = {
            SyncthingAccess.resolve(configuration: configuration, environment: environment, home: home, logger: logger)
        }
        let access: SyncthingAccess
        monitor.waitingForConfig(configuration.configWait)
        // The wait, then the read of config.xml, given as long as a Syncthing request (a slow NAS disk).
        monitor.stepStarted(bound: configuration.configWait + SyncthingTimeouts.request)
        let resolved = resolve()
        monitor.stepFinished()
        switch resolved {
        case .success(let a): access = a
        case .failure(let error):
            if error.status == .temporary {
                logger.log(.warn, .configNotThereYet, .code(error.code))
            } else {
                logger.log(.error, .configInvalid, .code(error.code))
            }
            printFatal(
                [serviceFatalLine(error, showingPath: stderrIsAPerson(environment))], format: configuration.logFormat,
                environment: environment)
            // Not there yet after the first-boot wait is temporary (a late mount, a Syncthing slow on first boot),
            // even at the path SYNCTHING_CONFIG names; a path that cannot be a config.xml is a configuration error.
            // Either way the wait's state file goes, so that --status finds no instance instead of a wait.
            let ending = Engine.Exit.accessUnavailable(error.status)
            Service.carryOut(ending.farewell, monitor: monitor, metrics: nil)
            exit(ending.status.rawValue)
        }
        logger.log(.info, .configLoaded)

        // One CA store for both transports; the relay's is the one that verifies against it. An https relay is
        // probed now, so that a missing CA bundle is logged (once) at start, not first at the first wake-up.
        let trustStore = TrustStore(environment: environment, logger: logger)
        if CurlTransport.verifiesAgainstCAs(HTTPRequest(url: configuration.relayBaseURL)) { _ = trustStore.current() }
        var dependencies = serviceDependencies(
            configuration: configuration, environment: environment, home: home, access: access,
            syncthingTransport: CurlTransport(trustStore: trustStore),
            relayTransport: CurlTransport(trustStore: trustStore),
            logger: logger, monitor: monitor, clock: runtime)
        dependencies.printFatal = { printFatal([$0], format: configuration.logFormat, environment: environment) }
        let settings = Engine.Settings(configuration: configuration, relayTimeout: RelayTimeouts.request)
        let service = Service(dependencies: dependencies, settings: settings, runtime: runtime) { status in
            // _exit, not exit: the poll thread may still be inside libcurl, and atexit handlers (libcurl,
            // OpenSSL) running under it can abort. Logs are written unbuffered, so nothing is lost.
            _exit(status.rawValue)
        }
        service.start()
        parkMainThread()
    }

    /// What a service refused at start says, because another one runs for the same Syncthing instance (the same
    /// state file, whose lock the other holds); it exits 75.
    static let alreadyRunningLine = FatalLine(
        "another vaultsync-notify already runs for this Syncthing instance (the same environment, the same state "
            + "file); not starting a second one (exit 75: tried again later)",
        fix: "`vaultsync-notify --status` shows the running one: stop one of the two, or point this one at another "
            + "Syncthing instance", status: .temporary)

    /// The service's stderr line when it cannot reach Syncthing's access at start (75 or 78); a path only with
    /// `showingPath` (`stderrIsAPerson`).
    static func serviceFatalLine(_ error: SyncthingAccessError, showingPath: Bool) -> FatalLine {
        FatalLine(error.message(showingPath: showingPath), fix: error.fix, status: error.status)
    }

    /// The service's two text lines for `serviceFatalLine`.
    static func serviceFatalText(_ error: SyncthingAccessError, showingPath: Bool) -> String {
        serviceFatalLine(error, showingPath: showingPath).text
    }

    /// Prints the lines a process ends on (`FatalLine.render`): in LOG_FORMAT's format (`format`, else read from
    /// `environment` alone, as before the configuration exists), under journald (`JOURNAL_STREAM` set) each line
    /// with its syslog priority, elsewhere a JSON object with the time first, as the log records' lines.
    static func printFatal(_ lines: [FatalLine], format: LogFormat? = nil, environment: [String: String]) {
        let journald = !(environment["JOURNAL_STREAM"] ?? "").isEmpty
        let format = format ?? Configuration.logFormat(environment: environment)
        let time = journald || format == .text ? nil : StderrLogSink.timestamp(SystemClock())
        printErr(FatalLine.render(lines, format: format, journald: journald, time: time))
    }

    /// True when standard error is a terminal outside journald: a person started the service by hand and may see
    /// the path SYNCTHING_CONFIG gave. A service's stderr (journald, `docker logs`, a launchd or OpenRC log file) is
    /// a log, and a log names no path.
    static func stderrIsAPerson(_ environment: [String: String]) -> Bool {
        isatty(2) == 1 && (environment["JOURNAL_STREAM"] ?? "").isEmpty
    }

    /// Keeps the main thread asleep for the rest of the process; the service runs on its own Dispatch queues and
    /// ends the process with `_exit`. Not `dispatchMain()`: nothing runs on the main queue, and dispatchMain ends the
    /// main thread with `pthread_exit`, which unwinds that thread's stack through the unwind tables the release
    /// build leaves out (docs/benchmarks.md, "Unwind tables").
    private static func parkMainThread() -> Never {
        while true { pause() }
    }

    /// The running service's dependencies, wired as the process wires them once Syncthing's access is known: the
    /// Syncthing client on `access` over `syncthingTransport` (cancelled at shutdown), the relay client at RELAY_URL
    /// over `relayTransport`, re-reads of config.xml and the environment without the first-boot wait
    /// (`resolveWithoutWait`), and METRICS_FILE; `clock` is the service's runtime (the relay client reads its wall
    /// clock). The simulator builds its service here too, with its own transports, file system and runtime, and the
    /// defects it plants (`PlantedDefects`; none in any other build).
    package static func serviceDependencies(
        configuration: Configuration, environment: [String: String], home: String?, access: SyncthingAccess,
        syncthingTransport: any HTTPTransport, relayTransport: any HTTPTransport, logger: Logger,
        monitor: ServiceMonitor, fileSystem: some ConfigFileSystem = SystemFileSystem(),
        load: @escaping @Sendable (String) throws(ConfigFileError) -> SyncthingGUIConfig = SyncthingConfigFile.load,
        clock: any HostClock, planted: PlantedDefects = .none
    ) -> Service.Dependencies {
        var dependencies = Service.Dependencies(
            syncthing: SyncthingClient(transport: syncthingTransport, access: access),
            relay: RelayClient(
                transport: relayTransport, baseURL: configuration.relayBaseURL, clock: clock, planted: planted),
            cancelSyncthing: { syncthingTransport.cancel() },
            rereadAccess: { resolveWithoutWait(configuration, environment, home, fileSystem: fileSystem, load: load) },
            logger: logger, monitor: monitor, metricsFile: configuration.metricsFile.map { MetricsFile(path: $0) })
        dependencies.planted = planted
        return dependencies
    }

    /// Re-reads config.xml and the environment without the first-boot wait (the service's one re-read path).
    package static func resolveWithoutWait(
        _ configuration: Configuration, _ environment: [String: String], _ home: String?,
        fileSystem: some ConfigFileSystem = SystemFileSystem(),
        load: (String) throws(ConfigFileError) -> SyncthingGUIConfig = SyncthingConfigFile.load
    ) -> Result<SyncthingAccess, SyncthingAccessError> {
        var c = configuration
        c.configWait = .zero
        return SyncthingAccess.resolve(
            configuration: c, environment: environment, home: home, fileSystem: fileSystem, load: load)
    }

    /// What `--check-config` prints and its exit status.
    struct CheckResult: Equatable {
        var status: ExitStatus
        /// One line on success.
        var stdout: String?
        /// The service's own fatal lines otherwise.
        var problems: [FatalLine] = []

        /// `problems` as text (LOG_FORMAT=text), nil when there are none.
        var stderr: String? {
            problems.isEmpty ? nil : FatalLine.render(problems, format: .text, journald: false, time: nil)
        }
    }

    /// `--check-config`: the environment (`checkEnvironment`: every invalid variable at once) and config.xml (located
    /// and parsed by `SyncthingAccess.resolve`, the service's own code) without the first-boot wait and without any
    /// network call.
    ///
    /// - Returns: `.ok` (0) and one stdout line saying where the address and the key come from (and config.xml's
    ///   path, when it is read; never the key); else the status the service would exit with and the same lines it
    ///   would print: `.configuration` (78) for invalid variables or an unusable config.xml, `.temporary` (75)
    ///   when config.xml is not there yet (`SyncthingAccessError.status`).
    static func checkConfig(
        environment: [String: String], fileSystem: some ConfigFileSystem = SystemFileSystem(),
        caFileSystem: some TrustStoreFileSystem = SystemFileSystem(),
        load: (String) throws(ConfigFileError) -> SyncthingGUIConfig = SyncthingConfigFile.load(path:)
    ) -> CheckResult {
        var configuration: Configuration
        switch checkEnvironment(environment, fileSystem: caFileSystem) {
        case .success(let c): configuration = c
        case .failure(let problems):
            return CheckResult(status: .configuration, problems: problems.lines)
        }
        configuration.configWait = .zero
        let home = ConfigLocator.homeDirectory(environment: environment)
        switch SyncthingAccess.resolve(
            configuration: configuration, environment: environment, home: home, fileSystem: fileSystem,
            clock: SystemClock(), load: load)
        {
        case .success(let access):
            var line =
                "vaultsync-notify: configuration OK (Syncthing address from \(access.source.origin), API key from "
                + (access.keySource == .configFile ? "config.xml" : access.keySource.origin)
            if let path = access.configFilePath, access.source == .configFile || access.keySource == .configFile {
                line += "; config.xml at \(path)"
            }
            return CheckResult(status: .ok, stdout: line + ")")
        case .failure(let error):
            return CheckResult(
                status: error.status, problems: [FatalLine(error.message, fix: error.fix, status: error.status)])
        }
    }

    /// Every reason the environment cannot run the service, each as `fatalText`'s two lines.
    package struct EnvironmentProblems: Error, Equatable {
        /// `(message, fix)` per problem, in the order found.
        package var problems: [(message: String, fix: String)]

        /// One line per problem (exit 78).
        package var lines: [FatalLine] { problems.map { FatalLine($0.message, fix: $0.fix, status: .configuration) } }

        package var text: String { FatalLine.render(lines, format: .text, journald: false, time: nil) }

        package static func == (a: Self, b: Self) -> Bool { a.text == b.text }
    }

    /// The service's environment checks, all at once: every invalid variable (`Configuration.parseAll`), a
    /// METRICS_FILE where the file could never be written (`MetricsFilePlace.problem`), then a CA variable that is
    /// set but names nothing usable (`TrustStore.resolve`: no fallback, so no https peer could ever be verified).
    package static func checkEnvironment(
        _ environment: [String: String], fileSystem: some TrustStoreFileSystem = SystemFileSystem(),
        isMacOS: Bool = ConfigLocator.isMacOS, metricsPlace: (String) -> MetricsFilePlace = MetricsFile.place(of:)
    ) -> Result<Configuration, EnvironmentProblems> {
        let survey = Configuration.parseAll(environment: environment)
        var problems = survey.errors.map { (message: $0.message, fix: $0.fix) }
        if let path = survey.remainder?.metricsFile, let problem = metricsPlace(path).problem {
            let error = ConfigurationError(.metricsFile, problem)
            problems.append((error.message, error.fix))
        }
        // Each CA variable alone, so that both are named when both are unusable (the store reports the first).
        for variable in CAVariable.allCases where !isMacOS {
            let alone = environment[variable.rawValue].map { [variable.rawValue: $0] } ?? [:]
            if case .unusable = TrustStore.resolve(environment: alone, fileSystem: fileSystem) {
                problems.append((variable.unusableMessage, variable.unusableFix))
            }
        }
        guard let configuration = survey.remainder, problems.isEmpty else {
            return .failure(EnvironmentProblems(problems: problems))
        }
        return .success(configuration)
    }

    /// The two stderr lines of a fatal error, in the doctor's shape: `vaultsync-notify: <message>` and
    /// `  fix: <fix>; run `vaultsync-notify --doctor` for details` (the fix's closing full stop dropped).
    static func fatalText(_ message: String, fix: String) -> String {
        FatalLine(message, fix: fix, status: .configuration).text
    }

    static func printOut(_ text: String) { writeFully(1, text + "\n") }

    package static func printErr(_ text: String) { writeFully(2, text + "\n") }
}
