import NotifyCore

extension Doctor {
    /// What `config.environment` found: the configuration to check the rest with, and what is wrong with it.
    struct ParsedEnvironment {
        /// The configuration, parsed without the invalid variables; nil when even that failed.
        var configuration: Configuration?
        /// The environment without the invalid variables (RELAY_URL replaced by a placeholder when invalid).
        var environment: [String: String]
        /// Why RELAY_URL is unusable, reported under relay.url.
        var relayProblem: ConfigurationError?
        /// An invalid Syncthing variable, which leaves Syncthing unchecked.
        var blockingVariable: ConfigVariable?
        /// The `config.environment` check.
        var check: DoctorCheck
    }

    /// Every invalid variable is reported; parsing goes on without it (RELAY_URL is replaced by a placeholder and
    /// reported under relay.url), so that the other checks still run. A METRICS_FILE the service would refuse at
    /// start (`MetricsFilePlace.problem`, looked at through `metricsPlace`) is among them, as in `--check-config`.
    static func parseEnvironment(
        _ environment: [String: String], metricsPlace: (String) -> MetricsFilePlace = MetricsFile.place(of:)
    ) -> ParsedEnvironment {
        let survey = Configuration.parseAll(environment: environment)
        let relayProblem = survey.errors.first { $0.variable == .relayURL }
        var problems = survey.errors.filter { $0.variable != .relayURL }
        if let path = survey.remainder?.metricsFile, let problem = metricsPlace(path).problem {
            problems.append(ConfigurationError(.metricsFile, problem))
        }
        return ParsedEnvironment(
            configuration: survey.remainder, environment: survey.environment, relayProblem: relayProblem,
            blockingVariable: DoctorVerdict.syncthingBlocked(by: problems.map(\.variable)),
            check: environmentCheck(problems))
    }

    /// `config.environment`.
    private static func environmentCheck(_ problems: [ConfigurationError]) -> DoctorCheck {
        let verdict = DoctorVerdict.configEnvironment(problems: problems.count)
        if verdict == .pass {
            return .init(
                .configEnvironment, verdict,
                "every variable that is set is valid (RELAY_URL is checked under relay.url)")
        }
        return .init(
            .configEnvironment, verdict, problems.map(\.message).joined(separator: "; "),
            fix: "Correct the variable\(problems.count == 1 ? "" : "s") named above; "
                + "`vaultsync-notify --help` lists every variable and its default.")
    }

    /// The Syncthing checks, all skipped: the environment could not be parsed, or a Syncthing variable is invalid.
    static func syncthingNotChecked(_ parsed: ParsedEnvironment) -> [DoctorCheck] {
        let why =
            parsed.configuration == nil
            ? "not checked: the environment could not be parsed"
            : "not checked: \(parsed.blockingVariable?.rawValue ?? "a variable") is invalid (see config.environment)"
        let names: [DoctorCheck.Name] = [
            .configFile, .addressSource, .reachable, .apiKey, .tlsPin, .deviceID, .eventStream,
        ]
        return names.map { .init($0, .skip, why) }
    }
}
