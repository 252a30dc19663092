/// The service's start-up, from the environment check to the running service, decided without I/O or a clock. The
/// runtime (`ServiceLifecycle`) carries out each `Next` and reports what it found with `handle(_:)`, until the
/// machine says to start the service or how the process ends.
///
/// The steps, in order:
/// 1. `checkEnvironment`: every invalid variable at once ends with 78 and one fatal line each.
/// 2. `lockStateFile`: a lock another process holds ends with 75 (another service runs for the same Syncthing
///    instance; the service manager starts this one again, and it runs once the other has stopped). No lock to be had
///    (no state file, a file system without locks) is no reason to stop.
/// 3. `awaitConfig`: log `starting`, then wait for config.xml and read it. Not there yet after the wait ends with 75
///    and a warning, anything else unusable with 78 and an error; both remove the wait's state file.
/// 4. `startService`: log `configuration loaded` and hand over to the running service (`Engine`), whose exits are
///    its own (`Engine.Exit`).
///
/// A stop signal during the start-up ends it with `stoppedBeforeStart`, whatever step it is in.
package struct StartupMachine: Sendable, Equatable {
    /// One problem the environment check found: what is wrong (naming the variable, never its value) and the fix.
    package struct Problem: Sendable, Equatable {
        package var message: String
        package var fix: String

        package init(message: String, fix: String) {
            self.message = message
            self.fix = fix
        }
    }

    /// What the start-up needs of a valid environment.
    package struct Plan: Sendable, Equatable {
        /// How long a missing config.xml is waited for (SYNCTHING_CONFIG_WAIT_SECONDS).
        package var configWait: Duration
        /// The relay is reached over https and verified against the CA store (no pinned key).
        package var relayVerifiedAgainstCAs: Bool

        package init(configWait: Duration, relayVerifiedAgainstCAs: Bool) {
            self.configWait = configWait
            self.relayVerifiedAgainstCAs = relayVerifiedAgainstCAs
        }
    }

    /// What taking the state file's lock came to.
    package enum Lock: Sendable, Equatable {
        case acquired
        /// Another process holds it: another service runs for this Syncthing instance.
        case heldByAnother
        /// No lock could be taken (the file cannot be made, a file system without locks), or there is no state file.
        case unavailable
    }

    /// Why config.xml gave no access to Syncthing, as the runtime words it.
    package struct ConfigProblem: Sendable, Equatable {
        /// Stable, log-safe code (the only thing the log records carry).
        package var code: ErrorCode
        /// `.temporary` (75) while config.xml may still appear, else `.configuration` (78):
        /// `ConfigWait.exitStatus(mayStillAppear:)`.
        package var status: ExitStatus
        /// What is wrong, one line, naming no path.
        package var message: String
        /// The same, naming the path SYNCTHING_CONFIG gave when the problem is about one (else `message`).
        package var messageNamingPath: String
        package var fix: String

        package init(code: ErrorCode, status: ExitStatus, message: String, messageNamingPath: String, fix: String) {
            self.code = code
            self.status = status
            self.message = message
            self.messageNamingPath = messageNamingPath
            self.fix = fix
        }
    }

    /// What a step found.
    package enum Found: Sendable, Equatable {
        case environmentValid(Plan)
        /// Every problem, in the order found (at least one).
        case environmentInvalid([Problem])
        case lock(Lock)
        case configLoaded
        case configUnusable(ConfigProblem)
    }

    /// What to carry out next.
    package enum Next: Sendable, Equatable {
        /// Check the environment; answer `environmentValid` or `environmentInvalid`.
        case checkEnvironment
        /// Find the state file and take its lock, held for the life of the process; answer `lock`.
        case lockStateFile
        /// Answer `configLoaded` or `configUnusable`.
        case awaitConfig(AwaitConfig)
        /// The start-up is over: build the service and start it.
        case startService(StartService)
        /// The process ends here.
        case end(Ending)
    }

    /// The config.xml wait and read.
    package struct AwaitConfig: Sendable, Equatable {
        /// Logged first.
        package var records: [LogRecord]
        /// This process holds the state file's lock, so the state file names it as its writer.
        package var namesWriter: Bool
        /// How long a missing config.xml is waited for (told to systemd and the state file).
        package var wait: Duration
        /// The watchdog's bound on the whole step: the wait, then the read, given as long as a Syncthing request
        /// (a slow NAS disk).
        package var bound: Duration
    }

    /// The hand-over to the running service.
    package struct StartService: Sendable, Equatable {
        /// Logged first.
        package var records: [LogRecord]
        /// Read the CA store now: a missing CA bundle is then logged (once) at start, not first at the first wake-up.
        package var probeRelayCAs: Bool
    }

    /// How the process ends, carried out in this order: `records` logged, `fatal` printed to stderr (in LOG_FORMAT's
    /// format; under journald each line with the syslog priority of `FatalLine.level`), `farewell` carried out
    /// (`Engine.Exit.Farewell`'s order), then the exit with `status`.
    package struct Ending: Sendable, Equatable {
        package var status: ExitStatus
        package var records: [LogRecord]
        package var fatal: [FatalLine]
        package var farewell: Set<Engine.Exit.Farewell>

        package init(
            status: ExitStatus, records: [LogRecord] = [], fatal: [FatalLine] = [],
            farewell: Set<Engine.Exit.Farewell> = []
        ) {
            self.status = status
            self.records = records
            self.fatal = fatal
            self.farewell = farewell
        }
    }

    private enum Phase: Sendable, Equatable {
        case checkingEnvironment
        case locking(Plan)
        case awaitingConfig(Plan)
        case over
    }

    private var phase = Phase.checkingEnvironment
    private let showsPath: Bool

    /// - Parameters:
    ///   - stderrIsTerminal: standard error is a terminal (`isatty(2)`).
    ///   - journald: standard error goes to journald (`JOURNAL_STREAM` set).
    package init(stderrIsTerminal: Bool, journald: Bool) {
        showsPath = Self.showsPath(stderrIsTerminal: stderrIsTerminal, journald: journald)
    }

    /// The first step.
    package func begin() -> Next { .checkEnvironment }

    /// What comes after `found`. Each step's answer is expected in the order of the steps; one out of order is a
    /// programming error and stops the process.
    package mutating func handle(_ found: Found) -> Next {
        switch (phase, found) {
        case (.checkingEnvironment, .environmentValid(let plan)):
            phase = .locking(plan)
            return .lockStateFile
        case (.checkingEnvironment, .environmentInvalid(let problems)):
            return end(
                Ending(
                    status: .configuration,
                    fatal: problems.map { FatalLine($0.message, fix: $0.fix, status: .configuration) }))
        case (.locking, .lock(.heldByAnother)):
            return end(Ending(status: Self.alreadyRunningLine.status, fatal: [Self.alreadyRunningLine]))
        case (.locking(let plan), .lock(let lock)):
            phase = .awaitingConfig(plan)
            return .awaitConfig(
                AwaitConfig(
                    records: [LogRecord(.info, .starting)], namesWriter: lock == .acquired, wait: plan.configWait,
                    bound: plan.configWait + SyncthingTimeouts.request))
        case (.awaitingConfig(let plan), .configLoaded):
            phase = .over
            return .startService(
                StartService(records: [LogRecord(.info, .configLoaded)], probeRelayCAs: plan.relayVerifiedAgainstCAs))
        case (.awaitingConfig, .configUnusable(let problem)):
            // Either way the wait's state file goes (`accessUnavailable`'s farewell), so that --status finds no
            // instance instead of a wait.
            let exit = Engine.Exit.accessUnavailable(problem.status)
            let record =
                problem.status == .temporary
                ? LogRecord(.warn, .configNotThereYet, [.code(problem.code)])
                : LogRecord(.error, .configInvalid, [.code(problem.code)])
            return end(
                Ending(
                    status: exit.status, records: [record], fatal: [Self.fatalLine(problem, showingPath: showsPath)],
                    farewell: exit.farewell))
        default:
            preconditionFailure("start-up: \(found) does not answer the step in \(phase)")
        }
    }

    private mutating func end(_ ending: Ending) -> Next {
        phase = .over
        return .end(ending)
    }

    /// A stop signal before the service started (during the config.xml wait, up to SYNCTHING_CONFIG_WAIT_SECONDS):
    /// 0, after the same records and the same farewell as every other stop with nothing pending (`STOPPING=1`, the
    /// wait's state file removed). Nothing can be pending yet.
    package static let stoppedBeforeStart = Ending(
        status: Engine.Exit.stopped.status, records: Engine.idleStopRecords, farewell: Engine.Exit.stopped.farewell)

    /// True when the fatal line of an unusable config.xml may name SYNCTHING_CONFIG's path: standard error is a
    /// terminal outside journald, so a person started the service by hand. A service's stderr (journald,
    /// `docker logs`, a launchd or OpenRC log file) is a log, and a log names no path.
    package static func showsPath(stderrIsTerminal: Bool, journald: Bool) -> Bool { stderrIsTerminal && !journald }

    /// The fatal line of an unusable config.xml (75 or 78); a path only with `showingPath`.
    package static func fatalLine(_ problem: ConfigProblem, showingPath: Bool) -> FatalLine {
        FatalLine(
            showingPath ? problem.messageNamingPath : problem.message, fix: problem.fix, status: problem.status)
    }

    /// The fatal line of a service refused at start because another one runs for the same Syncthing instance (the
    /// same state file, whose lock the other holds): 75.
    package static let alreadyRunningLine = FatalLine(
        "another vaultsync-notify already runs for this Syncthing instance (the same environment, the same state "
            + "file); not starting a second one (exit 75: tried again later)",
        fix: "`vaultsync-notify --status` shows the running one: stop one of the two, or point this one at another "
            + "Syncthing instance", status: .temporary)
}
