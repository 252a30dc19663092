import Testing

@testable import NotifyCore

/// The `recent` list's parts: which rule each event met (`PeerTracker.read`), the bounded ring that folds repeats
/// (`DecisionLog`), and its lines in the state file (`ServiceState`).
@Suite("Decisions: the rule each event met, the ring, the state file's lines")
struct DecisionTests {
    typealias Tracker = PeerTrackerTests

    static func local(_ folder: String) -> SyncthingEvent {
        SyncthingEvent(id: 1, type: "LocalIndexUpdated", folder: folder)
    }

    @Test("a change: shared (with how many devices), shared with no one, not watched, sharing unknown")
    func changes() {
        var t = Tracker.tracker(watched: ["vault", "notes", "solo"])
        let reading = t.read([Self.local("vault"), Self.local("solo"), Self.local("other"), Self.local("notes")])
        #expect(reading.news == 2)
        #expect(reading.decisions.map(\.cause) == [.change, .changeUnshared, .changeUnwatched, .change])
        #expect(reading.decisions.map(\.devices) == [2, nil, nil, 1])
        var fresh = PeerTracker(rules: WakeRules(watchedFolders: []))
        #expect(fresh.read([Self.local("vault")]).decisions.map(\.cause) == [.changeSharingUnknown])
        #expect(t.news(in: [Self.local("vault")]) == 1, "news(in:) counts what read(_:) says")
    }

    @Test("a completion: a need is news once; progress, in sync and a decline are not; a declined folder's change")
    func completions() {
        var t = Tracker.tracker()
        func completion(_ need: Int64, _ remote: RemoteFolderState? = .valid) -> SyncthingEvent {
            SyncthingEvent(
                id: 1, type: "FolderCompletion", folder: "notes", device: Tracker.phone, needItems: need > 0 ? 1 : 0,
                needBytes: need, needDeletes: 0, remoteState: remote, sequence: 9)
        }
        let causes = [completion(0), completion(10), completion(5), completion(0, .notSharing)].map {
            t.read([$0]).decisions.map(\.cause)
        }
        #expect(causes == [[.peerProgress], [.peerNeedsData], [.peerProgress], [.peerDeclined]])
        #expect(t.read([Self.local("notes")]).decisions.map(\.cause) == [.changeDeclined])
    }

    @Test("the ring folds repeats into one entry, keeps its serial, and holds at most `capacity` entries")
    func ring() {
        var log = DecisionLog()
        log.note(.peerProgress, at: .seconds(1), outcome: .notWoken)
        log.note(.peerProgress, at: .seconds(4), outcome: .notWoken)
        log.note(.change, at: .seconds(5), devices: 1, outcome: .scheduled(at: .seconds(10)))
        log.note(.change, at: .seconds(6), devices: 1, outcome: .scheduled(at: .seconds(11)))
        log.note(.change, at: .seconds(7), devices: 2, outcome: .scheduled(at: .seconds(12)))
        #expect(log.total == 5)
        #expect(
            log.entries == [
                Decision(serial: 1, at: .seconds(4), cause: .peerProgress, outcome: .notWoken, count: 2),
                Decision(
                    serial: 2, at: .seconds(6), cause: .change, devices: 1, outcome: .scheduled(at: .seconds(11)),
                    count: 2),
                Decision(serial: 3, at: .seconds(7), cause: .change, devices: 2, outcome: .scheduled(at: .seconds(12))),
            ])
        for i in 0..<50 {
            log.note(i % 2 == 0 ? .sweepInSync : .sweepConnected, at: .seconds(Double(10 + i)), outcome: .notWoken)
        }
        #expect(log.entries.count == DecisionLog.capacity)
        #expect(log.entries.last?.serial == 53)
        #expect(log.entries.first?.serial == 53 - DecisionLog.capacity + 1)
    }

    /// Every outcome, on the wall clock.
    static let everyOutcome: [DecisionOutcome<Int64>] = [
        .notWoken, .scheduled(at: 1_718_000_020), .held(.window(until: 1_718_000_030)),
        .held(.waiting(.inactiveRecheck, until: 1_718_000_060)), .held(.waiting(.backoff, until: 1_718_000_002)),
        .held(.waiting(.rateLimited, until: 1_718_000_120)), .afterInFlight, .sent, .alreadyWoken, .deferred,
        .answered(.delivered, retryAt: nil), .answered(.inactive, retryAt: 1_718_000_060),
        .answered(.rateLimited, retryAt: 1_718_000_120), .answered(.transient, retryAt: 1_718_000_001),
    ]

    @Test("every cause and outcome round-trips through the state file; a malformed line is skipped, not the file")
    func stateFileLines() throws {
        var state = ServiceProgressTests.full
        state.writer = ServiceWriter(pid: 4_194_304, start: 9_999_999_999_999)
        state.configWaitUntil = 1_718_000_060
        var serial = 0
        for cause in DecisionCause.allCases {
            for outcome in Self.everyOutcome.prefix(2) {
                serial += 1
                state.recent.append(
                    Decision(
                        serial: serial, at: 1_718_000_000, cause: cause, devices: cause == .change ? 3 : nil,
                        reason: cause == .relayAnswer ? .stalePeer : nil, outcome: outcome, count: 2))
            }
        }
        state.recent = Array(state.recent.suffix(DecisionLog.capacity - Self.everyOutcome.count))
        for outcome in Self.everyOutcome {
            serial += 1
            state.recent.append(Decision(serial: serial, at: 1_718_000_001, cause: .relayAnswer, outcome: outcome))
        }
        #expect(state.recent.count == DecisionLog.capacity)
        let text = state.encoded()
        #expect(text.utf8.count <= ServiceState.maxBytes, "a full ring fits in the file: \(text.utf8.count) bytes")
        #expect(ServiceState.decode(text) == state)
        let broken = text.replacingOccurrences(of: "recent=\(serial) ", with: "recent=x ")
        let decoded = try #require(ServiceState.decode(broken))
        #expect(decoded.recent.count == DecisionLog.capacity - 1)
        for bad in ["1 2 3 nope - - sent - -", "1 2 0 change - - sent - -", "1 2 1 change - - held 5 nope", "1 2"] {
            var one = ServiceProgressTests.full
            one.recent = []
            let lines = one.encoded() + "recent=\(bad)\n"
            #expect(ServiceState.decode(lines)?.recent == [], "\(bad)")
        }
    }

    @Test("an entry keeps the wall time it was first seen with; a folded one takes the time of its last")
    func wallTimes() {
        var state = ServiceState()
        var progress = Engine.Progress()
        progress.recent = [Decision(serial: 1, at: .seconds(100), cause: .change, outcome: .sent)]
        state.record(progress, now: .seconds(100), wallNow: 1_718_000_000)
        #expect(state.recent.map(\.at) == [1_718_000_000])
        // A suspend: the wall clock moved an hour more than the monotonic one. What happened before keeps its time.
        progress.recent.append(Decision(serial: 2, at: .seconds(160), cause: .sweepInSync, outcome: .notWoken))
        state.record(progress, now: .seconds(160), wallNow: 1_718_003_660)
        #expect(state.recent.map(\.at) == [1_718_000_000, 1_718_003_660])
        progress.recent[1].count = 2
        progress.recent[1].at = .seconds(170)
        state.record(progress, now: .seconds(170), wallNow: 1_718_003_670)
        #expect(state.recent.map(\.at) == [1_718_000_000, 1_718_003_670])
    }

    @Test("a new entry is a significant change of the state; a repeat folded into the last is not")
    func significance() {
        var state = ServiceProgressTests.full
        state.recent = [Decision(serial: 1, at: 1, cause: .peerProgress, outcome: .notWoken)]
        var folded = state
        folded.recent[0].count = 5
        folded.recent[0].at = 9
        #expect(folded.significant == state.significant)
        var added = state
        added.recent.append(Decision(serial: 2, at: 9, cause: .change, devices: 1, outcome: .scheduled(at: 14)))
        #expect(added.significant != state.significant)
        // The throttle's comparison without the copies says the same, for these and for every other kind of change.
        var outcome = folded
        outcome.recent[0].outcome = .sent
        var polled = state
        polled.lastPoll = 1_718_000_999
        var shared = state
        shared.sharedFolders = (state.sharedFolders ?? 0) + 1
        var replaced = state
        replaced.recent = [Decision(serial: 2, at: 1, cause: .peerProgress, outcome: .notWoken)]
        let states = [state, folded, added, outcome, polled, shared, replaced, ServiceProgressTests.full]
        for a in states {
            for b in states { #expect(a.isSignificantlyEqual(to: b) == (a.significant == b.significant)) }
        }
        #expect(!state.isSignificantlyEqual(to: added))
        #expect(state.isSignificantlyEqual(to: folded))
    }
}

/// The engine notes its decisions where it makes them, with what the policy did with the news.
@Suite("Decisions: noted by the engine")
struct EngineDecisionTests {
    static func local(_ id: Int) -> SyncthingEvent {
        SyncthingEvent(id: id, type: "LocalIndexUpdated", folder: "vault")
    }

    /// One long-poll answer and the status read after it.
    static func batch(
        _ e: inout Engine, _ events: [SyncthingEvent], status: SystemStatus = EngineTests.status, at now: Instant
    )
        -> [Engine.Action]
    {
        e.handle(.polled(.success(events), elapsed: .seconds(1)), now: now)
            + e.handle(.status(.success(status)), now: now)
    }

    @Test("a change before the config is read, one while a wake-up is posted, its answer, a Syncthing restart")
    func timeline() throws {
        var e = EngineTests.running()
        let first = Self.batch(&e, [Self.local(1)], at: .seconds(1))
        #expect(first.contains(.decided(.changeSharingUnknown)))
        #expect(
            e.decisions.entries.map(\.outcome) == [.scheduled(at: .seconds(6))], "the debounce end (5 s by default)")
        let sent = e.handle(.timerFired(.policy(.debounce)), now: .seconds(6))
        #expect(sent.contains { if case .sendTrigger = $0 { true } else { false } })
        _ = Self.batch(&e, [Self.local(2)], at: .seconds(7))
        #expect(e.decisions.entries.last?.outcome == .afterInFlight)
        let answered = e.handle(.relayOutcome(.subscriptionInactive(status: 402), jitter: 0), now: .seconds(8))
        #expect(answered.contains(.decided(.relayAnswer)))
        let entry = try #require(e.decisions.entries.last)
        #expect(entry.cause == .relayAnswer && entry.reason == .change)
        #expect(entry.outcome == .answered(.inactive, retryAt: .seconds(68)), "kept; re-checked in 60 s")
        let restarted = SystemStatus(myID: EngineTests.id, startTime: "2026-12-02T00:00:00Z")
        _ = Self.batch(&e, [], status: restarted, at: .seconds(9))
        _ = e.handle(.head(.success(40)), now: .seconds(9))
        let last = try #require(e.decisions.entries.last)
        #expect(last.cause == .syncthingRestarted)
        #expect(last.outcome == .held(.waiting(.inactiveRecheck, until: .seconds(68))), "\(e.decisions.entries)")
        #expect(e.decisions.total == e.decisions.entries.count)
    }
}
