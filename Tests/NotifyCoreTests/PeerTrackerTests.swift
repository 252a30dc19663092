import Testing

@testable import NotifyCore

/// What counts as news: edge-triggered completion, unshared and declined folders, and which peers the sweep wakes.
/// Event shapes are 1.19's (docs/syncthing-api.md, the event filter) plus `remoteState` as 1.20+ sends it
/// (docs/syncthing-versions.md).
@Suite("PeerTracker: what is news")
struct PeerTrackerTests {
    static let me = "27CDMTM-YXY5LTB-36HECI7-PHRY24X-M3PY26F-GAVITON-Z7JEEZ2-X5GOIQA"
    static let phone = "3QS6B4R-BPY5SWQ-47G2S54-F46T34Y-3Z3C33C-FPJLDKZ-CWKDRFD-G4XJAAD"
    static let laptop = "LAPTOP1-BPY5SWQ-47G2S54-F46T34Y-3Z3C33C-FPJLDKZ-CWKDRFD-G4XJAAD"

    /// `vault` shared with the phone and the laptop, `notes` with the phone, `solo` with no one.
    static func tracker(
        watched: Set<String> = [], phonePaused: Bool = false, vaultPaused: Bool = false
    ) -> PeerTracker {
        var t = PeerTracker(rules: WakeRules(watchedFolders: watched))
        t.setConfig(myID: me, devices: devices(phonePaused: phonePaused), folders: folders(vaultPaused: vaultPaused))
        // The start-up's snapshot read, as the engine asks for it: every remote shares (no `remoteState`, as on
        // 1.19), no index from any yet (sequence 0), so no pair's sync state is known.
        let blind = Completion(needItems: 0, needBytes: 0, needDeletes: 0, sequence: 0)
        _ = t.absorb(t.sweepPairs.map { SweepObservation(pair: $0, connected: true, completion: blind) })
        return t
    }

    static func devices(phonePaused: Bool = false) -> [ConfiguredDevice] {
        [
            .init(deviceID: me, paused: false), .init(deviceID: phone, paused: phonePaused),
            .init(deviceID: laptop, paused: false),
        ]
    }

    static func folders(vaultPaused: Bool = false, soloSharedWithPhone: Bool = false) -> [ConfiguredFolder] {
        [
            .init(id: "vault", paused: vaultPaused, deviceIDs: [me, phone, laptop]),
            .init(id: "notes", paused: false, deviceIDs: [me, phone]),
            .init(id: "solo", paused: false, deviceIDs: soloSharedWithPhone ? [me, phone] : [me]),
        ]
    }

    var id = 0
    mutating func local(_ folder: String) -> SyncthingEvent {
        id += 1
        return SyncthingEvent(id: id, type: "LocalIndexUpdated", folder: folder)
    }
    mutating func completion(
        _ device: String, _ folder: String, need: Int64, remote: RemoteFolderState? = nil, sequence: Int64 = 7
    ) -> SyncthingEvent {
        id += 1
        return SyncthingEvent(
            id: id, type: "FolderCompletion", folder: folder, device: device, needItems: need > 0 ? 1 : 0,
            needBytes: need, needDeletes: 0, remoteState: remote, sequence: sequence)
    }
    static func answer(need: Int64, remote: RemoteFolderState? = nil) -> Completion {
        Completion(needItems: need > 0 ? 1 : 0, needBytes: need, needDeletes: 0, remoteState: remote)
    }

    // MARK: LocalIndexUpdated

    @Test("a local change in a shared folder is news; in a folder shared with no one it never is")
    mutating func sharedAndUnshared() {
        var t = Self.tracker()
        #expect(t.news(in: [local("vault")]) == 1)
        #expect(t.news(in: [local("solo")]) == 0)
        #expect(t.news(in: [local("solo"), local("solo"), local("notes")]) == 1)
    }

    @Test("a local change outside WATCHED_FOLDERS is not news")
    mutating func unwatched() {
        var t = Self.tracker(watched: ["notes"])
        #expect(t.news(in: [local("vault")]) == 0)
        #expect(t.news(in: [local("notes")]) == 1)
    }

    @Test("a local change in a folder shared only with a paused device, or a paused folder, is not news")
    mutating func pausedDeviceOrFolder() {
        var t = Self.tracker(phonePaused: true)
        #expect(t.news(in: [local("notes")]) == 0)
        #expect(t.news(in: [local("vault")]) == 1)  // the laptop still shares it
        var p = Self.tracker(vaultPaused: true)
        #expect(p.news(in: [local("vault")]) == 0)
        #expect(p.sweepPairs.allSatisfy { $0.folder != "vault" })
    }

    @Test("before the config is read, after a ConfigSaved, and for a folder the config does not list: news")
    mutating func unknownConfigIsConservative() {
        var fresh = PeerTracker(rules: WakeRules(watchedFolders: []))
        #expect(fresh.news(in: [local("solo")]) == 1)
        var t = Self.tracker()
        #expect(t.news(in: [local("brand-new")]) == 1)
        #expect(t.news(in: [SyncthingEvent(id: 99, type: "ConfigSaved"), local("solo")]) == 1)
        #expect(t.configStale)
        // The config is read again: solo is now shared with the phone, and still news.
        t.setConfig(myID: Self.me, devices: Self.devices(), folders: Self.folders(soloSharedWithPhone: true))
        #expect(!t.configStale)
        #expect(t.news(in: [local("solo")]) == 1)
    }

    @Test("a config read that started before the latest ConfigSaved leaves the config stale (read again)")
    mutating func olderConfigReadKeepsItStale() {
        var t = Self.tracker()
        _ = t.news(in: [SyncthingEvent(id: 100, type: "ConfigSaved")])
        let started = t.configGeneration  // the read starts
        _ = t.news(in: [SyncthingEvent(id: 101, type: "ConfigSaved")])  // solo gets shared meanwhile
        t.setConfig(myID: Self.me, devices: Self.devices(), folders: Self.folders(), generation: started)
        #expect(t.configStale)
        #expect(t.news(in: [local("solo")]) == 1)
        // The second read sees the new config.
        t.setConfig(
            myID: Self.me, devices: Self.devices(), folders: Self.folders(soloSharedWithPhone: true),
            generation: t.configGeneration)
        #expect(!t.configStale)
        #expect(t.news(in: [local("solo")]) == 1)
    }

    // MARK: FolderCompletion

    @Test("a transfer to a connected peer: only the first report of a need is news, repeats are not")
    mutating func edgeTriggered() {
        var t = Self.tracker()
        #expect(t.news(in: [completion(Self.phone, "vault", need: 8_000_000)]) == 1)
        for remaining: Int64 in [6_000_000, 4_000_000, 2_000_000, 1] {
            #expect(t.news(in: [completion(Self.phone, "vault", need: remaining)]) == 0)
        }
        #expect(t.news(in: [completion(Self.phone, "vault", need: 0)]) == 0)
        #expect(t.states[SweepPair(device: Self.phone, folder: "vault")] == .inSync)
        // In sync again, then a new need: news again.
        #expect(t.news(in: [completion(Self.phone, "vault", need: 5)]) == 1)
    }

    @Test("the completion reports that follow a local change are the same news, not a second one")
    mutating func localChangeThenCompletion() {
        var t = Self.tracker()
        #expect(t.news(in: [local("vault")]) == 1)
        #expect(t.news(in: [completion(Self.phone, "vault", need: 120)]) == 0)
        #expect(t.news(in: [completion(Self.laptop, "vault", need: 120)]) == 0)
        #expect(t.news(in: [completion(Self.phone, "vault", need: 60), completion(Self.phone, "vault", need: 0)]) == 0)
    }

    @Test("a peer whose index has not arrived is reported complete at sequence 0: that is not 'in sync'")
    mutating func completeAtSequenceZero() {
        // Measured (1.19.2 and 1.29.5): a change, then B reported complete with sequence 0, then B's index arrives
        // and B needs 11 files. One change, one piece of news.
        var t = Self.tracker()
        #expect(t.news(in: [local("vault")]) == 1)
        #expect(t.news(in: [completion(Self.phone, "vault", need: 0, sequence: 0)]) == 0)
        #expect(t.news(in: [completion(Self.phone, "vault", need: 220_000, sequence: 30)]) == 0)
        // The same from the sweep's answers.
        let pair = SweepPair(device: Self.laptop, folder: "vault")
        let blind = Completion(needItems: 0, needBytes: 0, needDeletes: 0, sequence: 0)
        #expect(t.absorb([SweepObservation(pair: pair, connected: true, completion: blind)]) == 0)
        #expect(t.states[pair] == .needsData)
        // Offline, the local change it has not seen still makes it worth a wake-up on every sweep.
        #expect(t.absorb([SweepObservation(pair: pair, connected: false, completion: blind)]) == 1)
        #expect(t.absorb([SweepObservation(pair: pair, connected: false, completion: blind)]) == 1)
    }

    @Test(
        "a trickle of 120 files to a rate-limited peer: one local batch and 40 progress reports are one piece of news")
    mutating func trickle() {
        var t = Self.tracker()
        var news = t.news(in: [local("notes"), local("notes")])
        for step in 0..<40 {
            news += t.news(in: [completion(Self.phone, "notes", need: Int64(120 - 3 * step))])
        }
        news += t.news(in: [completion(Self.phone, "notes", need: 0)])
        #expect(news == 2)  // two events of the same batch; the policy makes them one wake-up
        #expect(t.states[SweepPair(device: Self.phone, folder: "notes")] == .inSync)
    }

    @Test("a completion for a pair the config does not share is never news (unshared folder, paused device)")
    mutating func completionOutsideTheConfig() {
        var t = Self.tracker(phonePaused: true)
        #expect(t.news(in: [completion(Self.phone, "solo", need: 3)]) == 0)
        #expect(t.news(in: [completion(Self.phone, "vault", need: 3)]) == 0)
        #expect(t.news(in: [completion(Self.laptop, "vault", need: 3)]) == 1)
    }

    @Test("remoteState paused or notSharing: never news, never swept, until the remote reports valid")
    mutating func declinedByTheRemote() {
        var t = Self.tracker()
        let pair = SweepPair(device: Self.phone, folder: "notes")
        #expect(t.news(in: [completion(Self.phone, "notes", need: 10, remote: .notSharing)]) == 0)
        #expect(t.isDeclined(pair))
        let offline = [SweepObservation(pair: pair, connected: false, completion: Self.answer(need: 10))]
        #expect(t.absorb(offline) == 0)
        // notes is shared only with the phone, which has not accepted it: a local change there wakes no one.
        #expect(t.news(in: [local("notes")]) == 0)
        #expect(t.news(in: [completion(Self.phone, "notes", need: 10, remote: .unknown)]) == 0)
        #expect(t.news(in: [completion(Self.laptop, "vault", need: 10, remote: .paused)]) == 0)
        #expect(t.isDeclined(SweepPair(device: Self.laptop, folder: "vault")))
        // The phone accepts the folder: the pair is back, and its need is news.
        #expect(t.news(in: [completion(Self.phone, "notes", need: 10, remote: .valid)]) == 1)
        #expect(!t.isDeclined(pair))
    }

    @Test("a re-sync forgets every pair's state: the next need is news again")
    mutating func resyncResets() {
        var t = Self.tracker()
        _ = t.news(in: [completion(Self.phone, "vault", need: 5)])
        #expect(t.news(in: [completion(Self.phone, "vault", need: 5)]) == 0)
        t.resynced()
        #expect(t.states.isEmpty)
        #expect(t.news(in: [completion(Self.phone, "vault", need: 5)]) == 1)
    }

    @Test("state is bounded by the config: pairs that leave it are forgotten; before it, at most the limit is kept")
    mutating func bounded() {
        var t = Self.tracker()
        _ = t.news(in: [completion(Self.phone, "vault", need: 5), completion(Self.laptop, "vault", need: 5)])
        #expect(t.states.count == 2)
        t.setConfig(
            myID: Self.me, devices: Self.devices(),
            folders: [.init(id: "vault", paused: false, deviceIDs: [Self.me, Self.phone])])
        #expect(Set(t.states.keys) == [SweepPair(device: Self.phone, folder: "vault")])

        var fresh = PeerTracker(rules: WakeRules(watchedFolders: []))
        for i in 0..<(PeerTracker.untrackedLimit + 100) {
            _ = fresh.news(in: [completion("DEVICE-\(i)", "f", need: 1)])
        }
        #expect(fresh.states.count == PeerTracker.untrackedLimit)
    }

    // MARK: Sweep

    @Test("the sweep wakes only for peers that are offline and need data; a connected one is already syncing")
    mutating func sweepOnlyOffline() {
        var t = Self.tracker()
        let phoneVault = SweepPair(device: Self.phone, folder: "vault")
        let phoneNotes = SweepPair(device: Self.phone, folder: "notes")
        let laptopVault = SweepPair(device: Self.laptop, folder: "vault")
        #expect(Set(t.sweepPairs) == [phoneVault, phoneNotes, laptopVault])
        // The laptop is connected and downloading; the phone is offline, needs vault, has notes.
        let answers = [
            SweepObservation(pair: laptopVault, connected: true, completion: Self.answer(need: 50)),
            SweepObservation(pair: phoneVault, connected: false, completion: Self.answer(need: 7, remote: .unknown)),
            SweepObservation(pair: phoneNotes, connected: false, completion: Self.answer(need: 0)),
        ]
        #expect(t.absorb(answers) == 1)
        // Every sweep while the phone stays offline and behind wakes it again.
        #expect(t.absorb(answers) == 1)
        // The sweep seeds the state: the laptop's next report of the same need is not news.
        #expect(t.news(in: [completion(Self.laptop, "vault", need: 40)]) == 0)
        // The phone catches up.
        let caughtUp = [SweepObservation(pair: phoneVault, connected: true, completion: Self.answer(need: 0))]
        #expect(t.absorb(caughtUp) == 0)
    }

    @Test("the sweep skips a pair the remote declined, and learns a decline from its answer")
    mutating func sweepDeclined() {
        var t = Self.tracker()
        let phoneNotes = SweepPair(device: Self.phone, folder: "notes")
        let answer = [
            SweepObservation(pair: phoneNotes, connected: true, completion: Self.answer(need: 3, remote: .notSharing))
        ]
        #expect(t.absorb(answer) == 0)
        #expect(t.isDeclined(phoneNotes))
        #expect(t.news(in: [local("notes")]) == 0)
    }

    @Test("a declined pair is still asked about, so a 'valid' answer brings it back even when its event was lost")
    mutating func declinedComesBackThroughTheSweep() {
        var t = Self.tracker()
        let phoneNotes = SweepPair(device: Self.phone, folder: "notes")
        #expect(t.news(in: [completion(Self.phone, "notes", need: 0, remote: .paused)]) == 0)
        t.resynced()  // the event that said the phone resumed the folder was lost
        #expect(t.sweepPairs.contains(phoneNotes))
        let resumed = [
            SweepObservation(pair: phoneNotes, connected: true, completion: Self.answer(need: 0, remote: .valid))
        ]
        #expect(t.absorb(resumed) == 0)
        #expect(!t.isDeclined(phoneNotes))
        #expect(t.news(in: [local("notes")]) == 1)
    }

    @Test("without the config the sweep has nothing to ask")
    func sweepNeedsConfig() {
        let t = PeerTracker(rules: WakeRules(watchedFolders: []))
        #expect(t.sweepPairs.isEmpty)
    }
}
