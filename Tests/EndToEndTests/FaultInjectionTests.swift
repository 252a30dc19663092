import Foundation
import Testing

/// The release binary against a scriptable FAKE Syncthing (Tests/Doubles/fake_syncthing.py), for the faults real
/// Syncthing cannot be made to produce on demand: oversized, cut and malformed event bodies, gaps, restarts, early
/// empty answers, a server that is not up yet, a wrong API key. The relay is the stand-in
/// (Tests/Doubles/relay_standin.py). Runs in the same loopback-only namespace as the real-Syncthing suite.
///
/// Timing: DEBOUNCE_SECONDS=1, so a wake-up is due about 1 s after its change; "within the debounce plus 3 s" is
/// checked as 4 s (plus the fake's control round trip). Every wait is for a condition with a deadline (a trigger, a
/// log line, a poll the fake is holding), except two kinds of fixed window: a quiet window after the condition,
/// which proves that nothing more arrives (an absence cannot be waited for), and the windows that count requests
/// to show that a fault does not make the sidecar spin.
@Suite(
    "Fault injection with a fake Syncthing", .serialized,
    .enabled(if: E2E.enabled, "run through scripts/test (it creates the loopback-only namespace)"))
final class FaultInjectionTests {
    let dir: URL
    let relay: Relay
    let apiKey = "fake-apikey-\(UUID().uuidString.prefix(12))"
    var fakes: [FakeSyncthingProcess] = []
    var sidecars: [Sidecar] = []

    /// A change after the debounce: 1 s debounce + 3 s.
    static let wakeWithin: TimeInterval = 4
    static let quiet: TimeInterval = 2

    init() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("vsn-faults-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        relay = try Relay(dir: dir)
    }

    deinit {
        for s in sidecars { s.stop() }
        for f in fakes { f.stop() }
        relay.stop()
        if ProcessInfo.processInfo.environment["VAULTSYNC_KEEP_E2E"] == nil {
            try? FileManager.default.removeItem(at: dir)
        }
    }

    // MARK: - Helpers

    func startFake(listenOnSignal: Bool = false) throws -> FakeSyncthingProcess {
        let f = try FakeSyncthingProcess(dir: dir, apiKey: apiKey, listenOnSignal: listenOnSignal)
        fakes.append(f)
        return f
    }

    func startSidecar(_ fake: FakeSyncthingProcess, key: String? = nil, env extra: [String: String] = [:]) throws
        -> Sidecar
    {
        var env: [String: String] = [
            "PATH": "/usr/bin:/bin", "HOME": dir.path, "RELAY_URL": relay.url, "SYNCTHING_API_URL": fake.url,
            "SYNCTHING_API_KEY": key ?? fake.apiKey, "DEBOUNCE_SECONDS": "1", "DEBOUNCE_MAX_SECONDS": "10",
            "STARTUP_ANNOUNCE": "false", "LOG_LEVEL": "debug", "RELAY_WINDOW_SECONDS": "0",
        ]
        env.merge(extra) { $1 }
        let s = try Sidecar(dir: dir, name: "sidecar-\(sidecars.count)", env: env)
        sidecars.append(s)
        return s
    }

    /// A fake and a sidecar that is connected and long-polling.
    func connected(env: [String: String] = [:]) throws -> (FakeSyncthingProcess, Sidecar) {
        let fake = try startFake()
        let s = try startSidecar(fake, env: env)
        try #require(s.waitConnected(15), "the sidecar did not connect: \(s.log)")
        // The first long poll is being held by the fake (a fault queued now answers it).
        try #require(fake.waitForHeldPoll(5), "no long poll after connecting: \(s.log)")
        return (fake, s)
    }

    /// Every identifier the sidecar saw, the relay's address, and the test's paths.
    func secrets(_ fake: FakeSyncthingProcess, extra: [String] = []) -> [String] {
        fake.secrets + [relay.url, "127.0.0.1:\(relay.port)", String(relay.port), dir.path] + extra
    }

    /// No log line carries an identifier (`Sidecar.leaks`, which blanks out the product's name first: "vault" is a
    /// folder ID).
    func expectNoLeaks(
        _ s: Sidecar, _ fake: FakeSyncthingProcess, extra: [String] = [],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let leaks = s.leaks(self.secrets(fake, extra: extra))
        #expect(leaks.isEmpty, "log lines carrying an identifier: \(leaks)", sourceLocation: sourceLocation)
        #expect(!s.lines.isEmpty, sourceLocation: sourceLocation)
    }

    /// Still running, then SIGTERM → exit 0 within 2 s (nothing pending).
    func expectCleanExit(_ s: Sidecar, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(s.process.isRunning, "the sidecar exited: \(s.log)", sourceLocation: sourceLocation)
        let (status, elapsed) = s.terminate()
        #expect(status == 0, sourceLocation: sourceLocation)
        #expect(elapsed < 2, sourceLocation: sourceLocation)
    }

    /// Waits for exactly `n` triggers: at least n within `timeout`, then still n after a quiet window.
    func expectTriggers(
        _ n: Int, within timeout: TimeInterval, _ comment: Comment,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(E2E.waitFor(timeout) { relay.triggers.count >= n }, comment, sourceLocation: sourceLocation)
        expectQuiet(triggers: n, comment, sourceLocation: sourceLocation)
    }

    /// Still exactly `n` triggers after `quiet` (longer than the debounce plus a delivery, so a wake-up already
    /// scheduled would land inside it). Call it once the condition that ends the expected activity was seen.
    func expectQuiet(triggers n: Int, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
        Thread.sleep(forTimeInterval: Self.quiet)
        #expect(relay.triggers.count == n, comment, sourceLocation: sourceLocation)
    }

    /// A poll answer that loses events (oversized, cut or malformed): one wake-up (re-sync from the head), no
    /// crash, and a later ordinary change still wakes.
    func lostPoll(fault: String, code: String) throws {
        let (fake, s) = try connected()
        try fake.setFaults(fault)
        // The fault answers the poll being held right now.
        #expect(E2E.waitFor(5) { fake.pendingFaults == 0 }, "the fault was not taken")
        expectTriggers(1, within: Self.wakeWithin + 1, "one re-sync wake-up")
        #expect(s.log.contains("code=\(code)"), "the failure's code is logged")
        #expect(s.log.contains("events were lost, re-syncing"))
        #expect(s.log.contains("reason=resync"))
        // The re-sync asked for the head: since=0&limit=1&timeout=0, after the failed poll.
        let heads = fake.eventRequests.filter { $0.query["since"] == "0" && $0.query["limit"] == "1" }
        #expect(heads.count >= 2, "head queries: at start and after the lost poll")
        #expect(s.process.isRunning)
        let changed = Date().timeIntervalSince1970
        try fake.append(#"{"type": "LocalIndexUpdated", "folder": "vault", "filenames": ["after-fault.md"]}"#)
        expectTriggers(2, within: Self.wakeWithin, "a normal change after the fault still wakes")
        try #require(relay.triggers.count >= 2)
        #expect(relay.triggers[1].t - changed < Self.wakeWithin)
        #expect(relay.triggers.allSatisfy { $0.body == "{\"device_id\": \"\(FakeSyncthingProcess.serverID)\"}" })
        expectCleanExit(s)
        expectNoLeaks(s, fake, extra: ["after-fault.md"])
    }

    // MARK: - Lost events

    @Test("oversized event body (20 MiB) → no crash, one re-sync wake-up, later events still wake")
    func oversizedBody() throws {
        try lostPoll(
            fault: #"[{"kind": "oversized", "bytes": 20971520, "match": "poll"}]"#,
            code: "transport.body-too-large")
    }

    @Test("chunked body cut after the 200 → no crash, one re-sync wake-up, later events still wake")
    func cutBody() throws {
        try lostPoll(fault: #"[{"kind": "cut", "bytes": 40, "match": "poll"}]"#, code: "transport.truncated")
    }

    @Test("malformed JSON → no crash, one re-sync wake-up, later events still wake")
    func malformedBody() throws {
        try lostPoll(fault: #"[{"kind": "malformed", "match": "poll"}]"#, code: "syncthing.malformed-response")
    }

    @Test("a gap in event ids → exactly one wake-up, even when the events after the gap would not wake")
    func gap() throws {
        let (fake, s) = try connected()
        try fake.skip(5)
        // In sync, so by itself it would not wake: only the lost events (ids 1…5) can.
        try fake.append(#"{"type": "FolderCompletion", "folder": "vault", "needBytes": 0}"#)
        expectTriggers(1, within: Self.wakeWithin + 1, "one wake-up for the gap")
        #expect(s.log.contains("events were lost, re-syncing"))
        // Consecutive ids again: read as an ordinary batch with nothing to wake for, so no more wake-ups.
        let batch = #"msg="events received" count=1 events=0"#
        let batches = s.count(batch)
        let lost = s.count("events were lost, re-syncing")
        try fake.append(#"{"type": "FolderCompletion", "folder": "vault", "needBytes": 0}"#)
        #expect(E2E.waitFor(5) { s.count(batch) > batches }, "the batch after the gap was read: \(s.log)")
        #expect(s.count("events were lost, re-syncing") == lost)
        expectQuiet(triggers: 1)
        expectCleanExit(s)
        expectNoLeaks(s, fake)
    }

    // MARK: - Restarts

    @Test(
        "Syncthing restarted (new startTime, ids from 1) → cursor re-placed, a new change wakes within debounce + 3 s")
    func restart() throws {
        let (fake, s) = try connected()
        // Move the cursor past 1, so that the new run's ids are at or below it.
        try fake.append(
            #"[{"type": "LocalIndexUpdated", "folder": "vault"}, {"type": "LocalIndexUpdated", "folder": "vault"}]"#)
        #expect(E2E.waitFor(Self.wakeWithin + 1) { relay.triggers.count == 1 }, "the change before the restart")
        #expect(fake.waitForHeldPoll(5), "a long poll after the change")
        // The held poll ends with a clean, early [] (an in-process restart), then startTime differs.
        try fake.restart(#"{"inflight": "empty"}"#)
        #expect(E2E.waitFor(5) { s.log.contains("Syncthing restarted, cursor reset") })
        expectTriggers(2, within: Self.wakeWithin + 1, "one wake-up for the restart (events may have been lost)")
        let changed = Date().timeIntervalSince1970
        try fake.append(#"{"type": "LocalIndexUpdated", "folder": "vault"}"#)
        try #require(E2E.waitFor(Self.wakeWithin) { relay.triggers.count >= 3 }, "a change after the restart wakes")
        #expect(relay.triggers[2].t - changed < Self.wakeWithin)
        expectQuiet(triggers: 3)
        expectCleanExit(s)
        expectNoLeaks(s, fake)
    }

    @Test("Syncthing killed (poll cut), down 1.5 s, back with a new startTime → reconnects, a new change wakes")
    func restartWithDowntime() throws {
        let (fake, s) = try connected()
        try fake.append(#"{"type": "LocalIndexUpdated", "folder": "vault"}"#)
        #expect(E2E.waitFor(Self.wakeWithin + 1) { relay.triggers.count == 1 }, "the change before the restart")
        #expect(fake.waitForHeldPoll(5), "a long poll after the change")
        try fake.restart(#"{"inflight": "cut", "down_seconds": 1.5}"#)
        #expect(E2E.waitFor(10) { s.log.contains("Syncthing restarted, cursor reset") })
        #expect(s.log.contains("Syncthing not reachable, retrying"))
        expectTriggers(2, within: Self.wakeWithin + 1, "one wake-up for the restart")
        let changed = Date().timeIntervalSince1970
        try fake.append(#"{"type": "LocalIndexUpdated", "folder": "vault"}"#)
        try #require(E2E.waitFor(Self.wakeWithin) { relay.triggers.count >= 3 }, "a change after the restart wakes")
        #expect(relay.triggers[2].t - changed < Self.wakeWithin)
        expectCleanExit(s)
        expectNoLeaks(s, fake)
    }

    // MARK: - A misbehaving server

    @Test("early empty answers that never stop → backoff (few polls in 5 s), no wake-up; recovers when they stop")
    func earlyEmptyAnswersBackOff() throws {
        let (fake, s) = try connected()
        let polls0 = fake.eventRequests.count
        let status0 = fake.statusRequests.count
        try fake.setFaults(#"[{"kind": "early_empty", "count": -1, "match": "poll"}]"#)
        // A counting window: how many requests the fault draws in 5 s.
        Thread.sleep(forTimeInterval: 5)
        let polls = fake.eventRequests.count - polls0
        let statuses = fake.statusRequests.count - status0
        #expect(polls < 20, "\(polls) /rest/events requests in 5 s")
        #expect(statuses < 20, "\(statuses) /rest/system/status requests in 5 s")
        #expect(polls >= 2, "it keeps polling")
        #expect(relay.triggers.isEmpty, "nothing changed and nothing was lost")
        #expect(s.process.isRunning)
        try fake.clearFaults()
        // The sidecar may be in its capped 5 s backoff: the change waits for the next poll.
        try fake.append(#"{"type": "LocalIndexUpdated", "folder": "vault"}"#)
        #expect(E2E.waitFor(5 + Self.wakeWithin + 1) { relay.triggers.count >= 1 })
        expectCleanExit(s)
        expectNoLeaks(s, fake)
    }

    // MARK: - Wake rules

    @Test("events outside WATCHED_FOLDERS and FolderCompletion with all needs 0 → no trigger")
    func nothingToWake() throws {
        let (fake, s) = try connected(env: ["WATCHED_FOLDERS": "vault"])
        let polls = fake.eventRequests.count
        try fake.append(
            #"""
            [{"type": "LocalIndexUpdated", "folder": "notes", "filenames": ["unwatched.md"]},
             {"type": "FolderCompletion", "folder": "notes", "needBytes": 4096, "needItems": 2},
             {"type": "FolderCompletion", "folder": "vault", "needBytes": 0, "needItems": 0, "needDeletes": 0},
             {"type": "LocalIndexUpdated", "folder": "notes"}]
            """#)
        #expect(E2E.waitFor(5) { s.log.contains("msg=\"events received\" count=4 events=0") }, "\(s.log)")
        // The next long poll starts once the batch was handled: any wake-up it caused is scheduled by then.
        #expect(fake.waitForHeldPoll(5, after: polls), "a long poll after the batch")
        #expect(!s.log.contains("wake-up scheduled"))
        expectQuiet(triggers: 0)
        expectCleanExit(s)
        expectNoLeaks(s, fake, extra: ["unwatched.md"])
    }

    @Test("FolderCompletion with needBytes > 0 in a watched folder → exactly one trigger")
    func completionNeedsData() throws {
        let (fake, s) = try connected(env: ["WATCHED_FOLDERS": "vault"])
        try fake.append(
            #"{"type": "FolderCompletion", "folder": "vault", "completion": 50, "needBytes": 6, "needItems": 0}"#)
        expectTriggers(1, within: Self.wakeWithin + 1, "one wake-up")
        #expect(s.log.contains("reason=change"))
        expectCleanExit(s)
        expectNoLeaks(s, fake)
    }

    // MARK: - Connecting

    @Test("Syncthing unreachable at start, then started → the sidecar connects and works, no exit")
    func unreachableAtStart() throws {
        let fake = try startFake(listenOnSignal: true)
        let s = try startSidecar(fake)
        #expect(E2E.waitFor(10) { s.log.contains("Syncthing not reachable, retrying") })
        #expect(s.log.contains("code=transport.connect"))
        // A quiet window: it does not exit while Syncthing stays down.
        #expect(!E2E.waitFor(2) { !s.process.isRunning }, "it waits for Syncthing instead of exiting: \(s.log)")
        #expect(!s.log.contains("connected to Syncthing"))
        fake.listen()
        // Reconnect backoff is capped at 5 s.
        #expect(s.waitConnected(8), "\(s.log)")
        #expect(fake.waitForHeldPoll(5), "a long poll after connecting")
        try fake.append(#"{"type": "LocalIndexUpdated", "folder": "vault"}"#)
        expectTriggers(1, within: Self.wakeWithin + 1, "a change after connecting wakes")
        expectCleanExit(s)
        expectNoLeaks(s, fake)
    }

    @Test("wrong API key (403 CSRF Error) → exit 78 with a clear line that does not contain the key")
    func wrongAPIKey() throws {
        let fake = try startFake()
        let wrongKey = "wrong-apikey-\(UUID().uuidString.prefix(12))"
        let s = try startSidecar(fake, key: wrongKey)
        #expect(E2E.waitFor(15) { !s.process.isRunning }, "\(s.log)")
        s.process.waitUntilExit()
        #expect(s.process.terminationStatus == 78)
        let line = try #require(s.lines.first { $0.contains("Syncthing rejected the API key") }, "\(s.log)")
        #expect(line.contains("level=error"))
        #expect(line.contains("code=syncthing.wrong-api-key"))
        #expect(!line.contains(wrongKey) && !line.contains(fake.apiKey))
        // The fatal line says where the key came from and how to fix it.
        #expect(
            s.log.contains(
                "vaultsync-notify: Syncthing rejected the API key from the environment (SYNCTHING_API_KEY)"),
            "\(s.log)")
        #expect(s.log.contains("  fix: Set SYNCTHING_API_KEY to the key in Syncthing's Settings > GUI > API Key"))
        #expect(s.log.contains("run `vaultsync-notify --doctor` for details"))
        #expect(fake.requests.allSatisfy { $0.status == 403 })
        #expect(fake.requests.count <= 3, "one try, one after re-reading the configuration")
        #expect(relay.triggers.isEmpty)
        expectNoLeaks(s, fake, extra: [wrongKey])
    }

    // MARK: - Signals (SignalPolicy)

    @Test("every signal the service ignores leaves it running and waking; SIGQUIT then stops it like SIGTERM")
    func ignoredSignalsAndSIGQUIT() throws {
        let (fake, s) = try connected()
        let ignored = [SIGPIPE, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGIO, SIGPWR, SIGSTKFLT]
        for sig in ignored { kill(s.process.processIdentifier, sig) }
        Thread.sleep(forTimeInterval: 0.5)
        try #require(s.process.isRunning, "a signal ended the sidecar (status \(s.process.terminationStatus))")
        try fake.append(#"{"type": "LocalIndexUpdated", "folder": "vault"}"#)
        expectTriggers(1, within: Self.wakeWithin, "a change after the signals still wakes")
        kill(s.process.processIdentifier, SIGQUIT)
        s.process.waitUntilExit()
        #expect(s.process.terminationReason == .exit && s.process.terminationStatus == 0, "\(s.log)")
        #expect(s.lines.last?.contains("level=info msg=\"stopped\"") == true, "\(s.log)")
    }

    /// sh starts a background job with SIGINT and SIGQUIT ignored; the service stops on them all the same.
    @Test("started with SIGINT and SIGQUIT ignored (a background job of sh) → each still stops it with exit 0")
    func inheritedIgnoreDoesNotMatter() throws {
        let fake = try startFake()
        for sig in [SIGINT, SIGQUIT] {
            let s = try Sidecar(
                dir: dir, name: "sidecar-sh-\(sig)",
                env: [
                    "PATH": "/usr/bin:/bin", "HOME": dir.path, "RELAY_URL": relay.url, "SYNCTHING_API_URL": fake.url,
                    "SYNCTHING_API_KEY": fake.apiKey, "STARTUP_ANNOUNCE": "false", "RELAY_WINDOW_SECONDS": "0",
                ],
                command: ["/bin/sh", "-c", "trap '' INT QUIT; exec \"$0\"", E2E.binary])
            sidecars.append(s)
            try #require(s.waitConnected(15), "\(s.log)")
            kill(s.process.processIdentifier, sig)
            #expect(E2E.waitFor(5) { !s.process.isRunning }, "signal \(sig) was ignored: \(s.log)")
            s.stop()
            #expect(s.process.terminationReason == .exit && s.process.terminationStatus == 0, "\(s.log)")
        }
    }

    /// The stop signals are blocked before any thread starts (SignalPolicy): one sent as soon as the first record is
    /// out is neither lost nor fatal, however far the start-up has got.
    @Test("SIGTERM as soon as the 'starting' record is out → exit 0, ten times in a row")
    func sigtermRightAfterStart() throws {
        let fake = try startFake()
        for attempt in 0..<10 {
            let s = try startSidecar(fake)
            try #require(E2E.waitFor(5) { s.log.contains("msg=\"starting\"") }, "\(s.log)")
            if attempt % 2 == 1 { Thread.sleep(forTimeInterval: 0.002 * Double(attempt)) }
            kill(s.process.processIdentifier, SIGTERM)
            #expect(E2E.waitFor(5) { !s.process.isRunning }, "attempt \(attempt): the SIGTERM was lost: \(s.log)")
            s.stop()
            #expect(
                s.process.terminationReason == .exit && s.process.terminationStatus == 0,
                "attempt \(attempt): \(s.log)")
        }
    }

    @Test("a long poll that hangs after its 200 → SIGTERM exits 0 at once")
    func sigtermEndsAHungPoll() throws {
        let (fake, s) = try connected()
        try fake.setFaults(#"[{"kind": "hang", "match": "poll"}]"#)
        // Taken by the poll the fake was holding: from now on that poll hangs.
        #expect(E2E.waitFor(5) { fake.pendingFaults == 0 })
        expectCleanExit(s)
        #expect(relay.triggers.isEmpty)
        expectNoLeaks(s, fake)
    }

    /// A fault list with one `raw` fault for long polls: 200 with exactly `body`.
    static func rawFault(body: String, count: Int) -> String {
        let fault: [String: Any] = ["kind": "raw", "match": "poll", "count": count, "body": body]
        let data = try! JSONSerialization.data(withJSONObject: [fault])
        return String(decoding: data, as: UTF8.self)
    }

    // MARK: - Faults that repeat at once: backoff, never a spin or a crash

    /// Counts /rest/events requests and "event poll failed"/"Syncthing restarted" lines over `seconds` (a counting
    /// window) while
    /// `faults` are queued, then clears them and checks that an ordinary change still wakes.
    func expectNoSpin(
        _ fake: FakeSyncthingProcess, _ s: Sidecar, faults: String, logLine: String, seconds: TimeInterval = 3,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let polls0 = fake.eventRequests.count
        let statuses0 = fake.statusRequests.count
        let lines0 = s.count(logLine)
        let triggers0 = relay.triggers.count
        try fake.setFaults(faults)
        Thread.sleep(forTimeInterval: seconds)
        let polls = fake.eventRequests.count - polls0
        let statuses = fake.statusRequests.count - statuses0
        let lines = s.count(logLine) - lines0
        // With the reconnect backoff (0.5 s doubling to 5 s) a few requests fit in 3 s; a spin makes hundreds.
        #expect(polls < 15, "\(polls) /rest/events requests in \(seconds) s", sourceLocation: sourceLocation)
        #expect(
            statuses < 15, "\(statuses) /rest/system/status requests in \(seconds) s", sourceLocation: sourceLocation)
        #expect(lines < 15, "\(lines) '\(logLine)' lines in \(seconds) s", sourceLocation: sourceLocation)
        #expect(relay.triggers.count - triggers0 <= 1, sourceLocation: sourceLocation)
        #expect(s.process.isRunning, sourceLocation: sourceLocation)
        try fake.clearFaults()
        let before = relay.triggers.count
        try fake.append(#"{"type": "LocalIndexUpdated", "folder": "vault"}"#)
        #expect(E2E.waitFor(5 + Self.wakeWithin + 1) { relay.triggers.count > before }, sourceLocation: sourceLocation)
    }

    @Test("malformed answers that never stop (status and head fine) → backoff between polls")
    func malformedAnswersBackOff() throws {
        let (fake, s) = try connected()
        try expectNoSpin(
            fake, s, faults: #"[{"kind": "malformed", "match": "poll", "count": -1}]"#,
            logLine: "event poll failed, retrying")
        expectCleanExit(s)
        expectNoLeaks(s, fake)
    }

    @Test("a server replaying an already-seen id at once → each replay is a restart, and repeated restarts back off")
    func replayedIdsBackOff() throws {
        let (fake, s) = try connected()
        try fake.append(
            #"[{"type": "LocalIndexUpdated", "folder": "vault"}, {"type": "LocalIndexUpdated", "folder": "vault"}]"#)
        #expect(E2E.waitFor(Self.wakeWithin + 1) { relay.triggers.count == 1 }, "the change")
        // Every poll is answered at once with id 1 (≤ the cursor): it reads as a restart, the re-sync succeeds,
        // and the next poll starts at once.
        let replay =
            #"[{"id": 1, "globalID": 1, "time": "2026-01-01T00:00:00Z", "type": "LocalIndexUpdated", "data": {"folder": "vault"}}]"#
        try expectNoSpin(
            fake, s, faults: Self.rawFault(body: replay, count: -1),
            logLine: "Syncthing restarted, cursor reset")
        expectCleanExit(s)
        expectNoLeaks(s, fake)
    }

    @Test("an event id of Int.max → rejected as malformed; the sidecar keeps running and a later event still wakes")
    func maxEventIdIsRejected() throws {
        let (fake, s) = try connected()
        let event =
            #"[{"id": 9223372036854775807, "globalID": 1, "time": "2026-01-01T00:00:00Z", "type": "LocalIndexUpdated", "data": {"folder": "vault"}}]"#
        try fake.setFaults(Self.rawFault(body: event, count: 1))
        #expect(E2E.waitFor(5) { fake.pendingFaults == 0 })
        // Until the answer was logged as rejected, or the sidecar died of it.
        _ = E2E.waitFor(5) { s.log.contains("code=syncthing.malformed-response") || !s.process.isRunning }
        if !s.process.isRunning {
            let how = s.process.terminationReason == .uncaughtSignal ? "signal" : "exit status"
            Issue.record("the sidecar died (\(how) \(s.process.terminationStatus)): \(s.log)")
        }
        guard s.process.isRunning else { return }
        #expect(s.log.contains("code=syncthing.malformed-response"), "rejected as malformed: \(s.log)")
        try fake.append(#"{"type": "LocalIndexUpdated", "folder": "vault"}"#)
        #expect(E2E.waitFor(5 + Self.wakeWithin + 1) { relay.triggers.count >= 1 })
        expectCleanExit(s)
        expectNoLeaks(s, fake)
    }
}
