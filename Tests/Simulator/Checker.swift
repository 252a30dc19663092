import NotifyCore

/// The judge of one run, written from README's promises with a model of its own: it is told what the world did (the
/// ground truth: every event Syncthing made, which folders were shared, what the relay answered and whether it
/// pushed) and what crossed the wire, never what the engine decided. It checks (docs/architecture.md, "The
/// simulator"):
///
/// - **Recall**: every piece of news is followed by a push (a trigger the relay accepted outside its push window)
///   within a bound: debounce max after the service could know of it, stretched only by the relay's own answers
///   (the push window, Retry-After, the backoff table, the subscription re-check); or the run ended first, and the
///   stop said a wake-up was left pending.
/// - **Precision**: no trigger without a reason README lists; no trigger swallowed by the relay's push window; one
///   POST in flight at most; Retry-After, the backoff table and the re-check cadence honoured.
/// - The poll loop never goes quiet: after every answer the next request goes within the backoff cap.
/// - Exits only for the documented causes; no identifier in any log line or `--status` text; state bounded by the
///   configuration.
final class Checker: @unchecked Sendable {
    // @unchecked: the simulation runs on one thread.

    struct Settings {
        var debounce: Duration
        var debounceMax: Duration
        var window: Duration?
        var sweep: Duration?
        var announce: Bool
        var shutdownGrace: Duration = .seconds(5)
        var inactiveRecheck: Duration = .seconds(60)
        var backoff = Backoff()
        /// The poll loop's backoff cap: no longer than this between an answer and the next request.
        var pollBackoffCap: Duration = .seconds(5)
    }

    struct Violation: CustomStringConvertible {
        var promise: String
        var detail: String
        /// When it happened, on the host's monotonic clock, and in true time (for the trace around it).
        var at: Instant
        var trueAt: Duration
        var description: String { "\(promise): \(detail)" }
    }

    /// One request of the poll loop (status, event head, long-poll) and what came back.
    struct Exchange {
        enum Route { case status, head, poll }
        var route: Route
        var sent: Instant
        var answered: Instant
        /// Syncthing's run that answered, when the answer was good.
        var run: Int?
        /// 200 with a well-formed body.
        var good: Bool
        var since: Int?
        /// The ids a good long-poll answer carried.
        var delivered: [Int]
        /// A good head answer's id.
        var head: Int?
        var startTime: String?
    }

    enum EventKind {
        case local(folder: String)
        /// `edge`: the peer went from in sync to needing data without a local change (it reset, or accepted).
        case completion(device: String, folder: String, needs: Bool, sequence: Int64, remote: String, edge: Bool)
        case configSaved
    }

    /// What a 429's Retry-After meant, as the relay sent it.
    enum RetryAfterMeaning {
        case seconds(Int64)
        /// An HTTP-date sent without a `Date` header: read against the host's wall clock (seconds since the epoch).
        case dateAgainstHostClock(Int64)
        case unreadable
    }

    struct RelayAnswer {
        var status: Int?
        var error: TransportError?
        var retryAfter: RetryAfterMeaning?
        var pushed: Bool
        var swallowed: Bool
        var hostWallSeconds: Int64
    }

    let settings: Settings
    private let trueNow: () -> Duration
    private let monotonicNow: () -> Instant
    private(set) var violations: [Violation] = []
    /// Planted identifiers no output may carry.
    var identifiers: [String] = [] {
        didSet { identifierBytes = identifiers.map { Array($0.utf8) } }
    }
    private var identifierBytes: [[UInt8]] = []
    /// Accepted Device IDs for the trigger body.
    var deviceIDs: [String] = []
    /// WATCHED_FOLDERS as the world set it; empty: all.
    var watched: Set<String> = []

    init(settings: Settings, trueNow: @escaping () -> Duration, monotonicNow: @escaping () -> Instant) {
        self.settings = settings
        self.trueNow = trueNow
        self.monotonicNow = monotonicNow
    }

    /// Told of the first broken promise (the world stops the run there: only the first is reported).
    var onViolation: () -> Void = {}

    private func fail(_ promise: String, _ detail: String, at: Instant? = nil) {
        let when = at ?? monotonicNow()
        violations.append(
            Violation(promise: promise, detail: detail, at: when, trueAt: trueNow() - (monotonicNow() - when)))
        if violations.count == 1 { onViolation() }
    }

    private static let epsilon: Duration = .milliseconds(5)

    // MARK: - Reasons to wake

    /// A reason the service may (or must) wake the relay for: a piece of news, a loss of events, the announce, a peer
    /// left behind at a sweep.
    private final class Reason {
        let label: String
        /// Recall applies: a push must follow.
        var must: Bool
        /// The pair a sweep's answer was about (`device/folder`).
        var pair: String?
        /// Settled only by a trigger sent strictly after it was known: a loss of events, which a trigger sent at
        /// the same instant may have preceded (nothing orders the two but their instants).
        var strict = false
        let created: Instant
        /// When the service could know of it.
        var known: Instant?
        /// A loss: the deadline runs from the first clean poll (and its status read) sent at or after `cleanFrom`.
        var awaitsClean = false
        var cleanFrom: Instant?
        /// The trigger must be sent by then (nil until it is).
        var due: Instant?
        var reportedLate = false
        init(_ label: String, must: Bool, created: Instant) {
            self.label = label
            self.must = must
            self.created = created
        }
    }

    /// Reasons made but not yet known to the service, by Syncthing run and event id.
    private var unknown: [Int: [Int: Reason]] = [:]
    /// News made while the run had no subscription yet (by run): lost, known once the service saw the new run.
    private var unsubscribed: [Int: [Reason]] = [:]
    /// Known and not yet covered by a push.
    private var open: [Reason] = []

    private var folderFacts: [String: (paused: Bool, devices: [(device: String, paused: Bool, remote: String)])] = [:]
    /// When each folder was last shared (now, while it is).
    private var lastShared: [String: Instant] = [:]
    /// When the service last took in a ConfigSaved (a delivered batch held one).
    private var lastConfigSaved: Instant?
    /// ConfigSaved events not delivered yet, by run.
    private var configSavedIDs: [Int: Set<Int>] = [:]
    /// The start of the last config read (devices and folders) that came back whole.
    private var configKnownSince: Instant?
    private var configReadStart: Instant?
    private var lastLoss: Instant?
    /// Whether the last completion report made for a pair said it needs data.
    private var reportedNeeds: [String: Bool] = [:]
    /// When the last report of a pair saying there is nothing for it to fetch (in sync, or declined) was made.
    private var reportedInSyncAt: [String: Instant] = [:]

    private func watched(_ folder: String) -> Bool { watched.isEmpty || watched.contains(folder) }

    private func shared(_ folder: String) -> Bool {
        guard let facts = folderFacts[folder], !facts.paused else { return false }
        return facts.devices.contains { !$0.paused && $0.remote == "valid" }
    }

    private func pairUnpausedHere(_ device: String, _ folder: String) -> Bool {
        guard let facts = folderFacts[folder], !facts.paused else { return false }
        return facts.devices.contains { $0.device == device && !$0.paused }
    }

    private func pairShared(_ device: String, _ folder: String) -> Bool {
        guard let facts = folderFacts[folder], !facts.paused else { return false }
        return facts.devices.contains { $0.device == device && !$0.paused && $0.remote == "valid" }
    }

    /// Whether what the service knows of `folder`'s sharing may be out of date (README: until the config is read, and
    /// between a ConfigSaved and the next read, a change in a watched folder is news).
    private func mayBeStale(_ folder: String) -> Bool {
        guard let since = configKnownSince else { return true }
        // A decline is known only from a whole read of the pair's state since events were last lost: until then, a
        // folder its device has not accepted may still be taken for shared.
        if let facts = folderFacts[folder], !facts.paused,
            facts.devices.contains(where: { d in
                guard !d.paused, d.remote != "valid" else { return false }
                guard let read = pairReadAt[d.device + "/" + folder] else { return true }
                return (lastLoss ?? .zero) >= read
            })
        {
            return true
        }
        if let saved = lastConfigSaved, saved >= since { return true }
        if let loss = lastLoss, loss >= since || loss >= (declinesKnownSince ?? .zero) { return true }
        return (lastShared[folder] ?? .zero) >= since
    }

    // MARK: - The world's ground truth

    /// The facts that decide whether `folder` is shared changed (or are told for the first time).
    /// When the facts of any folder's sharing last changed.
    private var lastSharingChange: Instant?

    func sharing(folder: String, paused: Bool, devices: [(device: String, paused: Bool, remote: String)], at: Instant) {
        lastSharingChange = at
        if shared(folder) { lastShared[folder] = at }
        folderFacts[folder] = (paused, devices)
        if shared(folder) { lastShared[folder] = at }
        // The service forgets what it knew of a pair that is no longer shared: its next need, once the pair is
        // shared again, may be news.
        for d in devices where paused || d.paused { reportedNeeds[d.device + "/" + folder] = nil }
    }

    func syncthingStarted(run: Int, at: Instant) {}

    func deviceConnected(_ device: String, _ connected: Bool, at: Instant) {}

    /// Syncthing made an event (`id` nil: no subscription existed to take it).
    /// - Returns: how the checker reads it: `news`, `maybe news` or `not news`.
    @discardableResult
    func eventCreated(run: Int, id: Int?, kind: EventKind, at: Instant) -> String {
        quietCheck(now: at)
        var reason: Reason?
        // A ConfigSaved made before it and not delivered yet comes before it in the same answer: the service then
        // reads it with a stale config.
        let afterConfigSaved = id != nil && !(configSavedIDs[run]?.isEmpty ?? true)
        switch kind {
        case .local(let folder):
            guard watched(folder) else { break }
            if shared(folder) { lastShared[folder] = at }
            let must = shared(folder)
            if must || afterConfigSaved || mayBeStale(folder) {
                reason = Reason("change in a watched folder", must: must, created: at)
            }
        case .completion(let device, let folder, let needs, let sequence, let remote, let edge):
            let key = device + "/" + folder
            let before = reportedNeeds[key]
            if sequence != 0 || needs { reportedNeeds[key] = needs }
            if (!needs && sequence != 0) || remote == "paused" || remote == "notSharing" { reportedInSyncAt[key] = at }
            // "In sync" at sequence 0 says nothing (README); a need is a need.
            guard watched(folder), needs, remote != "notSharing", remote != "paused" else { break }
            let must = edge && pairShared(device, folder)
            // A pair no whole read has told since events were last lost (or ever): the service cannot tell a need
            // from an acceptance with one, which is an edge.
            let unconfirmed = pairReadAt[key].map { (lastLoss ?? .zero) >= $0 } ?? true
            if must || before != true || afterConfigSaved || unconfirmed || mayBeStale(folder) {
                reason = Reason("a peer needs data", must: must, created: at)
            } else if let id {
                latent[run, default: [:]][id] = (key, at)
            }
        case .configSaved:
            if let id { configSavedIDs[run, default: []].insert(id) } else { lastConfigSaved = at }
        }
        guard let reason else { return "not news" }
        if let id {
            unknown[run, default: [:]][id] = reason
        } else {
            unsubscribed[run, default: []].append(reason)
        }
        return reason.must ? "news" : "maybe news"
    }

    private var subscribedAt: [Int: Instant] = [:]
    /// Reports of a need already known (no news when made), by run and id: one a completion answer overtakes (read
    /// after it was made, before it was delivered) may be read as an edge, since nothing orders the two.
    private var latent: [Int: [Int: (pair: String, made: Instant)]] = [:]
    /// When a completion answer for each pair came back.
    private var pairAnsweredAt: [String: Instant] = [:]

    func subscribed(run: Int, at: Instant) { subscribedAt[run] = at }

    // MARK: - The poll loop on the wire

    private var lastPollLaneAnswer: Instant?
    private var lastGoodStatusRun: Int?
    private var lastGoodStatusStart: String?
    /// The last good, accepted long-poll (sent, run), for the clean-pair rule.
    private var lastCleanPoll: (sent: Instant, run: Int)?
    private var awaitingClean: [Reason] = []
    private var gapAwaitsStatus = false
    private(set) var started: Instant?
    private var stopping: Instant?
    private var exitedAt: Instant?

    /// A poll loop request was answered.
    func pollLaneAnswered(_ ex: Exchange) {
        checkSweep(now: ex.sent)
        livenessCheck(sent: ex.sent)
        spinCheck(ex)
        lastPollLaneAnswer = ex.answered
        if ex.good, ex.route != .poll, !unsubscribed.isEmpty {
            // News Syncthing made while no subscription took it never reaches the service: lost, and the new run
            // (this answer, or the head read that subscribes) is what tells the service so. Before the first head
            // read it is what the service starts after: the startup announce's to cover, when it is on.
            if started != nil {
                for list in unsubscribed.values { for reason in list { lose(reason, at: ex.answered) } }
            }
            unsubscribed = [:]
        }
        switch ex.route {
        case .poll:
            lastCleanPoll = nil
            guard ex.good, let run = ex.run, let since = ex.since else {
                if !ex.good { loss("a long-poll failed", at: ex.answered) }
                return
            }
            var table = unknown[run] ?? [:]
            let ids = ex.delivered
            let accepted = (ids.first ?? Int.max) > since
            if ids.isEmpty || accepted { lastCleanPoll = (ex.sent, run) }
            if var saved = configSavedIDs[run], !saved.isEmpty, saved.contains(where: { $0 <= (ids.last ?? 0) }) {
                // A ConfigSaved reached the service (or was lost in a gap it sees): its config is stale from here.
                lastConfigSaved = ex.answered
                saved = saved.filter { $0 > (ids.last ?? 0) }
                configSavedIDs[run] = saved
            }
            if accepted, let last = ids.last {
                let deliveredSet = Set(ids)
                let gap = ids.first! != since + 1 || ids.count != last - ids.first! + 1
                for (id, reason) in table where id <= last {
                    table[id] = nil
                    if deliveredSet.contains(id) && !gap {
                        know(reason, at: ex.answered)
                    } else {
                        // Lost, or read with what the lost events would have told (a peer that accepted a folder):
                        // the gap's re-sync wakes for it once this poll's status read is back.
                        lose(reason, at: ex.answered, cleanFrom: ex.sent)
                    }
                }
                for (id, report) in latent[run] ?? [:] where id <= last && deliveredSet.contains(id) && !gap {
                    if let answered = pairAnsweredAt[report.pair], answered > report.made {
                        know(
                            Reason("a need overtaken by a newer answer", must: false, created: report.made),
                            at: ex.answered)
                    }
                }
                latent = latent.filter { $0.key >= run }.mapValues { $0.filter { $0.key > last } }
                if gap {
                    loss("events lost (a gap)", at: ex.answered)
                    gapAwaitsStatus = true
                }
            } else if !ids.isEmpty {
                // Ids at or below the cursor: read as a restart, not as news.
                for (id, reason) in table where id <= ids.last! {
                    table[id] = nil
                    lose(reason, at: ex.answered)
                }
                loss("ids went back", at: ex.answered)
            }
            unknown[run] = table
        case .head:
            lastCleanPoll = nil
            guard ex.good, let run = ex.run else {
                if !ex.good { loss("the event head could not be read", at: ex.answered) }
                return
            }
            let head = ex.head ?? 0
            // After the start, a head read is a re-sync: the events between the cursor and the head are skipped.
            if started != nil { loss("the cursor was re-placed at the head", at: ex.answered) }
            if var table = unknown[run] {
                for (id, reason) in table where id <= head {
                    table[id] = nil
                    lose(reason, at: ex.answered)
                }
                unknown[run] = table
            }
            if started == nil {
                started = ex.answered
                startSweeps(at: ex.answered)
                if settings.announce {
                    let reason = Reason("the startup announce", must: true, created: ex.answered)
                    reason.known = ex.answered
                    reason.due = ex.answered + Self.epsilon
                    open.append(reason)
                }
            }
        case .status:
            if gapAwaitsStatus {
                // The service acts on a gap once the status read after it is back: its config is stale from then.
                gapAwaitsStatus = false
                lastLoss = ex.answered
            }
            guard ex.good, let run = ex.run else {
                // Only the status read right after a poll makes a clean pair.
                lastCleanPoll = nil
                return
            }
            let restarted = lastGoodStatusRun.map { $0 != run || lastGoodStatusStart != ex.startTime } ?? false
            if restarted {
                loss("Syncthing restarted", at: ex.answered)
                for (old, table) in unknown where old < run {
                    for reason in table.values { lose(reason, at: ex.answered) }
                    unknown[old] = nil
                }
            }
            lastGoodStatusRun = run
            lastGoodStatusStart = ex.startTime
            // A status read that shows a restart is one more fault, not polling that works again.
            if !restarted, let poll = lastCleanPoll, poll.run == run {
                // A poll and its status read succeeded: what a loss owed is due now.
                let ready = awaitingClean.filter { $0.cleanFrom! <= poll.sent }
                awaitingClean.removeAll { $0.cleanFrom! <= poll.sent }
                for reason in ready {
                    reason.due = ex.answered + settings.debounceMax + Self.epsilon
                    open.append(reason)
                }
            }
            lastCleanPoll = nil
        }
    }

    /// The service could know of this news now.
    /// When the last trigger that the relay turned into a push was sent.
    private var lastPushSent: Instant?

    /// A push went out after `reason` was made: the phone fetched it then (README: every change has a push after
    /// it), so no other push is owed for it; the service, which learns of it only later, may still wake for it.
    private func settleIfPushedSince(_ reason: Reason) {
        if let pushed = lastPushSent, reason.created <= pushed { reason.must = false }
    }

    private func know(_ reason: Reason, at: Instant) {
        settleIfPushedSince(reason)
        reason.known = at
        reason.due = at + settings.debounceMax + Self.epsilon
        open.append(reason)
    }

    /// This news was lost on its way to the service; a re-sync must wake for it once polling is clean again.
    private func lose(_ reason: Reason, at: Instant, cleanFrom: Instant? = nil) {
        settleIfPushedSince(reason)
        reason.known = at
        reason.cleanFrom = cleanFrom ?? at
        reason.awaitsClean = true
        awaitingClean.append(reason)
    }

    /// The service saw (or could have seen) that events may have been lost: a reason to wake, not an obligation.
    private func loss(_ label: String, at: Instant) {
        lastLoss = at
        reportedNeeds = [:]
        let reason = Reason(label, must: false, created: at)
        reason.known = at
        reason.strict = true
        open.append(reason)
    }

    /// Failed requests sent again at once, in a row: a poll loop that spins (README: backoff, never a tight loop;
    /// one immediate retry after a changed key or a re-sync is fine).
    private var immediateFailures = 0

    private func spinCheck(_ ex: Exchange) {
        let immediate = lastPollLaneAnswer.map { ex.sent - $0 < .milliseconds(100) } ?? false
        immediateFailures = !ex.good && immediate ? immediateFailures + 1 : 0
        if immediateFailures == 10 {
            fail("never spins", "10 failed Syncthing requests in a row, each sent again at once", at: ex.sent)
        }
    }

    /// The longest a working poll loop goes without an answer: a long-poll at its time limit (50 s + 15 s), then
    /// the backoff cap.
    private static let quietBound: Duration = .seconds(71)

    /// A poll loop that stopped asking at all: nothing answered for longer than any request and backoff take.
    private func quietCheck(now: Instant) {
        guard started != nil, stopping == nil, exitedAt == nil, !expect78, let last = lastPollLaneAnswer,
            now - last > Self.quietBound, !reportedQuiet
        else { return }
        reportedQuiet = true
        fail(
            "the poll loop never goes quiet", "no Syncthing request answered for \((now - last).secondsText)s", at: now)
    }
    private var reportedQuiet = false

    private func livenessCheck(sent: Instant) {
        guard stopping == nil, exitedAt == nil, let last = lastPollLaneAnswer else { return }
        if sent - last > settings.pollBackoffCap + .milliseconds(50) {
            fail(
                "the poll loop never goes quiet",
                "no request for \((sent - last).secondsText)s after an answer (backoff cap \((settings.pollBackoffCap).secondsText)s)",
                at: last + settings.pollBackoffCap)
        }
    }

    /// A config read's devices or folders answer. `asked`: when the service asked for the read (a read asked before a
    /// ConfigSaved or a loss it took in leaves its config stale, README).
    func configAnswered(folders: Bool, good: Bool, asked: Instant, sent: Instant, at: Instant) {
        if !folders {
            configReadStart = good ? asked : nil
        } else if good, let start = configReadStart {
            configKnownSince = max(configKnownSince ?? start, start)
            configReadStart = nil
        }
    }

    /// The sweep (or a snapshot) read a pair's completion. An offline peer that shares a watched folder and needs
    /// data is a reason to wake; read by a sweep that no trigger followed yet, a wake-up it must lead to (README).
    func completionAnswered(
        device: String, folder: String, needs: Bool, sequence: Int64, remote: String, connected: Bool,
        asked: Instant, at: Instant
    ) {
        checkSweep(now: at)
        jobPairs.append(device + "/" + folder)
        pairAnsweredAt[device + "/" + folder] = at
        // The answer's own remoteState says the remote's side (the world may have moved on since it was read). A
        // pair paused or unshared here since the read was asked may still count: the service judged it by the
        // config it had read.
        guard needs, !connected, remote == "valid", watched(folder) else { return }
        let listed = pairUnpausedHere(device, folder)
        guard listed || (lastSharingChange.map { $0 >= asked } ?? false) else { return }
        // The sweep's own reads: the job the service asked for when the sweep's config read ended (a re-sync's
        // snapshot may run between the two).
        let ofSweep = sweepObserveAsked.map { abs((asked - $0).seconds) < 0.002 } ?? false
        let bySweep =
            listed && ofSweep && (sweepStart.map { start in lastTriggerSent.map { $0 < start } ?? true } ?? false)
        let reason = Reason("a peer offline with data to fetch (sweep)", must: bySweep, created: at)
        reason.pair = device + "/" + folder
        reason.known = at
        // The service acts on the sweep once all its reads are back: due from the end of the job.
        sweepReasons.append(reason)
    }

    /// A job of the peers lane (a config read, or a sweep's reads) ended.
    func peersJobEnded(asked: Instant, at end: Instant) {
        defer { (peersJobVoid, peersJobObserves, jobPairs) = (false, false, []) }
        if sweepConfigRunning {
            // The sweep's config read ended: its reads of the pairs are the job asked for now.
            sweepConfigRunning = false
            sweepObserveAsked = peersJobVoid ? nil : end
        }
        // A whole read of every pair's state: what the service knows of declines is as fresh as when it asked.
        if peersJobObserves && !peersJobVoid {
            declinesKnownSince = max(declinesKnownSince ?? asked, asked)
            for pair in jobPairs { pairReadAt[pair] = asked }
        }
        // A read that failed voids the whole sweep: the next one tries again.
        if peersJobVoid { sweepReasons = [] }
        // The sweep ends with its reads of every pair (or a failed read): later reads are a re-sync's or a
        // ConfigSaved's snapshot.
        if peersJobObserves || peersJobVoid { sweepStart = nil }
        for reason in sweepReasons {
            // A report made after the read was asked says the peer has nothing to fetch (it came back and synced, or
            // its side declined the folder): the service may take that, fresher, over the answer.
            if reason.must, let pair = reason.pair, let inSync = reportedInSyncAt[pair], inSync > asked {
                reason.must = false
            }
            reason.due = end + settings.debounceMax + Self.epsilon
            open.append(reason)
        }
        sweepReasons = []
    }

    /// A request of the peers lane (config and sweep reads) ran from `sent` to `answered`.
    /// Told when the request is sent (its answer time is known then); `devices`: a config read begins with it, and
    /// the sweep's does.
    func peersRequest(sent: Instant, answered: Instant, devices: Bool, connections: Bool, voids: Bool) {
        checkSweep(now: sent)
        if voids { peersJobVoid = true }
        if connections { peersJobObserves = true }
        peersBusy.append((sent, answered))
        if peersBusy.count > 64 { peersBusy.removeFirst(peersBusy.count - 64) }
        if devices { configReadSent(sent) }
    }

    // MARK: - The sweep's promise

    /// The next sweep's deadlines: monotonic, and on the wall clock (seconds since the epoch) as an instant of the
    /// monotonic clock (moved by each suspend and NTP step). It runs at the earlier (docs/architecture.md).
    private var sweepDue: (mono: Instant, wall: Duration, wallAsMono: Instant)?
    /// The sweep in progress began at this instant (its reads belong to it).
    private var sweepStart: Instant?
    /// The sweep's config read is running; when it ended (its reads of the pairs are the job asked for then).
    private var sweepConfigRunning = false
    private var sweepObserveAsked: Instant?
    private var peersBusy: [(sent: Instant, answered: Instant)] = []
    private var lastTriggerSent: Instant?
    /// Offline peers needing data that a read found, until its job ends, and whether a read of it failed.
    private var sweepReasons: [Reason] = []
    private var peersJobVoid = false
    /// The pairs the running job read, and when the service last asked for a whole read that held each.
    private var jobPairs: [String] = []
    private var pairReadAt: [String: Instant] = [:]
    private var peersJobObserves = false
    /// When the service asked for the last read of every pair's state that came back whole.
    private var declinesKnownSince: Instant?
    /// The host's wall clock now (seconds since the epoch as a Duration).
    var wallNow: () -> Duration = { .zero }
    private static let sweepTolerance: Duration = .seconds(1)

    private func startSweeps(at: Instant) { armSweep(from: at) }

    private func armSweep(from fired: Instant) {
        guard let cadence = settings.sweep else { return }
        // The host's wall clock at `fired`, as the service read it then: a suspend or a step since moved it.
        let now = wallNow() - monotonicNow().sinceOrigin
        let then = clockChanges.first { $0.at > fired }?.before ?? now
        let wall = fired.sinceOrigin + then + cadence
        // A wall deadline that a suspend or a step carried into the past falls due when that happened.
        sweepDue = (fired + cadence, wall, max(Instant(wall - now), clockChanges.last?.at ?? fired))
    }

    /// The host's wall clock against its monotonic one before each suspend or step (the latest few), and when.
    private var clockChanges: [(at: Instant, before: Duration)] = []

    private func clockChanged(at: Instant, before: Duration) {
        if clockChanges.count == 16 { clockChanges.removeFirst() }
        clockChanges.append((at, before))
    }

    /// Whether a sweep was due before `now` and none ran; runs at every observation.
    private func checkSweep(now: Instant) {
        guard let due = sweepDue, stopping == nil, exitedAt == nil else { return }
        let fire = min(due.mono, due.wallAsMono)
        guard now > fire + Self.sweepTolerance else { return }
        let busy = peersBusy.contains { $0.sent <= fire && $0.answered > fire }
        if !busy {
            let which =
                due.wallAsMono < due.mono ? "its wall-clock deadline (a suspend or a step forward)" : "its cadence"
            fail(
                "the stale-peer sweep runs on time",
                "a sweep due at \(fire) by \(which) had not run by \(now)", at: fire + Self.sweepTolerance)
        }
        // Skipped (the last sweep's reads still ran) or reported: the timer goes on from the due time.
        armSweep(from: fire)
    }

    /// A devices read was sent at `sent`: when a sweep is due by then, this is it.
    private func configReadSent(_ sent: Instant) {
        guard let due = sweepDue else { return }
        let fire = min(due.mono, due.wallAsMono)
        guard sent + .milliseconds(1) >= fire, sent <= fire + Self.sweepTolerance else {
            // Another read of the config (a ConfigSaved's, a re-sync's snapshot): any sweep before it is over.
            sweepStart = nil
            return
        }
        sweepStart = sent
        sweepConfigRunning = true
        armSweep(from: fire)
    }

    /// The host slept for `length` (its monotonic clock stood still) and wakes now: a wall-clock deadline passed
    /// meanwhile falls due at the resume.
    func suspended(for length: Duration, at: Instant) {
        clockChanged(at: at, before: wallNow() - monotonicNow().sinceOrigin - length)
        moveWallDeadline(at: at)
    }

    /// NTP stepped the host's wall clock: the wall-clock deadline moves on the monotonic timeline.
    func wallClockStepped(by offset: Duration, at: Instant) {
        clockChanged(at: at, before: wallNow() - monotonicNow().sinceOrigin - offset)
        moveWallDeadline(at: at)
    }

    private func moveWallDeadline(at: Instant) {
        guard let due = sweepDue else { return }
        checkSweep(now: at)
        guard let again = sweepDue else { return }
        let offset = wallNow() - monotonicNow().sinceOrigin
        sweepDue = (again.mono, again.wall, max(at, Instant(again.wall - offset)))
        _ = due
    }

    // MARK: - The relay

    private var relayHasAnswered = false
    private var inFlight: (sent: Instant, carried: [Reason])?
    /// The last answer: when, and the gate it set (earliest next trigger, and when the retry is due).
    private var lastAnswer: (at: Instant, earliest: Instant, retryDue: Instant?)?
    private var lastAccepted: Instant?
    private var backoffFailures = 0
    private var awaitingJitter: (at: Instant, mayHavePushed: Bool)?
    private var lastWasRateLimit = false
    private var expect78 = false
    private var stopSaidPending: Bool?

    func relayHealthAnswered(status: Int?, at: Instant) {
        livenessCheck(sent: lastPollLaneAnswer ?? at)
        lastPollLaneAnswer = at
        if status == 200 { relayHasAnswered = true }
        if status == 404 && !relayHasAnswered { expect78 = true }
    }

    /// A trigger reached the relay at `s`; the service asked for it at `asked` (its POST may wait for the relay lane).
    func triggerSent(at s: Instant, asked: Instant, body: String, url: String) {
        checkSweep(now: s)
        lastTriggerSent = s
        if !deviceIDs.contains(where: { body == #"{"device_id": "\#($0)"}"# }) {
            fail(
                "only the Device ID leaves the server", "trigger body is not {\"device_id\": <this server's ID>}", at: s
            )
        }
        // A trigger asked for before the last answer came was in flight beside it (the relay lane takes them one by
        // one, so the second reaches the relay only after the first's answer).
        if inFlight != nil || lastAnswer.map({ asked + Self.epsilon < $0.at }) == true {
            fail("one POST in flight at most", "a trigger was sent before the last one was answered", at: s)
        }
        if let exitedAt, s > exitedAt { fail("exits only for documented causes", "a trigger after the exit", at: s) }
        // The relay's gates.
        if let gate = lastAnswer {
            var earliest = gate.earliest
            if stopping != nil, !lastWasRateLimit {
                // The last attempt at a stop ignores a backoff or re-check wait, not the push window.
                earliest = min(earliest, max(gate.at, windowEnd ?? gate.at))
            }
            if s + Self.epsilon < earliest {
                fail(
                    "the relay's answers are honoured",
                    "trigger \((earliest - s).secondsText)s before the gate "
                        + "(window, Retry-After, backoff or re-check) of the last answer ended", at: s)
            }
        }
        // Late: something was due before now.
        let required = requiredBy()
        if let required, s > required + Self.epsilon { reportLate(required, sentAt: s) }
        // Justified?
        let carried =
            open.filter { $0.known! <= s } + awaitingClean.filter { $0.known! <= s }
            + sweepReasons.filter { $0.known! <= s }
        let retry = lastAnswer.map { $0.retryDue != nil } ?? false
        if carried.isEmpty && !retry {
            fail("every wake-up carries news", "a trigger with no reason README lists", at: s)
        }
        inFlight = (s, carried)
    }

    private var windowEnd: Instant? {
        guard let window = settings.window, let accepted = lastAccepted else { return nil }
        return accepted + window
    }

    /// The latest time the next trigger may go, if one is owed.
    private func requiredBy() -> Instant? {
        guard inFlight == nil else { return nil }
        let due = open.filter { $0.must }.compactMap(\.due).min()
        // After a failed answer the wake-up is kept: its retry is due when the answer's gate ends.
        if let retry = lastAnswer?.retryDue { return retry }
        guard let due else { return nil }
        return max(due, lastAnswer?.earliest ?? due)
    }

    private func reportLate(_ required: Instant, sentAt: Instant?) {
        let late = open.filter { $0.must && !$0.reportedLate && ($0.due ?? required) <= required + Self.epsilon }
        guard !late.isEmpty || lastAnswer?.retryDue != nil else { return }
        for reason in late { reason.reportedLate = true }
        let what =
            late.first.map { "\($0.label) (made at \($0.created), known at \($0.known.map { "\($0)" } ?? "?"))" }
            ?? "the retry of a failed trigger"
        let when = sentAt.map { "sent \(($0 - required).secondsText)s late" } ?? "never sent"
        fail("never misses a change", "\(what): the trigger was due at \(required) and was \(when)", at: required)
    }

    func triggerAnswered(_ answer: RelayAnswer, at a: Instant) {
        guard let flight = inFlight else { return }
        inFlight = nil
        if answer.swallowed {
            fail(
                "never two accepted triggers inside the relay's push window",
                "the relay swallowed a trigger (no push)", at: flight.sent)
        }
        if answer.pushed {
            lastPushSent = flight.sent
            // News made before this trigger went out, and learnt while it was in flight, is fetched by this push.
            for reason in open + awaitingClean where reason.created <= flight.sent { reason.must = false }
            // A loss known at the very instant the trigger went out justifies it, but is not settled by it: the
            // service may have sent it just before it re-placed the cursor.
            let covered = Set(
                flight.carried.filter { !($0.strict && $0.known == flight.sent) }.map { ObjectIdentifier($0) })
            open.removeAll { covered.contains(ObjectIdentifier($0)) }
            awaitingClean.removeAll { covered.contains(ObjectIdentifier($0)) }
            sweepReasons.removeAll { covered.contains(ObjectIdentifier($0)) }
        }
        var mayHavePushed = false
        let status = answer.status
        switch (status, answer.error) {
        case (let s?, _) where (200...299).contains(s):
            relayHasAnswered = true
            backoffFailures = 0
            lastWasRateLimit = false
            lastAccepted = a
            lastAnswer = (a, max(a, windowEnd ?? a), nil)
            return
        case (let s?, _) where (400...403).contains(s):
            relayHasAnswered = true
            lastWasRateLimit = false
            let gate = max(a + settings.inactiveRecheck, windowEnd ?? a)
            lastAnswer = (a, gate, gate)
            return
        case (429?, _):
            relayHasAnswered = true
            lastWasRateLimit = true
            let wait = Self.retryAfter(answer.retryAfter, hostWall: answer.hostWallSeconds)
            let gate = max(a + wait, windowEnd ?? a)
            lastAnswer = (a, gate, gate)
            return
        case (404?, _) where !relayHasAnswered:
            expect78 = true
            lastAnswer = (a, a + .seconds(86_400 * 365), nil)
            return
        case (let s?, _):
            mayHavePushed = (500...599).contains(s)
        case (nil, let error?):
            switch error {
            case .dns, .connect, .tls, .cancelled: mayHavePushed = false
            default: mayHavePushed = true
            }
        case (nil, nil):
            break
        }
        // A backoff: its length needs the jitter the world draws next.
        lastWasRateLimit = false
        backoffFailures += 1
        if mayHavePushed { lastAccepted = a }
        awaitingJitter = (a, mayHavePushed)
        lastAnswer = (a, a, a)
    }

    /// The jitter the world gave the service for the backoff after the answer just reported.
    func jitterDrawn(_ jitter: Double) {
        guard let pending = awaitingJitter else { return }
        awaitingJitter = nil
        let delay = settings.backoff.delay(afterFailures: backoffFailures, jitter: jitter)
        let gate = max(pending.at + delay, windowEnd ?? pending.at)
        lastAnswer = (pending.at, gate, gate)
    }

    /// README, "Relay answers": delta seconds or an HTTP-date, missing → 30 s, clamped to 1 s … 1 h.
    static func retryAfter(_ meaning: RetryAfterMeaning?, hostWall: Int64) -> Duration {
        let seconds: Int64
        switch meaning {
        case .seconds(let s)?: seconds = s
        case .dateAgainstHostClock(let date)?: seconds = date - hostWall
        case .unreadable?, nil: return .seconds(30)
        }
        return .seconds(min(max(seconds, 1), 3600))
    }

    // MARK: - Stop, exit, outputs

    func stopRequested(at: Instant) { stopping = at }

    /// The world could not be set up (a simulator defect, reported as a failure of the run).
    func setupFailed(_ why: String) { fail("the simulator sets up a valid world", why) }

    /// The scheduler found the service spinning: work without time moving.
    func finishWithSpin(_ why: String) { fail("never spins", why) }

    /// A log record the service wrote, in both renderings.
    func logRecord(_ record: LogRecord, lines: [String]) {
        scan(lines, what: "a log line")
        if record.message == .stopped {
            stopSaidPending = record.fields.contains { $0.key == .pending }
        }
    }

    /// What `--status` would print now.
    func statusText(_ text: String) { scan([text], what: "--status") }

    private func scan(_ texts: [String], what: String) {
        for text in texts {
            var text = text
            let hit = text.withUTF8 { line in
                identifierBytes.firstIndex { id in id.withUnsafeBytes { memmemFound(line, $0) } }
            }
            if let hit {
                fail(
                    "never logs an identifier", "\(what) carries a planted identifier (\(identifiers[hit].prefix(4))…)")
                return
            }
        }
    }

    /// How the process ended. `keyFacts`: whether config.xml held Syncthing's key then, and was there.
    func exited(_ status: ExitStatus, at: Instant, configKeyRight: Bool, configPresent: Bool) {
        exitedAt = at
        switch status {
        case .ok:
            if stopping == nil { fail("exits only for documented causes", "exit 0 without a stop signal", at: at) }
        case .configuration where expect78:
            break
        case .configuration where !configKeyRight && configPresent:
            break
        default:
            fail(
                "exits only for documented causes",
                "exit \(status.rawValue) (config.xml \(configPresent ? "there" : "missing"), its key \(configKeyRight ? "right" : "wrong"))",
                at: at)
        }
        if expect78 && status != .configuration {
            fail("exits only for documented causes", "a relay 404 at start did not end with 78", at: at)
        }
    }

    /// The run is over at `end` (the service exited, or the world stopped waiting).
    func finish(at end: Instant, exited: Bool) {
        checkSweep(now: stopping ?? end)
        quietCheck(now: stopping ?? exitedAt ?? end)
        if !exited {
            fail(
                "exits only for documented causes", "the service did not exit within the grace after the stop", at: end)
        }
        if expect78 && !exited { return }
        let last = exitedAt ?? end
        let cutoff = stopping ?? last
        // Owed before the stop and never sent.
        if let required = requiredBy(), required + Self.epsilon < cutoff, !expect78 {
            reportLate(required, sentAt: nil)
        }
        // Pending at the stop: the stop must say so.
        let pendingMust = open.contains { $0.must } || awaitingClean.contains { $0.must }
        if stopping != nil, exited, pendingMust, stopSaidPending != true, !expect78 {
            fail("never misses a change", "news was pending at the stop, and the stop record did not say so", at: last)
        }
    }

    /// The state the engine holds at the end, against what the configuration allows.
    func footprint(_ entries: Int, folders: Int, devices: Int) {
        let bound = 7 * folders * devices + folders + 16
        if entries > bound {
            fail("state bounded by the configuration", "\(entries) entries held; the bound is \(bound)")
        }
    }
}
