import Testing

@testable import NotifyCore

/// `StartupMachine` fed what each step found, as timelines: the next step, or how the process ends (status, records,
/// fatal lines and their journald priority, farewell).
@Suite("Start-up machine: environment, lock, config.xml, hand-over")
struct StartupMachineTests {
    static let plan = StartupMachine.Plan(configWait: .seconds(30), relayVerifiedAgainstCAs: true)

    static let notThereYet = StartupMachine.ConfigProblem(
        code: .configNotFound, status: .temporary,
        message: "Syncthing's config.xml is not there (yet) at the path SYNCTHING_CONFIG names",
        messageNamingPath:
            "Syncthing's config.xml is not there (yet) at /srv/st/config.xml, the path SYNCTHING_CONFIG names",
        fix: "Nothing to change if Syncthing is still starting.")

    static let notAFile = StartupMachine.ConfigProblem(
        code: .configUnreadable, status: .configuration,
        message: "SYNCTHING_CONFIG names something that is not a regular file",
        messageNamingPath: "SYNCTHING_CONFIG names /dev/null, which is not a regular file",
        fix: "Point SYNCTHING_CONFIG at config.xml itself or at the directory that holds it.")

    /// A machine past the environment check and the lock (`lock`), waiting for config.xml.
    static func awaiting(
        lock: StartupMachine.Lock = .acquired, stderrIsTerminal: Bool = false, journald: Bool = false
    ) -> StartupMachine {
        var m = StartupMachine(stderrIsTerminal: stderrIsTerminal, journald: journald)
        _ = m.handle(.environmentValid(plan))
        _ = m.handle(.lock(lock))
        return m
    }

    static func ending(_ next: StartupMachine.Next) -> StartupMachine.Ending? {
        if case .end(let ending) = next { ending } else { nil }
    }

    @Test("the whole start-up: environment, lock, `starting`, the wait bounded by itself plus a read, hand-over")
    func happyPath() {
        var m = StartupMachine(stderrIsTerminal: false, journald: false)
        #expect(m.begin() == .checkEnvironment)
        #expect(m.handle(.environmentValid(Self.plan)) == .lockStateFile)
        #expect(
            m.handle(.lock(.acquired))
                == .awaitConfig(
                    StartupMachine.AwaitConfig(
                        records: [LogRecord(.info, .starting)], namesWriter: true, wait: .seconds(30),
                        bound: .seconds(45))))
        #expect(
            m.handle(.configLoaded)
                == .startService(
                    StartupMachine.StartService(records: [LogRecord(.info, .configLoaded)], probeRelayCAs: true)))
    }

    @Test("no wait: the step is bounded by one Syncthing request; a plain-http relay's CA store is not read at start")
    func noWaitPlainRelay() {
        var m = StartupMachine(stderrIsTerminal: false, journald: false)
        _ = m.handle(.environmentValid(StartupMachine.Plan(configWait: .zero, relayVerifiedAgainstCAs: false)))
        guard case .awaitConfig(let step) = m.handle(.lock(.acquired)) else {
            Issue.record("no config.xml wait after the lock")
            return
        }
        #expect(step.wait == .zero)
        #expect(step.bound == SyncthingTimeouts.request)
        #expect(
            m.handle(.configLoaded)
                == .startService(.init(records: [.init(.info, .configLoaded)], probeRelayCAs: false)))
    }

    @Test("no lock to be had (no state file, no locks on that file system) goes on, without naming a writer")
    func lockUnavailable() {
        var m = StartupMachine(stderrIsTerminal: false, journald: false)
        _ = m.handle(.environmentValid(Self.plan))
        guard case .awaitConfig(let step) = m.handle(.lock(.unavailable)) else {
            Issue.record("the start-up stopped without a lock")
            return
        }
        #expect(!step.namesWriter)
        #expect(step.records == [LogRecord(.info, .starting)])
    }

    @Test("an invalid environment: 78, one error line per problem, nothing logged, nothing to take down")
    func environmentInvalid() {
        var m = StartupMachine(stderrIsTerminal: true, journald: false)
        let problems = [
            StartupMachine.Problem(message: "RELAY_URL is not set", fix: "Set RELAY_URL."),
            StartupMachine.Problem(message: "LOG_LEVEL is not a level", fix: "Use debug, info, warn or error."),
        ]
        let ending = Self.ending(m.handle(.environmentInvalid(problems)))
        #expect(ending?.status == .configuration)
        #expect(ending?.records == [])
        #expect(ending?.farewell == [])
        #expect(ending?.fatal.map(\.message) == problems.map(\.message))
        #expect(ending?.fatal.allSatisfy { $0.status == .configuration && $0.level.syslogPriority == 3 } == true)
        #expect(
            ending?.fatal.first?.text
                == "vaultsync-notify: RELAY_URL is not set\n"
                + "  fix: Set RELAY_URL; run `vaultsync-notify --doctor` for details")
    }

    @Test("the lock held by another: 75, the warning line, no `starting`, and the other's state file stays")
    func lockHeld() {
        var m = StartupMachine(stderrIsTerminal: false, journald: true)
        _ = m.handle(.environmentValid(Self.plan))
        let ending = Self.ending(m.handle(.lock(.heldByAnother)))
        #expect(ending == StartupMachine.Ending(status: .temporary, fatal: [StartupMachine.alreadyRunningLine]))
        #expect(ending?.fatal.first?.level == .warn)
        #expect(ending?.fatal.first?.level.syslogPriority == 4)
        #expect(ending?.farewell.contains(.removeStateFile) == false)
    }

    @Test(
        "config.xml not there after the wait: 75, warn configNotThereYet, farewell removes the state file, no STOPPING")
    func configNotThereYet() {
        var m = Self.awaiting()
        let ending = Self.ending(m.handle(.configUnusable(Self.notThereYet)))
        #expect(ending?.status == .temporary)
        #expect(ending?.records == [LogRecord(.warn, .configNotThereYet, [.code(.configNotFound)])])
        #expect(ending?.fatal == [FatalLine(Self.notThereYet.message, fix: Self.notThereYet.fix, status: .temporary)])
        #expect(ending?.fatal.first?.level.syslogPriority == 4)
        #expect(ending?.farewell == [.removeStateFile, .metricsDown])
    }

    @Test("a path that cannot be a config.xml: 78, error configInvalid with the problem's code, the same farewell")
    func configInvalid() {
        var m = Self.awaiting(lock: .unavailable)
        let ending = Self.ending(m.handle(.configUnusable(Self.notAFile)))
        #expect(ending?.status == .configuration)
        #expect(ending?.records == [LogRecord(.error, .configInvalid, [.code(.configUnreadable)])])
        #expect(ending?.fatal.map(\.status) == [.configuration])
        #expect(ending?.fatal.first?.level.syslogPriority == 3)
        #expect(ending?.farewell == Engine.Exit.accessUnavailable(.configuration).farewell)
        #expect(ending?.farewell.contains(.notifyStopping) == false)
    }

    @Test(
        "the fatal line names SYNCTHING_CONFIG's path only on a terminal outside journald",
        arguments: [(true, false, true), (true, true, false), (false, false, false), (false, true, false)])
    func pathOnlyForAPerson(stderrIsTerminal: Bool, journald: Bool, named: Bool) {
        var m = Self.awaiting(stderrIsTerminal: stderrIsTerminal, journald: journald)
        let message = Self.ending(m.handle(.configUnusable(Self.notThereYet)))?.fatal.first?.message
        #expect(message == (named ? Self.notThereYet.messageNamingPath : Self.notThereYet.message))
        #expect(StartupMachine.showsPath(stderrIsTerminal: stderrIsTerminal, journald: journald) == named)
    }

    @Test("the log record never carries the path, whoever reads stderr")
    func recordNamesNoPath() {
        var m = Self.awaiting(stderrIsTerminal: true)
        let ending = Self.ending(m.handle(.configUnusable(Self.notThereYet)))
        #expect(ending?.records.first?.fields == [.code(.configNotFound)])
        #expect(ending?.fatal.first?.message.contains("/srv/st") == true)
    }

    @Test("a stop before the service started: 0, the idle stop's records, STOPPING=1 and the state file removed")
    func stoppedBeforeStart() {
        let ending = StartupMachine.stoppedBeforeStart
        #expect(ending.status == .ok)
        #expect(ending.records == Engine.idleStopRecords)
        #expect(ending.records.map(\.message) == [.shutdownRequested, .stopped])
        #expect(ending.fatal.isEmpty)
        #expect(ending.farewell == Engine.Exit.stopped.farewell)
        #expect(ending.farewell.contains(.notifyStopping))
        #expect(ending.farewell.contains(.removeStateFile))
    }

    @Test(
        "every ending's status is the one its fatal lines carry",
        arguments: [StartupMachineTests.notThereYet, StartupMachineTests.notAFile])
    func fatalLineStatusMatches(problem: StartupMachine.ConfigProblem) {
        var m = Self.awaiting()
        let ending = Self.ending(m.handle(.configUnusable(problem)))
        #expect(ending?.status == problem.status)
        #expect(ending?.fatal.map(\.status) == [problem.status])
    }
}
