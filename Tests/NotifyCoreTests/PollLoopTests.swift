import Testing

@testable import NotifyCore

@Suite("Poll loop timelines of the engine on virtual time")
struct PollLoopTests {
    typealias H = PollLoopHarness

    static let later = "2026-12-01T00:05:00Z"
    static func started(_ startTime: String, id: String = H.idA) -> SystemStatus {
        SystemStatus(myID: id, startTime: startTime)
    }
    static let refused = PollLoop.Failure(code: .transportConnect)
    static let wrongKey = PollLoop.Failure(code: .syncthingUnauthorized, status: 401)

    // MARK: - The ordinary round

    @Test(
        "a change 3 s into the poll wakes at once, then the status read, then the next poll; an empty 50 s answer too")
    func ordinaryRound() {
        var h = H(head: 5)
        h.answer([H.change(6), H.inSync(7)], after: 3)
        h.answer([], after: 50)
        h.run()
        #expect(h.trace == ["poll", "status", "poll", "status", "poll"])
        #expect(h.wokeAtOnce == [.seconds(3)])
        #expect(h.delivered.map { $0.0 } == [6] && h.delivered.map { $0.1 } == [2])
        #expect(h.cursor.since == 7)
        #expect(h.pollsSucceeded == 2)
        #expect(h.seconds == 53)
        #expect(h.logs.isEmpty && h.resyncs.isEmpty && h.owedWakesPaid.isEmpty)
    }

    // MARK: - Early empty answers

    @Test("early empty answers: the first is free, then 0.5, 1, 2, 4, 5, 5 s; never a spin, never a wake-up")
    func earlyEmpty() {
        var h = H()
        for _ in 0..<7 { h.answer([], after: 0.01) }
        h.run()
        #expect(h.sleeps == [0.5, 1, 2, 4, 5, 5])
        // Each early answer is still followed by a status read (it may be a restart).
        #expect(h.requests == Array(repeating: ["poll", "status"], count: 7).flatMap { $0 } + ["poll"])
        #expect(h.logged(.eventPollFailed).map(\.level) == Array(repeating: .debug, count: 6))
        #expect(h.logged(.eventPollFailed).map(\.fields) == (2...7).map { [.count($0)] })
        #expect(h.resyncs.isEmpty && h.wokeAtOnce.isEmpty)
    }

    @Test("an answer after the 1 s mark ends a run of early ones: the next early answer is free again")
    func earlyEmptyResets() {
        var h = H()
        h.answer([], after: 0.01)
        h.answer([], after: 0.99)
        h.answer([], after: 1)
        h.answer([], after: 0.01)
        h.run()
        #expect(h.sleeps == [0.5])
        #expect(h.pollsSucceeded == 4)
    }

    // MARK: - Lost polls

    @Test(
        "a cut, oversized or malformed poll → one warning, one waking re-sync at the head, the next poll at once",
        arguments: [ErrorCode.transportTruncated, .transportBodyTooLarge, .syncthingMalformed])
    func lostPoll(code: ErrorCode) {
        var h = H(head: 5)
        h.fail(code)
        h.head = 9
        h.answer([H.change(10)])
        h.run()
        #expect(h.trace == ["poll", "status", "head", "poll", "status", "poll"])
        #expect(h.logs == [LogRecord(.warn, .eventPollFailed, [.code(code), .attempt(1)])])
        #expect(h.resyncs.map { $0.restarted } == [false])
        #expect(h.resyncs.map { $0.wake } == [true])
        #expect(h.sleeps.isEmpty)
        #expect(h.delivered.map { $0.0 } == [10])
        #expect(h.owedWakesPaid.isEmpty)
    }

    @Test("repeated lost polls → back off 0.5, 1 s, no more wake-ups; the owed one is paid once polls recover")
    func repeatedLostPolls() {
        var h = H()
        for _ in 0..<3 { h.fail(.transportTruncated) }
        h.answer([])
        h.fail(.syncthingMalformed)
        h.run()
        #expect(h.resyncs.map { $0.wake } == [true, false, false, true])
        #expect(h.sleeps == [0.5, 1])
        #expect(
            h.logged(.eventPollFailed).map(\.fields) == [
                [.code(.transportTruncated), .attempt(1)], [.code(.transportTruncated), .attempt(2)],
                [.code(.transportTruncated), .attempt(3)], [.code(.syncthingMalformed), .attempt(1)],
            ])
        // Paid once, by the answer that worked (0.1 + 0.1 + 0.5 + 0.1 + 1 + 2 s), before the next fault.
        #expect(h.owedWakesPaid == [.seconds(3.8)])
        #expect(h.resyncs[3].at > h.owedWakesPaid[0])
    }

    // MARK: - Restarts

    @Test("a clean restart (early [] and a new startTime) → the cursor is re-placed at the new head, one wake-up")
    func restartByStartTime() {
        var h = H(head: 5)
        h.status = Self.started(Self.later)
        h.head = 2
        h.answer([], after: 0.2)
        h.run()
        #expect(h.trace == ["poll", "status", "head", "poll"])
        #expect(h.resyncs.map { $0.restarted } == [true] && h.resyncs.map { $0.wake } == [true])
        #expect(h.cursor == EventCursor(head: 2, startTime: Self.later))
        #expect(h.sleeps.isEmpty && h.logs.isEmpty)
    }

    @Test("ids going back (a restart within the same second) → no early wake for old ids, a re-sync that wakes")
    func restartByIds() {
        var h = H(head: 5)
        h.head = 2
        h.answer([H.change(1), H.change(2)], after: 1.5)
        h.run()
        #expect(h.trace == ["poll", "status", "head", "poll"])
        #expect(h.wokeAtOnce.isEmpty)
        #expect(h.resyncs.map { $0.restarted } == [true] && h.resyncs.map { $0.wake } == [true])
        #expect(h.cursor.since == 2)
    }

    @Test("Syncthing down, then back with a new startTime → verify-first finds the restart before any long-poll")
    func restartAfterDowntime() {
        var h = H(head: 5)
        h.fail(.transportTruncated)
        h.statusScript = [.failure(Self.refused), .failure(Self.refused), .success(Self.started(Self.later))]
        h.head = 1
        h.run()
        #expect(h.trace == ["poll", "status", "sleep 0.5", "status", "sleep 1.0", "status", "head", "poll"])
        #expect(h.resyncs.map { $0.restarted } == [true] && h.resyncs.map { $0.wake } == [true])
        #expect(h.unavailable == 2)
    }

    @Test("a crash-looping Syncthing → the first restart wakes, the next ones back off and owe one, paid on recovery")
    func crashLoop() {
        var h = H()
        h.statusScript = ["00:01:00", "00:02:00", "00:03:00"].map { .success(Self.started("2026-12-01T\($0)Z")) }
        h.status = Self.started("2026-12-01T00:03:00Z")
        for _ in 0..<3 { h.answer([], after: 0.1) }
        h.answer([], after: 50)
        h.run()
        #expect(h.resyncs.map { $0.restarted } == [true, true, true])
        #expect(h.resyncs.map { $0.wake } == [true, false, false])
        // Early-answer backoff before each status read, restart backoff after each re-sync.
        #expect(h.sleeps == [0.5, 0.5, 1, 1])
        #expect(h.owedWakesPaid.count == 1)
        #expect(h.owedWakesPaid.first == h.now)
    }

    @Test("a changed Device ID is a restart: the batch is not applied, the cursor is re-placed, one wake-up")
    func deviceIDChanged() {
        var h = H(head: 5)
        h.status = Self.started(h.status.startTime, id: H.idB)
        h.head = 6
        h.answer([H.change(6)])
        h.run()
        #expect(h.trace == ["poll", "status", "head", "poll"])
        #expect(h.deviceID == H.idB)
        #expect(h.delivered.isEmpty)
        #expect(h.wokeAtOnce.count == 1)
        #expect(h.resyncs.map { $0.restarted } == [true] && h.resyncs.map { $0.wake } == [true])
    }

    @Test("a changed Device ID seen after a lost poll → a restart, which wakes even when faults repeat")
    func deviceIDChangedAfterFault() {
        var h = H()
        h.fail(.transportTruncated)
        h.fail(.transportTruncated)
        h.statusScript = [.success(h.status), .success(Self.started(h.status.startTime, id: H.idB))]
        h.status = Self.started(h.status.startTime, id: H.idB)
        h.run()
        #expect(h.resyncs.map { $0.restarted } == [false, true])
        #expect(h.resyncs.map { $0.wake } == [true, true])
    }

    @Test("a restart that wakes after repeated faults pays what they owed: recovery adds no second wake-up")
    func wakingRestartPaysTheDebt() {
        var h = H()
        h.fail(.transportTruncated)
        h.fail(.transportTruncated)
        h.fail(.transportTruncated)
        h.statusScript = [
            .success(h.status), .success(h.status), .success(Self.started(h.status.startTime, id: H.idB)),
        ]
        h.status = Self.started(h.status.startTime, id: H.idB)
        h.run()
        #expect(h.resyncs.map { $0.wake } == [true, false, true])
        h.answer([H.change(h.cursor.since + 1)])
        h.run()
        #expect(h.owedWakesPaid.isEmpty)
    }

    // MARK: - Syncthing not answering

    @Test("status failing → verify-first, backoff to 5 s, a warning on the 1st and every 20th; no re-sync after")
    func statusFailing() {
        var h = H()
        h.answer([H.change(1)])
        h.statusScript = Array(repeating: .failure(Self.refused), count: 21)
        h.answer([H.change(1)])
        h.run()
        #expect(Array(h.requests.prefix(4)) == ["poll", "status", "status", "status"])
        #expect(h.sleeps == [0.5, 1, 2, 4] + Array(repeating: 5, count: 17))
        let records = h.logged(.syncthingUnavailable)
        #expect(records.count == 21)
        #expect(records.indices.filter { records[$0].level == .warn } == [0, 19])
        #expect(records[0].fields == [.code(.transportConnect), .attempt(1)])
        #expect(h.unavailable == 21)
        #expect(Array(h.requests.suffix(4)) == ["status", "poll", "status", "poll"])
        #expect(h.delivered.map { $0.0 } == [1])
        #expect(h.resyncs.isEmpty)
    }

    @Test("a batch with a ConfigSaved re-reads config.xml before its status read, and its change is delivered")
    func configSavedRereadsBeforeTheStatusRead() {
        var h = H()
        h.answer([SyncthingEvent(id: 1, type: "ConfigSaved"), H.change(2)])
        h.run()
        #expect(h.trace == ["poll", "reread", "status", "poll"])
        #expect(h.delivered.map { $0.0 } == [1])
        #expect(h.wokeAtOnce == [.seconds(2)])
    }

    // MARK: - A wrong API key

    @Test("401 on the status read → config.xml re-read once; a changed key is tried at once, without backoff")
    func unauthorizedKeyChanged() {
        var h = H()
        h.answer([])
        h.statusScript = [.failure(Self.wrongKey)]
        h.reauthScript = [true]
        h.run()
        #expect(h.trace == ["poll", "status", "reauth", "status", "poll"])
        #expect(h.logs == [LogRecord(.info, .syncthingKeyReloaded)])
    }

    @Test("401 with an unchanged key → an error on the 1st and every 20th, backoff, then the unavailable record")
    func unauthorizedKeyUnchanged() {
        var h = H()
        h.answer([])
        h.statusScript = Array(repeating: .failure(Self.wrongKey), count: 20)
        h.run()
        #expect(h.requests.filter { $0 == "reauth" }.count == 20)
        let errors = h.logged(.syncthingAuthFailed)
        #expect(errors.map(\.level) == [.error] + Array(repeating: .debug, count: 18) + [.error])
        #expect(errors[0].fields == [.code(.syncthingUnauthorized), .attempt(1)])
        #expect(
            h.logged(.syncthingUnavailable).first?.fields == [.status(401), .code(.syncthingUnauthorized), .attempt(1)])
        #expect(Array(h.sleeps.prefix(3)) == [0.5, 1, 2])
    }

    @Test("401 on a poll while the status read works → re-read, back off, poll again from the same cursor")
    func unauthorizedPoll() {
        var h = H(head: 5)
        h.fail(.syncthingUnauthorized, status: 401)
        h.run()
        #expect(h.trace == ["poll", "status", "reauth", "sleep 0.5", "poll"])
        #expect(h.logs.map(\.message) == [.eventPollFailed, .syncthingAuthFailed])
        #expect(h.resyncs.isEmpty)
        #expect(h.cursor.since == 5)
    }

    @Test("connect: a wrong key is re-read once; still wrong → exit 78 with one error record")
    func connectWrongKey() {
        var h = H(.connect)
        h.statusScript = [.failure(Self.wrongKey), .failure(Self.wrongKey)]
        h.reauthScript = [true, true]
        h.run()
        #expect(h.trace == ["status", "reauth", "status"])
        #expect(h.outcome == .exit(.apiKeyRejected))
        #expect(h.logs.map(\.message) == [.syncthingKeyReloaded, .syncthingAuthFailed])
        #expect(h.logs.last == LogRecord(.error, .syncthingAuthFailed, [.code(.syncthingUnauthorized)]))
    }

    @Test("connect: an unchanged key → exit 78 at once")
    func connectKeyUnchanged() {
        var h = H(.connect)
        h.statusScript = [.failure(Self.wrongKey)]
        h.run()
        #expect(h.trace == ["status", "reauth"])
        #expect(h.outcome == .exit(.apiKeyRejected))
    }

    @Test("connect: Syncthing down → backoff to 5 s, a warning with the delay on the 1st and every 10th")
    func connectWhileDown() {
        var h = H(.connect)
        h.statusScript = Array(repeating: .failure(Self.refused), count: 12)
        h.run()
        #expect(h.outcome == .connected(h.status))
        #expect(h.sleeps == [0.5, 1, 2, 4] + Array(repeating: 5, count: 8))
        let records = h.logged(.syncthingUnavailable)
        #expect(records.indices.filter { records[$0].level == .warn } == [0, 9])
        #expect(records[1].fields == [.code(.transportConnect), .attempt(2), .delay(.seconds(1))])
        #expect(h.unavailable == 12)
    }

    // MARK: - The head read

    @Test("placing the cursor: head read failures back off and warn with the delay; the answer is the first poll")
    func placeHeadFailing() {
        var h = H(.placeHead)
        h.headScript = Array(repeating: .failure(Self.refused), count: 3) + [.success(9)]
        h.run()
        #expect(h.trace == ["head", "sleep 0.5", "head", "sleep 1.0", "head", "sleep 2.0", "head"])
        #expect(h.outcome == .placed(head: 9))
        #expect(
            h.logged(.eventPollFailed).map(\.fields).last == [
                .code(.transportConnect), .attempt(3), .delay(.seconds(2)),
            ])
        #expect(h.pollsSucceeded == 1)
    }

    @Test("a lost poll whose head read fails → verify-first re-syncs before the next poll, and still wakes once")
    func resyncHeadFailing() {
        var h = H(head: 5)
        h.fail(.transportTruncated)
        h.headScript = [.failure(Self.refused)]
        h.head = 7
        h.run()
        #expect(h.trace == ["poll", "status", "head", "sleep 0.5", "status", "head", "poll"])
        #expect(h.resyncs.map { $0.wake } == [true])
        #expect(h.cursor.since == 7)
    }

    @Test("a restart by ids going back whose head read fails is not forgotten: the stale cursor is never polled")
    func restartHeadFailing() {
        var h = H(head: 5)
        h.answer([H.change(1)], after: 1.5)
        h.headScript = [.failure(Self.refused), .failure(Self.refused)]
        h.head = 1
        h.run()
        #expect(
            h.trace == ["poll", "status", "head", "status", "head", "sleep 1.0", "status", "head", "poll"])
        #expect(h.resyncs.map { $0.restarted } == [true] && h.resyncs.map { $0.wake } == [true])
        #expect(h.cursor.since == 1)
    }
}
