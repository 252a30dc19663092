import NotifyCore
import Testing

@testable import NotifyRuntime
@testable import NotifyTestSupport

/// The poll loop's timelines through the real `Service` on virtual time (`ServiceRig`): which request comes next,
/// the `since=` of each long-poll, the backoffs, and which re-syncs and changes wake the relay. The debounce is zero
/// and the relay takes every trigger at once, so each wake-up is one trigger at the instant the engine decided it.
@Suite("Poll loop timelines of the real service on virtual time")
struct ServicePollLoopTests {
    static let later = "2026-12-01T00:05:00Z"
    static let refused = FakeSyncthing.Reply.failure(.connect)
    static let wrongKey = FakeSyncthing.Reply.body("Unauthorized\n", status: 401)

    static func started(_ startTime: String, id: String = ServiceRig.idA) -> FakeSyncthing.Reply {
        .body(#"{"myID":"\#(id)","startTime":"\#(startTime)"}"#)
    }
    static func change(_ id: Int) -> String { #"{"id":\#(id),"type":"LocalIndexUpdated","data":{"folder":"vault"}}"# }
    static func inSync(_ id: Int) -> String {
        #"{"id":\#(id),"type":"FolderCompletion","data":{"folder":"vault","needItems":0,"needBytes":0,"#
            + #""needDeletes":0}}"#
    }
    static let configSaved = #"{"id":1,"type":"ConfigSaved","data":{}}"#

    /// A long-poll answered with these events after `seconds`.
    static func answer(_ events: [String], after seconds: Double = 2) -> FakeSyncthing.Reply {
        .body("[" + events.joined(separator: ",") + "]", takes: .milliseconds(Int64(seconds * 1000)))
    }
    /// A long-poll that fails after `seconds`.
    static func fail(_ reply: FakeSyncthing.Reply, after seconds: Double = 0.1) -> FakeSyncthing.Reply {
        var reply = reply
        reply.takes = .milliseconds(Int64(seconds * 1000))
        return reply
    }
    static let malformed = FakeSyncthing.Reply.body(#"[{"id":1,"type":"#)

    static func at(_ seconds: Double) -> Duration { .milliseconds(Int64(seconds * 1000)) }

    /// The service with no announce, no debounce and no sweep, Syncthing's event head at `head`, run up to its
    /// first long-poll (`phase` .poll), or only started (.connect: the first status read is next; .placeHead: the
    /// first head read is next, the status answered).
    static func rig(_ phase: PollLoop.Phase = .poll, head: Int = 0) -> (ServiceRig, Timeline) {
        let rig = ServiceRig(environment: ServiceRig.environment(announce: false, debounce: .zero))
        rig.syncthing.state.withLock { $0.head = head }
        switch phase {
        case .connect: return (rig, Timeline(rig, exchanges: 0))
        case .placeHead: return (rig, Timeline(rig, exchanges: 1))
        case .poll:
            rig.start()
            return (rig, Timeline(rig))
        }
    }

    // MARK: - The ordinary round

    @Test(
        "a change 3 s into the poll wakes at once, then the status read, then the next poll; an empty 50 s answer too")
    func ordinaryRound() {
        let (rig, t) = Self.rig(head: 5)
        rig.script(.poll, [Self.answer([Self.change(6), Self.inSync(7)], after: 3), Self.answer([], after: 50)])
        rig.settle()
        #expect(t.trace == ["poll", "status", "poll", "status", "poll"])
        #expect(t.changeWakes == [.seconds(3)])
        #expect(t.logged(.eventsReceived).map(\.fields.first) == [.count(2)])
        #expect(t.seconds == 53)
        #expect(t.loopRecords.isEmpty && t.resyncs.isEmpty && t.owedWakesPaid.isEmpty)
        #expect(rig.pollCursors == [5, 7] && rig.heldPollCursor() == 7)
    }

    // MARK: - Early empty answers

    @Test("early empty answers: the first is free, then 0.5, 1, 2, 4, 5, 5 s; never a spin, never a wake-up")
    func earlyEmpty() {
        let (rig, t) = Self.rig()
        rig.script(.poll, Array(repeating: Self.answer([], after: 0.01), count: 7))
        rig.settle()
        #expect(t.sleeps == [0.5, 1, 2, 4, 5, 5])
        // Each early answer is still followed by a status read (it may be a restart).
        #expect(t.requests == Array(repeating: ["poll", "status"], count: 7).flatMap { $0 } + ["poll"])
        #expect(t.logged(.eventPollFailed).map(\.level) == Array(repeating: .debug, count: 6))
        #expect(t.logged(.eventPollFailed).map(\.fields) == (2...7).map { [.count($0)] })
        #expect(t.resyncs.isEmpty && t.changeWakes.isEmpty && rig.triggers == 0)
    }

    @Test("an answer after the 1 s mark ends a run of early ones: the next early answer is free again")
    func earlyEmptyResets() {
        let (rig, t) = Self.rig()
        rig.script(.poll, [0.01, 0.99, 1, 0.01].map { Self.answer([], after: $0) })
        rig.settle()
        #expect(t.sleeps == [0.5])
        #expect(t.requests == Array(repeating: ["poll", "status"], count: 4).flatMap { $0 } + ["poll"])
        #expect(t.logged(.syncthingUnavailable).isEmpty)
    }

    // MARK: - Lost polls

    @Test(
        "a cut, oversized or malformed poll → one warning, one waking re-sync at the head, the next poll at once",
        arguments: [ErrorCode.transportTruncated, .transportBodyTooLarge, .syncthingMalformed])
    func lostPoll(code: ErrorCode) {
        let (rig, t) = Self.rig(head: 5)
        let fault: FakeSyncthing.Reply =
            switch code {
            case .transportTruncated: .failure(.truncated)
            case .transportBodyTooLarge: .failure(.bodyTooLarge)
            default: Self.malformed
            }
        rig.script(.poll, [Self.fail(fault), Self.answer([Self.change(10)])])
        rig.syncthing.state.withLock { $0.head = 9 }
        rig.settle()
        #expect(t.trace == ["poll", "status", "head", "poll", "status", "poll"])
        #expect(t.loopRecords == [LogRecord(.warn, .eventPollFailed, [.code(code), .attempt(1)])])
        #expect(t.resyncs.map(\.restarted) == [false])
        #expect(t.resyncs.map(\.wake) == [true])
        #expect(t.sleeps.isEmpty)
        #expect(t.owedWakesPaid.isEmpty)
        #expect(rig.pollCursors == [5, 9] && rig.heldPollCursor() == 10)
    }

    @Test("repeated lost polls → back off 0.5, 1 s, no more wake-ups; the owed one is paid once polls recover")
    func repeatedLostPolls() {
        let (rig, t) = Self.rig()
        rig.script(
            .poll,
            Array(repeating: Self.fail(.failure(.truncated)), count: 3) + [Self.answer([]), Self.fail(Self.malformed)])
        rig.settle()
        #expect(t.resyncs.map(\.wake) == [true, false, false, true])
        #expect(t.sleeps == [0.5, 1])
        #expect(
            t.logged(.eventPollFailed).map(\.fields) == [
                [.code(.transportTruncated), .attempt(1)], [.code(.transportTruncated), .attempt(2)],
                [.code(.transportTruncated), .attempt(3)], [.code(.syncthingMalformed), .attempt(1)],
            ])
        // Paid once, by the answer that worked (0.1 + 0.1 + 0.5 + 0.1 + 1 + 2 s), before the next fault.
        #expect(t.owedWakesPaid == [Self.at(3.8)])
        #expect(t.resyncs[3].at > t.owedWakesPaid[0])
    }

    // MARK: - Restarts

    @Test("a clean restart (early [] and a new startTime) → the cursor is re-placed at the new head, one wake-up")
    func restartByStartTime() {
        let (rig, t) = Self.rig(head: 5)
        rig.syncthing.state.withLock { ($0.startTime, $0.head) = (Self.later, 2) }
        rig.script(.poll, [Self.answer([], after: 0.2)])
        rig.settle()
        #expect(t.trace == ["poll", "status", "head", "poll"])
        #expect(t.resyncs.map(\.restarted) == [true] && t.resyncs.map(\.wake) == [true])
        #expect(t.sleeps.isEmpty && t.loopRecords.isEmpty)
        // The cursor is at the new head with the new start time: the next round finds no restart.
        #expect(rig.heldPollCursor() == 2)
        #expect(t.logged(.syncthingRestarted).count == 1)
    }

    @Test("ids going back (a restart within the same second) → no early wake for old ids, a re-sync that wakes")
    func restartByIds() {
        let (rig, t) = Self.rig(head: 5)
        rig.syncthing.state.withLock { $0.head = 2 }
        rig.script(.poll, [Self.answer([Self.change(1), Self.change(2)], after: 1.5)])
        rig.settle()
        #expect(t.trace == ["poll", "status", "head", "poll"])
        #expect(t.changeWakes.isEmpty)
        #expect(t.resyncs.map(\.restarted) == [true] && t.resyncs.map(\.wake) == [true])
        #expect(rig.heldPollCursor() == 2)
    }

    @Test("Syncthing down, then back with a new startTime → verify-first finds the restart before any long-poll")
    func restartAfterDowntime() {
        let (rig, t) = Self.rig(head: 5)
        rig.script(.poll, [Self.fail(.failure(.truncated))])
        rig.script(.status, [Self.refused, Self.refused, Self.started(Self.later)])
        rig.syncthing.state.withLock { $0.head = 1 }
        rig.settle()
        #expect(t.trace == ["poll", "status", "sleep 0.5", "status", "sleep 1.0", "status", "head", "poll"])
        #expect(t.resyncs.map(\.restarted) == [true] && t.resyncs.map(\.wake) == [true])
        #expect(t.logged(.syncthingUnavailable).count == 2)
    }

    @Test("a crash-looping Syncthing → the first restart wakes, the next ones back off and owe one, paid on recovery")
    func crashLoop() {
        let (rig, t) = Self.rig()
        rig.script(.status, ["00:01:00", "00:02:00", "00:03:00"].map { Self.started("2026-12-01T\($0)Z") })
        rig.syncthing.state.withLock { $0.startTime = "2026-12-01T00:03:00Z" }
        rig.script(.poll, Array(repeating: Self.answer([], after: 0.1), count: 3) + [Self.answer([], after: 50)])
        rig.settle()
        #expect(t.resyncs.map(\.restarted) == [true, true, true])
        #expect(t.resyncs.map(\.wake) == [true, false, false])
        // Early-answer backoff before each status read, restart backoff after each re-sync.
        #expect(t.sleeps == [0.5, 0.5, 1, 1])
        #expect(t.owedWakesPaid.count == 1)
        #expect(t.owedWakesPaid.first == rig.runtime.now() - ServiceRig.t0)
    }

    @Test("a changed Device ID is a restart: the batch is not applied, the cursor is re-placed, one wake-up")
    func deviceIDChanged() {
        let (rig, t) = Self.rig(head: 5)
        rig.syncthing.state.withLock { ($0.myID, $0.head) = (ServiceRig.idB, 6) }
        rig.script(.poll, [Self.answer([Self.change(6)])])
        rig.settle()
        #expect(t.trace == ["poll", "status", "head", "poll"])
        #expect(t.logged(.deviceIDChanged).count == 1)
        #expect(t.logged(.eventsReceived).isEmpty)
        // The change woke at once; the restart's wake-up comes at the same instant and joins it: one wake-up, sent
        // after the restart was found, so it carries the new Device ID.
        #expect(t.changeWakes == [.seconds(2)])
        #expect(rig.triggers == 1)
        #expect(rig.relay.state.withLock { $0.bodies }.allSatisfy { $0.contains(ServiceRig.idB) })
        #expect(t.resyncs.map(\.restarted) == [true])
        #expect(rig.heldPollCursor() == 6)
    }

    @Test("a changed Device ID seen after a lost poll → a restart, which wakes even when faults repeat")
    func deviceIDChangedAfterFault() {
        let (rig, t) = Self.rig()
        rig.script(.poll, [Self.fail(.failure(.truncated)), Self.fail(.failure(.truncated))])
        let start = "2026-12-01T00:00:00Z"
        rig.script(.status, [Self.started(start), Self.started(start, id: ServiceRig.idB)])
        rig.syncthing.state.withLock { $0.myID = ServiceRig.idB }
        rig.settle()
        #expect(t.resyncs.map(\.restarted) == [false, true])
        #expect(t.resyncs.map(\.wake) == [true, true])
    }

    @Test("a restart that wakes after repeated faults pays what they owed: recovery adds no second wake-up")
    func wakingRestartPaysTheDebt() {
        let (rig, t) = Self.rig()
        rig.script(.poll, Array(repeating: Self.fail(.failure(.truncated)), count: 3))
        let start = "2026-12-01T00:00:00Z"
        rig.script(.status, [Self.started(start), Self.started(start), Self.started(start, id: ServiceRig.idB)])
        rig.syncthing.state.withLock { $0.myID = ServiceRig.idB }
        rig.settle()
        #expect(t.resyncs.map(\.wake) == [true, false, true])
        rig.script(.poll, [Self.answer([Self.change(1)])])
        rig.settle()
        #expect(t.owedWakesPaid.isEmpty)
    }

    // MARK: - Syncthing not answering

    @Test("status failing → verify-first, backoff to 5 s, a warning on the 1st and every 20th; no re-sync after")
    func statusFailing() {
        let (rig, t) = Self.rig()
        rig.script(.poll, [Self.answer([Self.change(1)]), Self.answer([Self.change(1)])])
        // The start-up's status read answered; the poll's and the verify-first ones fail.
        rig.script(.status, Array(repeating: Self.refused, count: 21))
        rig.settle()
        #expect(Array(t.requests.prefix(4)) == ["poll", "status", "status", "status"])
        #expect(t.sleeps == [0.5, 1, 2, 4] + Array(repeating: 5, count: 17))
        let records = t.logged(.syncthingUnavailable)
        #expect(records.count == 21)
        #expect(records.indices.filter { records[$0].level == .warn } == [0, 19])
        #expect(records[0].fields == [.code(.transportConnect), .attempt(1)])
        #expect(Array(t.requests.suffix(4)) == ["status", "poll", "status", "poll"])
        // The first batch's status read failed: it is polled again from the same cursor, and delivered once.
        #expect(rig.pollCursors == [0, 0])
        #expect(t.logged(.eventsReceived).map(\.fields.first) == [.count(1)])
        #expect(t.resyncs.isEmpty)
    }

    @Test("a batch with a ConfigSaved re-reads config.xml before its status read, and its change is delivered")
    func configSavedRereadsBeforeTheStatusRead() {
        let (rig, t) = Self.rig()
        rig.script(.poll, [Self.answer([Self.configSaved, Self.change(2)])])
        rig.settle()
        #expect(t.trace == ["poll", "reread", "status", "poll"])
        #expect(t.logged(.eventsReceived).map(\.fields.first) == [.count(2)])
        #expect(t.changeWakes == [.seconds(2)])
        #expect(rig.heldPollCursor() == 2)
    }

    // MARK: - A wrong API key

    @Test("401 on the status read → config.xml re-read once; a changed key is tried at once, without backoff")
    func unauthorizedKeyChanged() {
        let (rig, t) = Self.rig()
        // Syncthing's key changed, and config.xml says so.
        rig.syncthing.state.withLock { $0.apiKey = "n3w" }
        rig.onDisk.withLock { $0 = .success(ServiceRig.access(port: 8384, key: "n3w")) }
        rig.script(.poll, [Self.answer([])])
        rig.settle()
        #expect(t.trace == ["poll", "status", "reread", "status", "poll"])
        #expect(t.loopRecords == [LogRecord(.info, .syncthingKeyReloaded)])
    }

    @Test("401 with an unchanged key → an error on the 1st and every 20th, backoff, then the unavailable record")
    func unauthorizedKeyUnchanged() {
        let (rig, t) = Self.rig()
        rig.script(.poll, [Self.answer([])])
        rig.script(.status, Array(repeating: Self.wrongKey, count: 20))
        rig.settle()
        #expect(t.requests.filter { $0 == "reread" }.count == 20)
        let errors = t.logged(.syncthingAuthFailed)
        #expect(errors.map(\.level) == [.error] + Array(repeating: .debug, count: 18) + [.error])
        #expect(errors[0].fields == [.code(.syncthingUnauthorized), .attempt(1)])
        #expect(
            t.logged(.syncthingUnavailable).first?.fields == [.status(401), .code(.syncthingUnauthorized), .attempt(1)])
        #expect(Array(t.sleeps.prefix(3)) == [0.5, 1, 2])
    }

    @Test("401 on a poll while the status read works → re-read, back off, poll again from the same cursor")
    func unauthorizedPoll() {
        let (rig, t) = Self.rig(head: 5)
        rig.script(.poll, [Self.fail(Self.wrongKey)])
        rig.settle()
        #expect(t.trace == ["poll", "status", "reread", "sleep 0.5", "poll"])
        #expect(t.loopRecords.map(\.message) == [.eventPollFailed, .syncthingAuthFailed])
        #expect(t.resyncs.isEmpty)
        #expect(rig.heldPollCursor() == 5)
    }

    @Test("connect: a wrong key is re-read once; still wrong → exit 78 with one error record")
    func connectWrongKey() {
        let (rig, t) = Self.rig(.connect)
        // config.xml holds another key than the one in use, and Syncthing takes neither.
        rig.onDisk.withLock { $0 = .success(ServiceRig.access(port: 8384, key: "n3w")) }
        rig.syncthing.state.withLock { $0.apiKey = "0ther" }
        rig.start()
        rig.settle()
        #expect(t.trace == ["status", "reread", "status"])
        #expect(rig.exits.withLock { $0 } == [.configuration])
        #expect(t.loopRecords.map(\.message) == [.syncthingKeyReloaded, .syncthingAuthFailed])
        #expect(t.loopRecords.last == LogRecord(.error, .syncthingAuthFailed, [.code(.syncthingUnauthorized)]))
    }

    @Test("connect: an unchanged key → exit 78 at once")
    func connectKeyUnchanged() {
        let (rig, t) = Self.rig(.connect)
        rig.script(.status, [Self.wrongKey])
        rig.start()
        rig.settle()
        #expect(t.trace == ["status", "reread"])
        #expect(rig.exits.withLock { $0 } == [.configuration])
    }

    @Test("connect: Syncthing down → backoff to 5 s, a warning with the delay on the 1st and every 10th")
    func connectWhileDown() {
        let (rig, t) = Self.rig(.connect)
        rig.script(.status, Array(repeating: Self.refused, count: 12))
        rig.start()
        rig.settle()
        // Connected: the head read follows the 13th status read.
        #expect(
            Array(t.requests.filter { $0 != "reread" }.prefix(14)) == Array(repeating: "status", count: 13) + ["head"])
        #expect(Array(t.sleeps.prefix(12)) == [0.5, 1, 2, 4] + Array(repeating: 5, count: 8))
        let records = t.logged(.syncthingUnavailable)
        #expect(records.count == 12)
        #expect(records.indices.filter { records[$0].level == .warn } == [0, 9])
        #expect(records[1].fields == [.code(.transportConnect), .attempt(2), .delay(.seconds(1))])
    }

    // MARK: - The head read

    @Test("placing the cursor: head read failures back off and warn with the delay; the answer is the first poll")
    func placeHeadFailing() {
        let (rig, t) = Self.rig(.placeHead)
        rig.script(.head, Array(repeating: Self.refused, count: 3))
        rig.syncthing.state.withLock { $0.head = 9 }
        rig.start()
        rig.settle()
        #expect(
            Array(t.trace.prefix(7)) == ["head", "sleep 0.5", "head", "sleep 1.0", "head", "sleep 2.0", "head"])
        #expect(
            t.logged(.eventPollFailed).map(\.fields).last == [
                .code(.transportConnect), .attempt(3), .delay(.seconds(2)),
            ])
        #expect(t.logged(.syncthingConnected).count == 1)
        #expect(rig.heldPollCursor() == 9)
    }

    @Test("a lost poll whose head read fails → verify-first re-syncs before the next poll, and still wakes once")
    func resyncHeadFailing() {
        let (rig, t) = Self.rig(head: 5)
        rig.script(.poll, [Self.fail(.failure(.truncated))])
        rig.script(.head, [Self.refused])
        rig.syncthing.state.withLock { $0.head = 7 }
        rig.settle()
        #expect(t.trace == ["poll", "status", "head", "sleep 0.5", "status", "head", "poll"])
        #expect(t.resyncs.map(\.wake) == [true])
        #expect(rig.heldPollCursor() == 7)
    }

    @Test("a restart by ids going back whose head read fails is not forgotten: the stale cursor is never polled")
    func restartHeadFailing() {
        let (rig, t) = Self.rig(head: 5)
        rig.script(.poll, [Self.answer([Self.change(1)], after: 1.5)])
        rig.script(.head, [Self.refused, Self.refused])
        rig.syncthing.state.withLock { $0.head = 1 }
        rig.settle()
        #expect(
            t.trace == ["poll", "status", "head", "status", "head", "sleep 1.0", "status", "head", "poll"])
        #expect(t.resyncs.map(\.restarted) == [true] && t.resyncs.map(\.wake) == [true])
        #expect(rig.heldPollCursor() == 1)
    }
}

/// The poll loop's timeline as the rig saw it, from a mark on: Syncthing's requests and re-reads of config.xml in
/// order, the waits between them, the loop's records, and the wake-ups.
struct Timeline {
    let rig: ServiceRig
    let exchangeMark: Int
    let recordMark: Int

    /// From now on, or from the `exchanges`-th exchange (and the records that came after it).
    init(_ rig: ServiceRig, exchanges: Int? = nil) {
        self.rig = rig
        exchangeMark = exchanges ?? rig.exchanges.count
        recordMark = rig.timedRecords.withLock { records in
            exchanges.map { mark in records.firstIndex { $0.exchanges > mark } ?? records.count } ?? records.count
        }
    }

    /// The records of the poll loop itself.
    static let loopMessages: Set<LogMessage> = [
        .eventPollFailed, .syncthingUnavailable, .syncthingAuthFailed, .syncthingKeyReloaded,
    ]

    private enum Entry {
        case exchange(FakeSyncthing.Exchange)
        case record(LogRecord, at: Instant)
    }

    /// Exchanges and records after the mark, in the order they happened.
    private var entries: [Entry] {
        let exchanges = rig.exchanges
        let records = rig.timedRecords.withLock { Array($0.dropFirst(recordMark)) }
        var out: [Entry] = []
        var next = records.makeIterator()
        var pending = next.next()
        for index in exchangeMark...exchanges.count {
            while let record = pending, record.exchanges <= index {
                out.append(.record(record.record, at: record.at))
                pending = next.next()
            }
            if index < exchanges.count { out.append(.exchange(exchanges[index])) }
        }
        return out
    }

    /// `poll`, `status`, `head` and `reread` (config.xml), with `sleep 0.5` for each wait between two; a held
    /// long-poll ends it with `poll`.
    var trace: [String] {
        let exchanges = rig.exchanges
        var end = exchangeMark > 0 ? exchanges[..<exchangeMark].map(\.ends).max()! : exchanges.first?.at ?? .zero
        var out: [String] = []
        for exchange in exchanges.dropFirst(exchangeMark) {
            let name: String
            switch exchange.route {
            case .poll: name = "poll"
            case .status: name = "status"
            case .head: name = "head"
            case .configFile: name = "reread"
            default: continue
            }
            if exchange.at > end { out.append("sleep \(Self.seconds(exchange.at - end))") }
            end = max(end, exchange.ends)
            out.append(name)
        }
        if rig.runtime.holdsLongPoll {
            let now = rig.runtime.now()
            if now > end { out.append("sleep \(Self.seconds(now - end))") }
            out.append("poll")
        }
        return out
    }

    var requests: [String] { trace.filter { !$0.hasPrefix("sleep") } }
    var sleeps: [Double] { trace.filter { $0.hasPrefix("sleep ") }.map { Double($0.dropFirst(6))! } }

    var records: [LogRecord] {
        entries.compactMap { if case .record(let record, _) = $0 { record } else { nil } }
    }
    func logged(_ message: LogMessage) -> [LogRecord] { records.filter { $0.message == message } }
    var loopRecords: [LogRecord] { records.filter { Self.loopMessages.contains($0.message) } }

    /// Re-syncs that placed the cursor (a restart, or lost events), from the rig's start; `wake` when a re-sync
    /// wake-up followed before the next long-poll.
    var resyncs: [(at: Duration, restarted: Bool, wake: Bool)] { wakes.resyncs }
    /// When a change woke the relay.
    var changeWakes: [Duration] { wakes.changes }
    /// Re-sync wake-ups that followed no re-sync: what earlier faults owed, paid.
    var owedWakesPaid: [Duration] { wakes.owed }

    private var wakes: (resyncs: [(at: Duration, restarted: Bool, wake: Bool)], changes: [Duration], owed: [Duration]) {
        var resyncs: [(at: Duration, restarted: Bool, wake: Bool)] = []
        var changes: [Duration] = []
        var owed: [Duration] = []
        var open = false
        var gapOpen = false
        for entry in entries {
            switch entry {
            case .exchange(let exchange) where exchange.route == .poll:
                open = false
                gapOpen = false
            case .record(let record, let at) where record.message == .syncthingRestarted || record.message == .eventGap:
                if record.message == .eventGap && !record.fields.isEmpty {
                    gapOpen = true
                } else {
                    resyncs.append((at - ServiceRig.t0, record.message == .syncthingRestarted, false))
                    open = true
                }
            case .record(let record, let at) where record.message == .triggerSending:
                switch Self.reason(record) {
                case .change?: changes.append(at - ServiceRig.t0)
                case .resync? where open:
                    resyncs[resyncs.count - 1].wake = true
                    open = false
                case .resync? where gapOpen: gapOpen = false
                case .resync?: owed.append(at - ServiceRig.t0)
                default: break
                }
            default: break
            }
        }
        return (resyncs, changes, owed)
    }

    var seconds: Double { Self.seconds(rig.runtime.now() - ServiceRig.t0) }

    static func reason(_ record: LogRecord) -> WakeReason? {
        record.fields.first { $0.key == .reason }.flatMap { if case .reason(let r) = $0.value { r } else { nil } }
    }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}
