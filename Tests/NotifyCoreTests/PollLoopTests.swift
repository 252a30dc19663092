import Testing

@testable import NotifyCore

/// `PollLoop` on its own: its steps are only I/O, it keeps the cursor and the Device ID, and it answers with what it
/// learned. (The engine's routing of that is in EngineTests and PollConnectionTests.)
@Suite("The poll loop: steps are I/O, answers are what it learned")
struct PollLoopTests {
    static let id = EngineTests.id
    static let status = EngineTests.status
    static let other = "P56IOI7-MZJNU2Y-IQGDREY-DM2MGTI-MGL3BXN-PQ6W5BM-TBBZ4TJ-XZWICQ2"

    static func event(_ id: Int) -> SyncthingEvent {
        SyncthingEvent(id: id, type: "LocalIndexUpdated", folder: "vault")
    }

    /// A loop connected to `status` and placed at `head`, its next step the first long-poll.
    static func polling(head: Int = 4) -> PollLoop {
        var loop = PollLoop()
        #expect(loop.phase == .connect)
        #expect(loop.next() == .readStatus)
        #expect(loop.handle(.status(.success(status))) == [])
        #expect(loop.phase == .placeHead)
        #expect(loop.deviceID == id)
        #expect(loop.next() == .readHead)
        #expect(loop.handle(.head(.success(head))) == [.pollSucceeded, .ready])
        #expect(loop.phase == .poll)
        #expect(loop.next() == .poll(since: head, onConnection: nil))
        return loop
    }

    @Test("connect, place the head, poll: the cursor starts at the head with the status read's start time")
    func start() {
        let loop = Self.polling(head: 4)
        #expect(loop.cursor == EventCursor(head: 4, startTime: Self.status.startTime))
    }

    @Test("a malformed Device ID at connect ends the run with a log line, and nothing is asked after it")
    func malformedDeviceID() {
        var loop = PollLoop()
        let learned = loop.handle(.status(.success(SystemStatus(myID: "not-a-device-id", startTime: "t"))))
        #expect(learned == [.log(LogRecord(.error, .deviceIDMalformed, [.code(.syncthingMalformed)]))])
        #expect(loop.next() == .exit(.deviceIDMalformed))
        #expect(loop.deviceID == "")
        #expect(!loop.awaits(.status(.success(Self.status))))
        #expect(loop.handle(.status(.success(Self.status))) == [])
    }

    @Test("a batch is handed over as news at once, and applied to the cursor only with its status read")
    func newsBeforeStatus() {
        var loop = Self.polling()
        let batch = [Self.event(5), Self.event(6)]
        #expect(loop.handle(.polled(.success(batch), elapsed: .seconds(2))) == [.news(batch)])
        #expect(loop.next() == .readStatus)
        #expect(loop.cursor.since == 4)
        let applied = loop.handle(.status(.success(Self.status)))
        #expect(applied == [.pollSucceeded, .applied(batch, handedOver: true)])
        #expect(loop.next() == .poll(since: 6, onConnection: nil))
    }

    @Test("a batch polled again after its status read failed is applied, but handed over as news only once")
    func newsOnce() {
        var loop = Self.polling()
        let batch = [Self.event(5), Self.event(6)]
        #expect(loop.handle(.polled(.success(batch), elapsed: .seconds(2))) == [.news(batch)])
        let down = PollLoop.Failure(code: .transportConnect)
        let failed = loop.handle(.status(.failure(down)))
        #expect(failed.contains(.syncthingUnavailable))
        guard case .sleep = loop.next() else {
            Issue.record("expected a backoff, got \(loop.next())")
            return
        }
        #expect(loop.handle(.slept) == [])
        #expect(loop.next() == .readStatus)
        #expect(loop.handle(.status(.success(Self.status))) == [])
        #expect(loop.next() == .poll(since: 4, onConnection: nil))
        let again = batch + [Self.event(7)]
        #expect(loop.handle(.polled(.success(again), elapsed: .seconds(1))) == [.news([Self.event(7)])])
        let applied = loop.handle(.status(.success(Self.status)))
        #expect(applied == [.pollSucceeded, .applied(again, handedOver: true)])
        #expect(loop.next() == .poll(since: 7, onConnection: nil))
    }

    @Test("a hole before a batch: applied after a gap, the cursor past it")
    func gap() {
        var loop = Self.polling()
        let batch = [Self.event(9)]
        #expect(loop.handle(.polled(.success(batch), elapsed: .seconds(1))) == [.news(batch)])
        #expect(
            loop.handle(.status(.success(Self.status))) == [.pollSucceeded, .appliedAfterGap(batch, handedOver: true)])
        #expect(loop.cursor.since == 9)
    }

    @Test("ids at or below the cursor are not news; the status read then finds the restart and the loop re-syncs")
    func idsGoingBack() {
        var loop = Self.polling(head: 4)
        #expect(loop.handle(.polled(.success([Self.event(1)]), elapsed: .seconds(1))) == [])
        #expect(loop.handle(.status(.success(Self.status))) == [.pollSucceeded])
        #expect(loop.next() == .readHead)
        #expect(loop.handle(.head(.success(3))) == [.resynced(restarted: true, wake: true)])
        #expect(loop.cursor == EventCursor(head: 3, startTime: Self.status.startTime))
        #expect(loop.next() == .poll(since: 3, onConnection: nil))
    }

    @Test("a new Device ID in a status read is adopted and logged, and re-syncs as a restart")
    func deviceIDChanged() {
        var loop = Self.polling()
        let batch = [Self.event(5)]
        #expect(loop.handle(.polled(.success(batch), elapsed: .seconds(1))) == [.news(batch)])
        let moved = SystemStatus(myID: Self.other, startTime: Self.status.startTime)
        let learned = loop.handle(.status(.success(moved)))
        #expect(learned == [.pollSucceeded, .log(LogRecord(.warn, .deviceIDChanged))])
        #expect(loop.deviceID == Self.other)
        #expect(loop.next() == .readHead)
        #expect(loop.handle(.head(.success(12))) == [.resynced(restarted: true, wake: true)])
        #expect(loop.cursor.since == 12)
    }

    @Test("a second restart in a row re-syncs without waking and owes the wake-up, paid once polling works again")
    func owedWake() {
        var loop = Self.polling(head: 4)
        for round in 1...2 {
            #expect(loop.handle(.polled(.success([Self.event(1)]), elapsed: .seconds(1))) == [])
            #expect(loop.handle(.status(.success(Self.status))) == [.pollSucceeded])
            #expect(loop.handle(.head(.success(4))) == [.resynced(restarted: true, wake: round == 1)])
            if case .sleep = loop.next() { #expect(loop.handle(.slept) == []) }
        }
        let batch = [Self.event(5)]
        #expect(loop.handle(.polled(.success(batch), elapsed: .seconds(1))) == [.news(batch)])
        #expect(
            loop.handle(.status(.success(Self.status))) == [
                .pollSucceeded, .applied(batch, handedOver: true), .recovered,
            ])
    }

    @Test("a pinned poll whose connection is gone, then a refused status read: the retry reads the status first")
    func goneThenRefused() {
        var loop = Self.polling(head: 40)
        let batch = [Self.event(41), Self.event(42)]
        #expect(loop.handle(.polled(.success(batch), elapsed: .seconds(1), connection: 1)) == [.news(batch)])
        #expect(loop.handle(.status(.success(Self.status), connection: 1)).first == .pollSucceeded)
        #expect(loop.handle(.polled(.success([]), elapsed: .seconds(2), connection: 1)).first == .pollSucceeded)
        #expect(loop.next() == .poll(since: 42, onConnection: 1))
        // Syncthing restarts: the kept connection is gone, and the new process is not listening yet.
        let gone = PollLoop.Failure(code: .transportConnectionGone)
        #expect(loop.handle(.polled(.failure(gone), elapsed: .zero, connection: nil)) == [])
        #expect(loop.next() == .readStatus)
        let refused = loop.handle(.status(.failure(PollLoop.Failure(code: .transportConnect))))
        #expect(refused.contains(.syncthingUnavailable))
        for _ in 1...3 {
            guard case .sleep = loop.next() else {
                Issue.record("expected a backoff, got \(loop.next())")
                return
            }
            #expect(loop.handle(.slept) == [])
            #expect(loop.next() == .readStatus, "a poll with the old cursor before any status read")
            _ = loop.handle(.status(.failure(PollLoop.Failure(code: .transportConnect))))
        }
        // Up again, as a new run: the status read finds the restart, and the re-sync wakes.
        _ = loop.handle(.slept)
        let restarted = SystemStatus(myID: Self.id, startTime: "2026-12-01T00:05:00Z")
        #expect(loop.handle(.status(.success(restarted), connection: 2)) == [])
        #expect(loop.next() == .readHead)
        #expect(loop.handle(.head(.success(3))) == [.resynced(restarted: true, wake: true)])
    }

    @Test(
        "a steady stream: from the fourth quick answer on, the next poll waits out the rest of 100 ms; a slow one ends")
    func busyStream() {
        var loop = Self.polling(head: 0)
        var since = 0
        /// One answer of one event on connection 1, `ms` after its poll went out; the status read is vouched for.
        func quick(_ ms: Int64) {
            since += 1
            _ = loop.handle(.polled(.success([Self.event(since)]), elapsed: .milliseconds(ms), connection: 1))
            if loop.next() == .readStatus { _ = loop.handle(.status(.success(Self.status), connection: 1)) }
        }
        for _ in 1...3 {
            quick(30)
            #expect(loop.next() == .poll(since: since, onConnection: 1), "a save's few answers are read at once")
        }
        quick(30)
        #expect(loop.next() == .sleep(.milliseconds(70)))
        #expect(loop.handle(.slept) == [])
        #expect(loop.next() == .poll(since: 4, onConnection: 1))
        quick(1)
        #expect(loop.next() == .sleep(.milliseconds(99)), "what came during the pause, collected at once")
        _ = loop.handle(.slept)
        // The stream ends: a poll that waited longer than the pace ends the streak, and the next answers are read
        // at once again.
        quick(2000)
        #expect(loop.next() == .poll(since: 6, onConnection: 1))
        quick(30)
        #expect(loop.next() == .poll(since: 7, onConnection: 1))
        // An empty answer never starts a pause.
        #expect(loop.handle(.polled(.success([]), elapsed: .seconds(5), connection: 1)).first == .pollSucceeded)
        #expect(loop.next() == .poll(since: 7, onConnection: 1))
    }

    @Test("a failure ends a steady stream's streak: what piled up during the backoff is read without a pause")
    func busyStreamEndsOnFailure() {
        var loop = Self.polling(head: 0)
        for id in 1...5 {
            _ = loop.handle(.polled(.success([Self.event(id)]), elapsed: .milliseconds(10), connection: 1))
            if loop.next() == .readStatus { _ = loop.handle(.status(.success(Self.status), connection: 1)) }
            if case .sleep = loop.next() { _ = loop.handle(.slept) }
        }
        // The kept connection is gone, and the status read on a new one is refused once.
        let gone = PollLoop.Failure(code: .transportConnectionGone)
        #expect(loop.handle(.polled(.failure(gone), elapsed: .zero, connection: nil)) == [])
        _ = loop.handle(.status(.failure(PollLoop.Failure(code: .transportConnect))))
        _ = loop.handle(.slept)
        _ = loop.handle(.status(.success(Self.status), connection: 2))
        #expect(loop.next() == .poll(since: 5, onConnection: 2))
        _ = loop.handle(.polled(.success([Self.event(6), Self.event(7)]), elapsed: .milliseconds(1), connection: 2))
        #expect(loop.next() == .poll(since: 7, onConnection: 2))
    }

    @Test("without a vouching connection, a steady stream's pause goes before the status read, not after it")
    func busyStreamPausesBeforeStatus() {
        var loop = Self.polling(head: 0)
        for id in 1...3 {
            _ = loop.handle(.polled(.success([Self.event(id)]), elapsed: .milliseconds(10)))
            #expect(loop.next() == .readStatus)
            _ = loop.handle(.status(.success(Self.status)))
        }
        #expect(loop.handle(.polled(.success([Self.event(4)]), elapsed: .milliseconds(10))) == [.news([Self.event(4)])])
        #expect(loop.next() == .sleep(.milliseconds(90)))
        _ = loop.handle(.slept)
        #expect(loop.next() == .readStatus)
        #expect(
            loop.handle(.status(.success(Self.status))) == [
                .pollSucceeded, .applied([Self.event(4)], handedOver: true),
            ])
        #expect(loop.next() == .poll(since: 4, onConnection: nil))
    }

    @Test("the pauses of a steady stream count towards the status re-check, as poll time does")
    func busyStreamRechecks() {
        var loop = Self.polling(head: 0)
        #expect(loop.handle(.polled(.success([Self.event(1)]), elapsed: .seconds(2), connection: 1)).count == 1)
        _ = loop.handle(.status(.success(Self.status), connection: 1))
        var passed = Duration.zero
        for id in 2...1000 {
            _ = loop.handle(.polled(.success([Self.event(id)]), elapsed: .milliseconds(10), connection: 1))
            passed += .milliseconds(10)
            if case .sleep(let pause) = loop.next() {
                passed += pause
                _ = loop.handle(.slept)
            }
            if loop.next() == .readStatus { break }
        }
        #expect(loop.next() == .readStatus)
        // At most one round (an answer and its pause) past the 10 s, and the pause that goes before the read; without
        // the pauses counted it would take about ten times as long.
        #expect(passed >= PollLoop.statusRecheck && passed < PollLoop.statusRecheck + .milliseconds(200), "\(passed)")
    }

    @Test("results of another kind than the step asks for are not awaited and change nothing")
    func unaskedResults() {
        var loop = Self.polling()
        let unasked: [PollLoop.StepResult] = [
            .status(.success(Self.status)), .head(.success(1)), .slept, .reauthenticated(changed: true),
        ]
        for result in unasked {
            #expect(!loop.awaits(result))
            #expect(loop.handle(result) == [])
            #expect(loop.next() == .poll(since: 4, onConnection: nil))
        }
        #expect(loop.awaits(.polled(.success([]), elapsed: .seconds(50))))
    }

    @Test("each result says how its Syncthing request went; a wait and a re-read are none")
    func requestOutcome() {
        let failure = PollLoop.Failure(code: .syncthingStatus, status: 500)
        #expect(PollLoop.StepResult.status(.success(Self.status)).request == .answered)
        #expect(PollLoop.StepResult.head(.failure(failure)).request == .failed(failure))
        #expect(PollLoop.StepResult.polled(.success([]), elapsed: .zero).request == .answered)
        #expect(PollLoop.StepResult.slept.request == nil)
        #expect(PollLoop.StepResult.reauthenticated(changed: false).request == nil)
    }
}
