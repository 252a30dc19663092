import NotifyCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The executable's whole behaviour: parse the command line, pick the mode, and run it to an exit status (the service
/// itself: `ServiceLifecycle`).
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
            ServiceLifecycle.run(environment: environment)
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

    /// The service's fatal line when it cannot reach Syncthing's access at start (75 or 78), as `StartupMachine`
    /// words it; a path only with `showingPath` (`StartupMachine.showsPath`).
    static func serviceFatalText(_ error: SyncthingAccessError, showingPath: Bool) -> String {
        StartupMachine.fatalLine(error.startupProblem, showingPath: showingPath).text
    }

    /// Prints the lines a process ends on (`FatalPrinter`): in LOG_FORMAT's format, read from `environment` alone.
    static func printFatal(_ lines: [FatalLine], environment: [String: String]) {
        FatalPrinter(environment: environment).print(lines)
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
