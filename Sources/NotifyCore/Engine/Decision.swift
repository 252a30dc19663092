/// What the engine decided about something it read, for `--status`'s `recent` list and METRICS_FILE's
/// `vaultsync_notify_decisions_total`: one of README's "When the phone is woken, and when it is not", the rule that
/// applied. The raw values are the state file's, the JSON's `decision` and the metric's `decision` label. No case
/// carries an identifier.
package enum DecisionCause: String, Sendable, Equatable, CaseIterable {
    /// The startup announce (STARTUP_ANNOUNCE).
    case announce
    /// `LocalIndexUpdated` in a watched folder shared with at least one remote device that has not declined it.
    case change
    /// `LocalIndexUpdated` in a watched folder whose sharing is not known (config not read yet, or changed since).
    case changeSharingUnknown = "change-sharing-unknown"
    /// `LocalIndexUpdated` in a folder WATCHED_FOLDERS leaves out.
    case changeUnwatched = "change-unwatched"
    /// `LocalIndexUpdated` in a folder shared with no unpaused device, or a paused folder.
    case changeUnshared = "change-unshared"
    /// `LocalIndexUpdated` in a folder each of whose devices has not accepted it or has paused it on its side.
    case changeDeclined = "change-declined"
    /// `FolderCompletion`: a peer went from in sync (or not yet seen) to needing data.
    case peerNeedsData = "peer-needs-data"
    /// `FolderCompletion` that tells nothing new: progress of a need already known, or in sync.
    case peerProgress = "peer-progress"
    /// `FolderCompletion` with `remoteState` `notSharing` or `paused`: the peer has not accepted the folder.
    case peerDeclined = "peer-declined"
    /// A gap in event ids, an oversized or cut poll: events were lost.
    case eventsLost = "events-lost"
    /// Syncthing restarted (new start time, new Device ID, ids going back).
    case syncthingRestarted = "syncthing-restarted"
    /// Syncthing answers again after re-syncs that could not wake while it was unreachable.
    case syncthingBack = "syncthing-back"
    /// The sweep found a peer that is not connected and needs data.
    case sweepOffline = "sweep-offline"
    /// The sweep found peers that need data, all connected: they are syncing.
    case sweepConnected = "sweep-connected"
    /// The sweep found no peer needing data.
    case sweepInSync = "sweep-in-sync"
    /// The relay answered a trigger (`Decision.reason` says why it was sent).
    case relayAnswer = "wake-answered"

    /// True for the causes that are news: they wake (or join a wake-up), whatever holds it back.
    package var isNews: Bool {
        switch self {
        case .announce, .change, .changeSharingUnknown, .peerNeedsData, .eventsLost, .syncthingRestarted,
            .syncthingBack, .sweepOffline:
            true
        case .changeUnwatched, .changeUnshared, .changeDeclined, .peerProgress, .peerDeclined, .sweepConnected,
            .sweepInSync, .relayAnswer:
            false
        }
    }
}

/// What came of a decision, at times of type `Time` (`Instant` in the engine, Unix seconds in the state file).
package enum DecisionOutcome<Time: Sendable & Equatable>: Sendable, Equatable {
    /// No wake-up for it (the cause says why).
    case notWoken
    /// A wake-up goes out at `at`, the end of its debounce.
    case scheduled(at: Time)
    /// A wake-up is due but held back by the relay: its push window, no active subscription, a backoff or a
    /// Retry-After (`RelayGate`, never `.open`).
    case held(RelayGate<Time>)
    /// Joins the next wake-up, after the one the relay has not answered yet.
    case afterInFlight
    /// A trigger was sent at once.
    case sent
    /// Not woken again: a trigger went out after it, and its push fetches the same data.
    case alreadyWoken
    /// Re-synced while Syncthing is unreachable: the wake-up goes out once polling works again (`syncthingBack`).
    case deferred
    /// The relay's answer to a trigger; `retryAt` when the wake-up is kept and goes out again then.
    case answered(RelayOutcomeCategory, retryAt: Time?)

    /// The state file's and the JSON's `outcome`.
    package var kind: String {
        switch self {
        case .notWoken: "not-woken"
        case .scheduled: "scheduled"
        case .held: "held"
        case .afterInFlight: "after-in-flight"
        case .sent: "sent"
        case .alreadyWoken: "already-woken"
        case .deferred: "deferred"
        case .answered: "answered"
        }
    }

    /// The time it names (when a wake-up goes out, a hold ends, a retry comes), if any.
    package var time: Time? {
        switch self {
        case .scheduled(let at): at
        case .held(.waiting(_, let until)), .held(.window(let until)): until
        case .answered(_, let retryAt): retryAt
        case .held(.open), .notWoken, .afterInFlight, .sent, .alreadyWoken, .deferred: nil
        }
    }

    /// The same outcome with its times converted.
    package func map<Other>(_ convert: (Time) -> Other) -> DecisionOutcome<Other> {
        switch self {
        case .notWoken: .notWoken
        case .scheduled(let at): .scheduled(at: convert(at))
        case .held(let gate): .held(gate.map(convert))
        case .afterInFlight: .afterInFlight
        case .sent: .sent
        case .alreadyWoken: .alreadyWoken
        case .deferred: .deferred
        case .answered(let answer, let retryAt): .answered(answer, retryAt: retryAt.map(convert))
        }
    }
}

/// One entry of the `recent` list: when, what, and what came of it. Consecutive entries that say the same (same
/// cause, counts, reason and kind of outcome) are one entry whose `count` grows and whose time and outcome are the
/// latest's, so that Syncthing's progress reports every few seconds do not push everything else out.
package struct Decision<Time: Sendable & Equatable>: Sendable, Equatable {
    /// Numbers the entries of one run, from 1, in the order they were made (a folded one keeps its number): a reader
    /// of successive lists tells an entry it has already seen from a new one.
    package var serial: Int
    /// When it was decided (or last folded into).
    package var at: Time
    package var cause: DecisionCause
    /// How many remote devices it concerns: the devices a changed folder is shared with (`change`), the offline
    /// peers that need data (`sweepOffline`); nil otherwise.
    package var devices: Int?
    /// Why the answered trigger was sent (`relayAnswer` only).
    package var reason: WakeReason?
    package var outcome: DecisionOutcome<Time>
    /// How many consecutive decisions this entry stands for (at least 1).
    package var count: Int

    package init(
        serial: Int, at: Time, cause: DecisionCause, devices: Int? = nil, reason: WakeReason? = nil,
        outcome: DecisionOutcome<Time>, count: Int = 1
    ) {
        self.serial = serial
        self.at = at
        self.cause = cause
        self.devices = devices
        self.reason = reason
        self.outcome = outcome
        self.count = count
    }

    /// The same entry with its times converted.
    package func map<Other>(_ convert: (Time) -> Other) -> Decision<Other> {
        Decision<Other>(
            serial: serial, at: convert(at), cause: cause, devices: devices, reason: reason,
            outcome: outcome.map(convert), count: count)
    }

    /// True when `other` says the same as this entry, times and counts aside (then it is folded into it).
    func saysSame(as other: Decision) -> Bool {
        cause == other.cause && devices == other.devices && reason == other.reason
            && outcome.kind == other.outcome.kind && answer == other.answer
    }

    private var answer: RelayOutcomeCategory? {
        if case .answered(let answer, _) = outcome { answer } else { nil }
    }
}

/// The engine's last decisions, a bounded ring on the monotonic timeline: at most `capacity` entries, oldest
/// dropped first. Appending costs O(1) amortized; it never grows with time or with the number of events.
package struct DecisionLog: Sendable, Equatable {
    /// Entries kept: about what `--status` shows on one screen.
    package static let capacity = 20

    /// Oldest first.
    package private(set) var entries: [Decision<Instant>] = []
    /// Decisions made in this run, folded ones included (`serial` of the next new entry minus one is fewer).
    package private(set) var total = 0
    private var lastSerial = 0

    package init() {}

    /// Notes a decision: folded into the newest entry when it says the same, else a new entry.
    package mutating func note(
        _ cause: DecisionCause, at now: Instant, devices: Int? = nil, reason: WakeReason? = nil,
        outcome: DecisionOutcome<Instant>
    ) {
        total += 1
        let entry = Decision(
            serial: lastSerial + 1, at: now, cause: cause, devices: devices, reason: reason, outcome: outcome)
        if let last = entries.indices.last, entries[last].saysSame(as: entry) {
            entries[last].at = now
            entries[last].outcome = outcome
            entries[last].count += 1
            return
        }
        lastSerial += 1
        if entries.count == Self.capacity { entries.removeFirst() }
        entries.append(entry)
    }
}
