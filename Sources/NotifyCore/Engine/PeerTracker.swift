/// Decides which Syncthing events are news for a peer, and which peers the stale-peer sweep wakes.
///
/// A wake-up is worth a push only when this server has data that some peer does not have yet. Progress on data a
/// peer already knows it needs is not news: Syncthing repeats FolderCompletion every few seconds while a connected
/// peer downloads (docs/syncthing-api.md, Completion and connections), and waking the phone for each report would spend
/// its silent-push budget for nothing. The tracker keeps, per (remote device, folder) pair, whether the peer is in sync
/// or needs data, and reads the events against the configured topology:
///
/// - `LocalIndexUpdated` in a watched folder is news only when the folder is shared with at least one remote device
///   (device and folder unpaused, the pair not declined by the remote). It marks every such pair as needing data, so
///   the FolderCompletion reports that follow the same change are not news a second time.
/// - `FolderCompletion` for a pair is news only on the edge from "in sync" (or not yet seen) to "needs data";
///   "in sync" means needItems, needBytes and needDeletes are all 0 (not `completion == 100`). A report of
///   "in sync" with `sequence` 0 is no news of any kind: Syncthing sends it while no index from the peer has arrived
///   (measured on 1.19.2 and 1.29.5: a peer that just accepted a folder is reported complete at sequence 0, then
///   needing data once its index arrives), so it leaves the pair's state as it was. Syncthing 2.1.3 reports such a
///   pair as needing everything instead (docs/syncthing-versions.md): that is read as a need like any other, so an
///   offline phone that never accepted a shared folder is woken by the sweep until it connects and says
///   `notSharing`, where 1.x would have said nothing until a change.
/// - A pair whose device does not share the folder is never news and never swept: a paused device, a paused folder
///   (both from the config, `/rest/config/devices` and `/rest/config/folders`), or, on Syncthing 1.20 and later, a
///   folder the remote has paused or not accepted (`remoteState` `paused` / `notSharing` in FolderCompletion events
///   and completion answers). On 1.19, which has no `remoteState`, only the config can tell.
/// - The sweep wakes only for pairs whose device is not connected right now and that need data: a connected peer is
///   already syncing, and an offline one that missed its push is woken on every sweep.
///
/// State is bounded by the configured devices × folders: pairs that leave the config are forgotten, and before the
/// config is known at most `untrackedLimit` pairs are kept. A re-sync (lost events, a Syncthing restart) forgets
/// every pair's sync state, since events that would have moved it may be lost.
///
/// A pair whose remote side is unconfirmed (newly listed, or listed when events were lost, and no read or event with
/// `remoteState` has told it since) may have been declined, paused or accepted meanwhile: a change in its folder is
/// news, but marks nothing, so that its acceptance or resume with a need is still an edge.
///
/// Until the config has been read, and between a `ConfigSaved` event and the next read, a `LocalIndexUpdated` in a
/// watched folder is news (never miss a change for want of a config); so is one in a folder the config does not list.
package struct PeerTracker: Sendable, Equatable {
    /// Whether a pair's peer has everything this server has, as far as the events and answers told.
    package enum SyncState: Sendable, Equatable {
        case inSync
        case needsData
    }

    /// Pairs kept before the config is known (a bound against a server that sends endless distinct IDs).
    package static let untrackedLimit = 4096

    package let rules: WakeRules
    /// The (remote device, folder) pairs that share data: unpaused device × unpaused, watched folder it is listed in.
    /// Nil until the config is read.
    package private(set) var sharedPairs: Set<SweepPair>? {
        didSet {
            sharedCounts = sharedPairs.map { pairs in
                SharedCounts(folders: Set(pairs.map(\.folder)).count, devices: Set(pairs.map(\.device)).count)
            }
            sharedByFolder = Dictionary(grouping: sharedPairs ?? [], by: \.folder)
        }
    }
    /// `sharedPairs` by folder ID, so that a local change looks up its folder's pairs instead of filtering them all.
    private var sharedByFolder: [String: [SweepPair]] = [:]
    /// How many folders and devices `sharedPairs` holds, counted once per config read instead of at every report.
    package private(set) var sharedCounts: SharedCounts?

    package struct SharedCounts: Sendable, Equatable {
        package var folders: Int
        package var devices: Int
    }
    /// Folder IDs the config lists (shared or not).
    private var knownFolders: Set<String> = []
    /// Counts `ConfigSaved` events.
    package private(set) var configGeneration = 0
    /// The `configGeneration` the config in hand reflects: that of the latest read when it started.
    private var readGeneration = 0
    /// True after a `ConfigSaved` event, until a config read that started after it lands.
    package var configStale: Bool { readGeneration != configGeneration }
    /// Last known sync state per pair.
    package private(set) var states: [SweepPair: SyncState] = [:]
    /// Pairs the remote reported as `paused` or `notSharing` (Syncthing 1.20+).
    package private(set) var declined: Set<SweepPair> = []
    /// Every (remote device, folder) pair the config lists, paused or not: whose declines are remembered.
    private var listedPairs: Set<SweepPair> = []
    /// Counts the events read (`news(in:)`): an answer asked for before a pair's last event is older than what that
    /// event said.
    package private(set) var eventsRead = 0
    /// `eventsRead` when an event last set a pair's state.
    private var lastEvent: [SweepPair: Int] = [:]
    /// Pairs a sweep or snapshot answer found needing data while the events still said in sync (a need its event
    /// has not told yet): that event is still news when it comes.
    private var untold: Set<SweepPair> = []
    /// Pairs whose remote side no read or event has told since they were first listed, or since events were lost
    /// (they may have held the remote's pause, decline or acceptance). A change in them is news, but they keep no
    /// sync state (a resume or an acceptance that comes with a need must still be an edge).
    private var unconfirmed: Set<SweepPair> = []

    package init(rules: WakeRules) { self.rules = rules }

    /// How many entries the tracker holds (pairs, their states, declines, known folders): bounded by the configured
    /// devices × folders, never by time or by the number of events.
    package var heldEntries: Int {
        (sharedPairs?.count ?? 0) + listedPairs.count + knownFolders.count + states.count + declined.count
            + lastEvent.count + untold.count + unconfirmed.count
    }

    // MARK: - Config

    /// Takes the configured devices and folders (`/rest/config/devices`, `/rest/config/folders`); forgets the state
    /// of pairs that are no longer shared.
    /// - Parameters:
    ///   - myID: this server's Device ID (its own entry in the device list is not a peer).
    ///   - generation: `configGeneration` when the read started; nil means "current". A read older than the latest
    ///     `ConfigSaved` is still used (it is the best known), but leaves `configStale` set, so it is read again.
    package mutating func setConfig(
        myID: String, devices: [ConfiguredDevice], folders: [ConfiguredFolder], generation: Int? = nil
    ) {
        let pairs = Set(SharedPairs.of(myID: myID, devices: devices, folders: folders, rules: rules))
        let first = sharedPairs == nil
        sharedPairs = pairs
        knownFolders = Set(folders.map(\.id))
        readGeneration = max(readGeneration, generation ?? configGeneration)
        states = states.filter { pairs.contains($0.key) }
        // A decline is the remote's side of the pair: pausing the folder or the device here does not change it, so
        // it is kept while the config still lists the pair; a pair no longer listed is a new offer if shared again.
        let listed = Set(
            folders.flatMap { f in f.deviceIDs.filter { $0 != myID }.map { SweepPair(device: $0, folder: f.id) } })
        // A pair listed for the first time (the first config, or a folder newly shared with a device): what its
        // remote does is unknown until a read or an event says it.
        let new = first ? listed : listed.subtracting(listedPairs)
        unconfirmed.formUnion(new.filter { states[$0] == nil && !declined.contains($0) })
        listedPairs = listed
        declined = declined.intersection(listedPairs)
        lastEvent = lastEvent.filter { listedPairs.contains($0.key) }
        untold = untold.intersection(pairs)
        unconfirmed = unconfirmed.intersection(listedPairs)
    }

    /// A `ConfigSaved` event arrived: sharing may have changed until the config is read again.
    package mutating func configChanged() { configGeneration += 1 }

    /// After lost events or a Syncthing restart: forget every pair's sync state, hold every pair's side as
    /// unconfirmed (the events that would have moved them may be gone; the snapshot read that follows learns them
    /// again), and take the config as stale until it is read again (they may have held a ConfigSaved).
    package mutating func resynced() {
        states = [:]
        lastEvent = [:]
        untold = []
        // The lost events may have held a peer's acceptance, or its pause: until a read of the pairs says again what
        // each remote does, a declined pair is only possibly declined (a change then wakes, rather than being missed),
        // and a sharing one only possibly sharing (its resume with a need is then still an edge).
        unconfirmed.formUnion(listedPairs)
        unconfirmed.formUnion(declined)
        declined = []
        // They may have held a ConfigSaved: until a config read after this lands, the config is stale.
        configChanged()
    }

    // MARK: - Events

    /// What one batch of events came to: how many are news, and the decision for each event that the `recent` list
    /// shows (`DecisionCause`), in order, with the devices a changed folder is shared with.
    package struct Reading: Sendable, Equatable {
        package var news = 0
        package var decisions: [(cause: DecisionCause, devices: Int?)] = []

        package static func == (a: Reading, b: Reading) -> Bool {
            a.news == b.news
                && a.decisions.elementsEqual(b.decisions) { $0.cause == $1.cause && $0.devices == $1.devices }
        }
    }

    /// Reads one batch of events in order, updates the pairs, and counts the events that are news.
    /// - Returns: how many events of the batch are news (0: nothing worth a wake-up).
    package mutating func news(in events: [SyncthingEvent]) -> Int { read(events).news }

    /// Reads one batch of events in order, updates the pairs, and says what each event that matters was: news or
    /// not, by which rule. Events of other types, and `FolderCompletion` for folders that are not watched or not
    /// shared, are left out of `decisions`.
    package mutating func read(_ events: [SyncthingEvent]) -> Reading {
        var reading = Reading()
        for event in events {
            eventsRead += 1
            var decision: (cause: DecisionCause, devices: Int?)?
            switch event.type {
            case "LocalIndexUpdated": decision = localChange(in: event.folder)
            case "FolderCompletion": decision = completion(event).map { ($0, nil) }
            case "ConfigSaved": configChanged()
            default: break
            }
            guard let decision else { continue }
            if decision.cause.isNews { reading.news += 1 }
            reading.decisions.append(decision)
        }
        return reading
    }

    private mutating func localChange(in folder: String?) -> (cause: DecisionCause, devices: Int?) {
        guard rules.watches(folder) else { return (.changeUnwatched, nil) }
        guard sharedPairs != nil, !configStale, let folder, knownFolders.contains(folder) else {
            return (.changeSharingUnknown, nil)
        }
        let listed = sharedByFolder[folder] ?? []
        let peers = listed.filter { !declined.contains($0) }
        for pair in peers where !unconfirmed.contains(pair) {
            states[pair] = .needsData
            lastEvent[pair] = eventsRead
            untold.remove(pair)
        }
        if peers.isEmpty { return (listed.isEmpty ? .changeUnshared : .changeDeclined, nil) }
        // One folder's pairs name each device once.
        return (.change, peers.count)
    }

    /// The decision for one FolderCompletion event; nil when it concerns a folder that is not watched, a pair
    /// not shared, or one past `untrackedLimit`.
    private mutating func completion(_ event: SyncthingEvent) -> DecisionCause? {
        guard let device = event.device, let folder = event.folder, rules.watches(folder) else { return nil }
        let pair = SweepPair(device: device, folder: folder)
        let shared = sharedPairs?.contains(pair)
        if shared == false && !configStale {
            // Not shared now (paused here), but what the remote says of its side still holds when it is again.
            if listedPairs.contains(pair) {
                lastEvent[pair] = eventsRead
                _ = note(event.remoteState, for: pair)
            }
            return nil
        }
        // Outside a known config, keep at most `untrackedLimit` pairs (states and declines together).
        if shared != true, states[pair] == nil, !declined.contains(pair),
            states.count + declined.count >= Self.untrackedLimit
        {
            return nil
        }
        lastEvent[pair] = eventsRead
        guard note(event.remoteState, for: pair) else { return .peerDeclined }
        let before = states[pair]
        let needs = event.peerNeedsData

        if Self.saysNothing(inSync: !needs, sequence: event.sequence) { return .peerProgress }
        states[pair] = needs ? .needsData : .inSync
        let told = untold.remove(pair) != nil
        return needs && (before != .needsData || told) ? .peerNeedsData : .peerProgress
    }

    /// "Complete" at sequence 0 is no news of any kind: Syncthing reports it while no index from the peer has arrived
    /// (see the type's docs), in FolderCompletion events and completion answers alike.
    private static func saysNothing(inSync: Bool, sequence: Int64?) -> Bool { inSync && sequence == 0 }

    /// Records what the remote said of its side of the pair. Returns false when the pair is declined.
    private mutating func note(_ remote: RemoteFolderState?, for pair: SweepPair) -> Bool {
        switch remote {
        case .paused?, .notSharing?:
            declined.insert(pair)
            unconfirmed.remove(pair)
            states[pair] = nil
            return false
        case .valid?:
            // Accepted (again): what it needs from now on is news, whatever was known before.
            if declined.remove(pair) != nil || unconfirmed.remove(pair) != nil { states[pair] = nil }
            return true
        case .unknown?, nil:
            return !declined.contains(pair)
        }
    }

    // MARK: - Stale-peer sweep

    /// The pairs the sweep asks `/rest/db/completion` about: every shared pair, declined ones too (their answer's
    /// `remoteState` is how a pair the remote has resumed or accepted comes back, even when the event that said so
    /// was lost); `absorb` never counts a declined one. Empty until the config is known.
    package var sweepPairs: [SweepPair] {
        guard let shared = sharedPairs else { return [] }
        return shared.sorted { ($0.device, $0.folder) < ($1.device, $1.folder) }
    }

    /// Whether the remote has declined the pair (`remoteState` paused or notSharing, and not `valid` since).
    package func isDeclined(_ pair: SweepPair) -> Bool { declined.contains(pair) }

    /// How many of `observations` are pairs whose device is connected and that need data, as the tracker holds
    /// them now (after `absorb`): the peers the sweep leaves alone because they are syncing.
    package func connectedNeeding(_ observations: [SweepObservation]) -> Int {
        observations.count { o in
            o.connected && states[o.pair] == .needsData && !declined.contains(o.pair)
                && sharedPairs?.contains(o.pair) != false
        }
    }

    /// Takes the sweep's answers (also used as a snapshot at start and after a re-sync) and counts the pairs worth
    /// a wake-up: not connected right now, needing data, and not declined by the remote. "Needing data" is what the
    /// answer says, except for a blind answer (complete at sequence 0: no index from the peer yet), which leaves the
    /// state the events gave (a local change the peer has not seen still counts).
    /// - Returns: the number of offline pairs that need data.
    /// - Parameter askedAt: `eventsRead` when the answers were asked for (default: now). A pair that an event
    ///   updated since keeps what the event said: the answer is older (a slow read that lands after a newer
    ///   FolderCompletion must not turn "in sync" back into "needs data", or the next need would not be news).
    package mutating func absorb(_ observations: [SweepObservation], askedAt: Int? = nil) -> Int {
        let askedAt = askedAt ?? eventsRead
        var offlineNeeding = 0
        for o in observations {
            if let shared = sharedPairs, !shared.contains(o.pair) { continue }
            let fresher = (lastEvent[o.pair] ?? Int.min) > askedAt
            if fresher {
                guard !declined.contains(o.pair) else { continue }
            } else {
                let wasDeclined = declined.contains(o.pair)
                guard note(o.completion.remoteState, for: o.pair) else { continue }
                // The read says again what the remote does (sharing, as far as it can tell).
                unconfirmed.remove(o.pair)
                // What the events told (a local change marked the pair as needing data) stands.
                if !Self.saysNothing(inSync: o.completion.inSync, sequence: o.completion.sequence) {
                    let needs = !o.completion.inSync
                    // In sync by the events (or declined: the answer found its acceptance), needing data by the
                    // answer: the FolderCompletion that tells of it may still be on its way (an offline peer is
                    // woken by the sweep instead).
                    let edge = states[o.pair] == .inSync || wasDeclined
                    if needs && edge && o.connected { untold.insert(o.pair) }
                    if !needs { untold.remove(o.pair) }
                    states[o.pair] = needs ? .needsData : .inSync
                }
            }
            if !o.connected && states[o.pair] == .needsData { offlineNeeding += 1 }
        }
        return offlineNeeding
    }
}
