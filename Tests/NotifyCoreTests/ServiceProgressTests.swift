import Testing

@testable import NotifyCore

@Suite("--status: the policy's progress, the state file's new keys, the write throttle")
struct ServiceProgressTests {
    // MARK: WakePolicy.progress, the policy fed its inputs directly

    /// No announce, no sweep, a 5 s debounce and a 30 s maximum.
    static let quiet = WakePolicy.Settings(startupAnnounce: false, staleRetrigger: nil, relayWindow: nil)

    /// When `actions` arm `timer`; the test feeds `.timerFired` at that instant and no other.
    static func armed(_ timer: WakePolicy.Timer, in actions: [WakePolicy.Action]) -> Instant? {
        actions.lazy.compactMap { if case .armTimer(timer, let at) = $0 { at } else { nil } }.last
    }

    @Test("a change: scheduled at its debounce end, sending, then the push window; the last wake-up recorded")
    func changeTimeline() throws {
        var settings = Self.quiet
        settings.relayWindow = .seconds(30)
        settings.staleRetrigger = .seconds(3600)
        var policy = WakePolicy(settings: settings)
        _ = policy.handle(.start, now: .zero)
        #expect(policy.progress(now: .zero) == WakeProgress(sweep: .at(.seconds(3600))))
        _ = policy.handle(.wake(.change), now: .seconds(2))
        #expect(policy.progress(now: .seconds(2)).pending == .scheduled(.change, at: .seconds(7)))
        // A second change moves the debounce end.
        let moved = policy.handle(.wake(.change), now: .seconds(3))
        #expect(policy.progress(now: .seconds(3)).pending == .scheduled(.change, at: .seconds(8)))
        let due = try #require(Self.armed(.debounce, in: moved))
        #expect(due == .seconds(8))
        #expect(policy.handle(.timerFired(.debounce), now: due).contains(.sendTrigger(.change)))
        #expect(policy.progress(now: .seconds(8.01)).pending == .sending(.change))
        _ = policy.handle(.relayOutcome(.delivered(status: 202), jitter: 0.5), now: .seconds(8.05))
        let after = policy.progress(now: .seconds(8.05))
        #expect(after.pending == nil)
        #expect(after.relay == .window(until: .seconds(8.05) + .seconds(30)))
        #expect(after.lastWake == LastWake(at: .seconds(8.05), reason: .change, answer: .delivered))
        // News inside the window waits for its end.
        let debounced = try #require(Self.armed(.debounce, in: policy.handle(.wake(.change), now: .seconds(8.15))))
        #expect(debounced == .seconds(13.15))
        #expect(policy.progress(now: .seconds(8.15)).pending == .scheduled(.change, at: .seconds(38.05)))
        let held = policy.handle(.timerFired(.debounce), now: debounced)
        #expect(!held.contains(.sendTrigger(.change)))
        #expect(held.contains { if case .log(let r) = $0 { r.message == .triggerHeldForWindow } else { false } })
        #expect(policy.progress(now: debounced).pending == .scheduled(.change, at: .seconds(38.05)))
        // The window over, nothing holds the relay back.
        #expect(policy.progress(now: .seconds(40)).relay == .open)
    }

    @Test(
        "each relay answer gives its wait: inactive re-check, backoff, Retry-After",
        arguments: [
            (RelayOutcome.subscriptionInactive(status: 402), RelayWait.inactiveRecheck, 60.0),
            (.transient(status: 503, error: nil), .backoff, 1.0),
            (.rateLimited(retryAfter: .seconds(120)), .rateLimited, 120.0),
        ])
    func waits(outcome: RelayOutcome, wait: RelayWait, seconds: Double) throws {
        var policy = WakePolicy(settings: Self.quiet)
        _ = policy.handle(.start, now: .zero)
        let due = try #require(Self.armed(.debounce, in: policy.handle(.wake(.change), now: .zero)))
        #expect(policy.handle(.timerFired(.debounce), now: due).contains(.sendTrigger(.change)))
        let answered = due + .milliseconds(50)
        let actions = policy.handle(.relayOutcome(outcome, jitter: 1), now: answered)
        let until = answered + .milliseconds(Int64(seconds * 1000))
        #expect(Self.armed(.retry, in: actions) == until)
        let progress = policy.progress(now: answered)
        #expect(progress.relay == .waiting(wait, until: until))
        // The wake-up is kept, and goes when the wait ends.
        #expect(progress.pending == .scheduled(.change, at: until))
        #expect(progress.lastWake?.answer == RelayOutcomeCategory(outcome))
        #expect(policy.handle(.timerFired(.retry), now: until).contains(.sendTrigger(.change)))
    }

    @Test("no sweep configured is 'off'; stopping unschedules it")
    func sweep() throws {
        var policy = WakePolicy(settings: Self.quiet)
        _ = policy.handle(.start, now: .zero)
        #expect(policy.progress(now: .zero).sweep == .off)
        var settings = Self.quiet
        settings.staleRetrigger = .seconds(600)
        var sweeping = WakePolicy(settings: settings)
        #expect(sweeping.progress(now: .zero).sweep == .notScheduled)
        let first = try #require(Self.armed(.sweep, in: sweeping.handle(.start, now: .zero)))
        #expect(first == .seconds(600))
        let fired = sweeping.handle(.timerFired(.sweep), now: first)
        #expect(fired.contains(.runSweep))
        #expect(Self.armed(.sweep, in: fired) == .seconds(1200))
        _ = sweeping.handle(.sweepFinished(peersNeedingData: 0), now: first + .milliseconds(10))
        #expect(sweeping.progress(now: .seconds(601)).sweep == .at(.seconds(1200)))
        _ = sweeping.handle(.stop, now: .seconds(601))
        #expect(sweeping.progress(now: .seconds(601)).sweep == .notScheduled)
    }

    @Test("the engine counts shared folders and their distinct devices, not before the config is read")
    func engineCounts() {
        var engine = Engine(settings: Engine.Settings(policy: Self.quiet))
        #expect(engine.progress(now: .zero).sharedFolders == nil)
        _ = engine.handle(.start, now: .zero)
        _ = engine.handle(.relayHealth(.ok), now: .zero)
        _ = engine.handle(.status(.success(SystemStatus(myID: Self.me, startTime: "t"))), now: .zero)
        _ = engine.handle(.head(.success(3)), now: .zero)
        let devices = [Self.me, Self.peerA, Self.peerB].map { ConfiguredDevice(deviceID: $0, paused: false) }
        let folders = [
            ConfiguredFolder(id: "a", paused: false, deviceIDs: [Self.me, Self.peerA, Self.peerB]),
            ConfiguredFolder(id: "b", paused: false, deviceIDs: [Self.me, Self.peerA]),
            ConfiguredFolder(id: "c", paused: false, deviceIDs: [Self.me]),
        ]
        _ = engine.handle(
            .configRead(.snapshot, generation: 0, Engine.ConfigSnapshot(devices: devices, folders: folders)),
            now: .zero)
        let progress = engine.progress(now: .zero)
        #expect(progress.sharedFolders == 2)
        #expect(progress.sharedDevices == 2)
    }

    static let me = "AAAAAAA-BBBBBBB-CCCCCCC-DDDDDDD-EEEEEEE-FFFFFFF-GGGGGGG-HHHHHHH"
    static let peerA = "ZZZZZZZ-BBBBBBB-CCCCCCC-DDDDDDD-EEEEEEE-FFFFFFF-GGGGGGG-HHHHHHH"
    static let peerB = "3QS6B4R-BPY5SWQ-47G2S54-F46T34Y-3Z3C33C-FPJLDKZ-CWKDRFD-G4XJAAD"

    // MARK: The state file's keys

    static let full = ServiceState(
        lastPoll: 1_718_000_000, relay: .delivered, started: 1_717_990_000, updated: 1_718_000_004,
        syncthingReachable: true, sharedFolders: 2, sharedDevices: 1, relayState: .window(until: 1_718_000_020),
        pending: .scheduled(.change, at: 1_718_000_020),
        lastWake: .init(at: 1_717_999_990, reason: .change, answer: .delivered),
        sweep: .at(1_718_011_600))

    @Test("every new key round-trips; the text is the documented one")
    func roundTrip() {
        #expect(
            Self.full.encoded() == """
                vaultsync-notify-state 1
                last_poll=1718000000
                relay=delivered
                started=1717990000
                updated=1718000004
                syncthing=reachable
                folders=2
                devices=1
                last_wake=1717999990
                last_wake_reason=change
                relay_state=window
                relay_until=1718000020
                pending=change
                pending_at=1718000020
                next_sweep=1718011600

                """)
        #expect(ServiceState.decode(Self.full.encoded()) == Self.full)
        var other = Self.full
        for relay in [RelayGate<Int64>.open, .waiting(.inactiveRecheck, until: 5), .waiting(.backoff, until: 6)]
            + [.waiting(.rateLimited, until: 7)]
        {
            other.relayState = relay
            #expect(ServiceState.decode(other.encoded()) == other)
        }
        for pending in [PendingWake<Int64>.sending(.announce), nil] {
            other.pending = pending
            #expect(ServiceState.decode(other.encoded()) == other)
        }
        for sweep in [SweepSchedule<Int64>.off, .notScheduled, nil] {
            other.sweep = sweep
            other.syncthingReachable = false
            #expect(ServiceState.decode(other.encoded()) == other)
        }
    }

    @Test("an old file (two keys) reads with every new field unknown; an old reader's rules still hold")
    func oldFile() {
        let old = ServiceState.decode("vaultsync-notify-state 1\nlast_poll=7\nrelay=inactive\n")
        #expect(old == ServiceState(lastPoll: 7, relay: .inactive))
        #expect(old?.isRunning(now: 100) == true)
        #expect(old?.isRunning(now: 200) == false)
    }

    @Test("a later key's value that does not parse leaves that field unknown; last_poll and relay stay strict")
    func lenientNewKeys() {
        let text =
            "vaultsync-notify-state 1\nlast_poll=7\nrelay=none\nrelay_state=paused\nrelay_until=9\n"
            + "syncthing=maybe\nfolders=-1\npending=later\nnext_sweep=soon\nlast_wake=3\n"
        #expect(ServiceState.decode(text) == ServiceState(lastPoll: 7))
        #expect(ServiceState.decode("vaultsync-notify-state 1\nlast_poll=x\n") == nil)
    }

    @Test("running: the write time decides when there is one; the last poll otherwise")
    func running() {
        var state = ServiceState(lastPoll: 1000, updated: 1500)
        #expect(state.isRunning(now: 1600))
        #expect(!state.isFresh(now: 1600))
        #expect(!state.isRunning(now: 1621))
        state.updated = nil
        #expect(!state.isRunning(now: 1600))
    }

    @Test("progress becomes wall-clock seconds, rounded to the nearest second")
    func record() {
        var state = ServiceState()
        let progress = Engine.Progress(
            wake: WakeProgress(
                relay: .waiting(.backoff, until: .seconds(12.6)), pending: .scheduled(.resync, at: .seconds(12.4)),
                lastWake: .init(at: .seconds(9.6), reason: .resync, answer: .transient), sweep: .at(.seconds(3610))),
            sharedFolders: 3, sharedDevices: 2)
        state.record(progress, now: .seconds(10), wallNow: 1_000_000)
        #expect(state.relayState == .waiting(.backoff, until: 1_000_003))
        #expect(state.pending == .scheduled(.resync, at: 1_000_002))
        #expect(state.lastWake == .init(at: 1_000_000, reason: .resync, answer: .transient))
        #expect(state.sweep == .at(1_003_600))
        #expect(state.sharedFolders == 3 && state.sharedDevices == 2)
    }

    @Test("writes: a significant change at once; a pending wake-up's moving debounce end and the poll time wait")
    func throttle() {
        var throttle = StateWriteThrottle()
        var state = Self.full
        func write(at seconds: Double) -> Bool { throttle.shouldWrite(state, now: .seconds(seconds)) }
        #expect(write(at: 0))
        state.lastPoll = 1_718_000_001
        state.updated = 1_718_000_001
        state.pending = .scheduled(.change, at: 1_718_000_025)
        #expect(!write(at: 1))
        state.pending = .sending(.change)
        #expect(write(at: 1.1))
        state.pending = nil
        state.lastWake = .init(at: 1_718_000_026, reason: .change, answer: .delivered)
        #expect(write(at: 1.2))
        state.syncthingReachable = false
        #expect(write(at: 1.3))
        state.sweep = .at(1_718_020_000)
        #expect(write(at: 1.4))
        state.sharedFolders = 3
        #expect(write(at: 1.5))
        #expect(!write(at: 2))
        #expect(write(at: 11.5))
    }
}
