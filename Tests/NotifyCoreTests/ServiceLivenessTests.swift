import Testing

@testable import NotifyCore

/// Whether a state file's writer still runs, decided from the reader's facts (`ServiceState.liveness`), and the
/// verdict the state file alone gives (`HealthVerdict.fromStateFile`).
@Suite("Liveness of a state file's writer")
struct ServiceLivenessTests {
    static let now: Int64 = 1_718_000_100
    static let writer = ServiceWriter(pid: 4242, start: 987_654)

    /// A file written 5 s ago, its last poll 5 s ago.
    static func fresh(writer: ServiceWriter? = writer) -> ServiceState {
        ServiceState(lastPoll: now - 5, relay: .delivered, started: now - 60, updated: now - 5, writer: writer)
    }

    @Test(
        "a file with pid: the lock or the process decides at once, whatever the file's age",
        arguments: [
            (WriterProbe.Lock.held, WriterProbe.Process.alive, ServiceLiveness.running),
            (.held, .gone, .running),  // another pid namespace: the lock still tells
            (.held, .unknown, .running),
            (.free, .alive, .running),  // the lock file was replaced under a live writer
            (.free, .gone, .stoppedWithoutFarewell),
            (.free, .unknown, .stoppedWithoutFarewell),
            (.untestable, .alive, .running),
            (.untestable, .gone, .stoppedWithoutFarewell),
        ])
    func withPid(lock: WriterProbe.Lock, process: WriterProbe.Process, expected: ServiceLiveness) {
        let probe = WriterProbe(lock: lock, process: process)
        #expect(Self.fresh().liveness(probe, now: Self.now) == expected)
        // Ten minutes without a write changes nothing: the process is asked, not the clock.
        #expect(Self.fresh().liveness(probe, now: Self.now + 600) == expected)
    }

    @Test("nothing to tell from, or no pid (an older writer): the age rule, as before")
    func ageRule() {
        let old = Self.fresh(writer: nil)
        #expect(old.liveness(.unknown, now: Self.now) == .running)
        #expect(old.liveness(.unknown, now: Self.now + ServiceState.maxPollAge + 10) == .outOfDate)
        // A lock or a process says nothing about a file whose writer held no lock.
        #expect(old.liveness(WriterProbe(lock: .free, process: .gone), now: Self.now) == .running)
        #expect(Self.fresh().liveness(.unknown, now: Self.now) == .running)
        #expect(Self.fresh().liveness(.unknown, now: Self.now + ServiceState.maxPollAge + 10) == .outOfDate)
    }

    @Test("the state file alone: missing, unreadable, its writer gone, a stale poll, healthy")
    func verdictFromStateFile() {
        let alive = WriterProbe(lock: .held, process: .alive)
        let gone = WriterProbe(lock: .free, process: .gone)
        #expect(HealthVerdict.fromStateFile(.missing, probe: .unknown, now: Self.now) == .noState)
        #expect(HealthVerdict.fromStateFile(.unreadable, probe: .unknown, now: Self.now) == .unreadable)
        #expect(HealthVerdict.fromStateFile(.found(Self.fresh()), probe: alive, now: Self.now) == .healthy)
        #expect(HealthVerdict.fromStateFile(.found(Self.fresh()), probe: gone, now: Self.now) == .notRunning)
        // Alive, but no successful poll for longer than the service allows itself.
        let later = Self.now + ServiceState.maxPollAge + 1
        #expect(HealthVerdict.fromStateFile(.found(Self.fresh()), probe: alive, now: later) == .stale)
        #expect(HealthVerdict.fromStateFile(.found(Self.fresh(writer: nil)), probe: .unknown, now: later) == .stale)
    }

    @Test("pid and pid_start round-trip; a file without them (an older writer) reads as before")
    func encoding() {
        let state = Self.fresh()
        let text = state.encoded()
        #expect(text.hasSuffix("pid=4242\npid_start=987654\n"))
        #expect(ServiceState.decode(text) == state)
        let noStart = ServiceState(lastPoll: 5, writer: ServiceWriter(pid: 7, start: nil))
        #expect(ServiceState.decode(noStart.encoded()) == noStart)
        #expect(ServiceState.decode("vaultsync-notify-state 1\nlast_poll=5\nrelay=none\n")?.writer == nil)
        // A pid that cannot be one leaves the writer unknown, as any later key's bad value does.
        for bad in ["pid=0", "pid=-1", "pid=99999999999", "pid=x"] {
            let decoded = ServiceState.decode("vaultsync-notify-state 1\nlast_poll=5\n\(bad)\npid_start=3\n")
            #expect(decoded != nil && decoded?.writer == nil, "\(bad)")
        }
    }

    @Test(
        "garbage, a wrong header or more than maxBytes is unreadable, not missing",
        arguments: [
            "hello", "", "vaultsync-notify-state 2\nlast_poll=5\n", "vaultsync-notify-state 1\nlast_poll=soon\n",
            "\u{0}\u{1}\u{2}", "vaultsync-notify-state 1\n" + String(repeating: "x=1\n", count: 1100),
        ])
    func unreadable(text: String) {
        #expect(StateFileRead.classify(Array(text.utf8)) == .unreadable)
    }

    @Test("a state file this version writes is read")
    func readable() {
        #expect(StateFileRead.classify(Array(Self.fresh().encoded().utf8)) == .found(Self.fresh()))
    }

    @Test(
        "/proc/<pid>/stat: field 22, counted after the command name's last parenthesis",
        arguments: [
            ("1234 (vaultsync-notify) S 1 1234 1234 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 3 0 987654 1 2 3", 987_654),
            ("77 (a) b) (c) R 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 42 9 9", 42),
            ("77 (sp ace) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5", 5),
        ] as [(String, Int64)])
    func processStat(line: String, start: Int64) {
        #expect(ProcessStat.startTicks(Array(line.utf8)) == start)
    }

    @Test(
        "a stat line without field 22, or without a number there, gives nothing",
        arguments: [
            "", "1234 vaultsync-notify S 1", "77 (a) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0",
            "77 (a) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 x1",
        ])
    func processStatMalformed(line: String) {
        #expect(ProcessStat.startTicks(Array(line.utf8)) == nil)
    }

    @Test("a killed process its parent has not reaped yet (a zombie) or a dead one is no running writer")
    func zombie() {
        let running = "1234 (vaultsync-notify) S 1 1234 1234 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 3 0 987654 1 2 3"
        #expect(ProcessStat.runningStartTicks(Array(running.utf8)) == 987_654)
        for state in ["Z", "X", "x"] {
            let ended = running.replacingOccurrences(of: ") S ", with: ") \(state) ")
            #expect(ProcessStat.startTicks(Array(ended.utf8)) == 987_654, "the start stays in the entry")
            #expect(ProcessStat.runningStartTicks(Array(ended.utf8)) == nil, "\(state)")
        }
    }

    @Test("the headlines: stopped without a farewell, an unreadable file; neither reads as running")
    func headlines() {
        let gone = StatusReport(
            state: Self.fresh(), health: .notRunning, now: Self.now, liveness: .stoppedWithoutFarewell)
        #expect(gone.text() == "vaultsync-notify: not running (the service stopped without a farewell)")
        #expect(!gone.running && gone.exitStatus == .checkFailed)
        #expect(gone.json().contains("\"health\" : \"not-running\""))
        let unreadable = StatusReport(state: nil, health: .unreadable, now: Self.now)
        #expect(unreadable.text().hasPrefix("vaultsync-notify: unreadable state file"))
        #expect(!unreadable.text().contains("no state file"))
        #expect(!unreadable.running && unreadable.exitStatus == .checkFailed)
        // A live writer whose file was not rewritten for a while still runs (a long wait on Syncthing).
        let slow = StatusReport(state: Self.fresh(), health: .stale, now: Self.now + 600, liveness: .running)
        #expect(slow.running)
        #expect(slow.text().hasPrefix("vaultsync-notify: unhealthy: the last successful Syncthing event poll was"))
    }
}
