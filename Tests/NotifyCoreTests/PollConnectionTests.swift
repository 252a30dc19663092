import Testing

@testable import NotifyCore

/// One request per event answer: a poll answered on the connection the last status read came on needs no status read
/// of its own (a restart closes every connection), and every other answer still gets one, so no restart is missed.
@Suite("The poll loop: answers vouched for by their connection")
struct PollConnectionTests {
    static let id = EngineTests.id
    static let status = EngineTests.status
    static let restarted = SystemStatus(myID: id, startTime: "2026-12-01T00:05:00Z")

    static func event(_ id: Int) -> SyncthingEvent {
        SyncthingEvent(id: id, type: "LocalIndexUpdated", folder: "vault")
    }

    /// A running engine whose first answer (ids 1…2 on `connection`) was followed by a status read on it.
    static func vouched(on connection: Int = 7) -> Engine {
        var e = EngineTests.running()
        let first = e.handle(
            .polled(.success([event(1), event(2)]), elapsed: .milliseconds(5), connection: connection),
            now: .seconds(1))
        #expect(first.last == .request(.status))
        let read = e.handle(.status(.success(status), connection: connection), now: .seconds(1))
        #expect(read.last == .request(.poll(since: 2, onConnection: connection)))
        return e
    }

    @Test("answers on the status read's connection are polled on at once, with no status read in between")
    func sameConnection() {
        var e = Self.vouched()
        var since = 2
        for round in 1...50 {
            let ids = [since + 1, since + 2]
            let actions = e.handle(
                .polled(.success(ids.map(Self.event)), elapsed: .milliseconds(150), connection: 7),
                now: .seconds(1) + .milliseconds(150 * round))
            #expect(!actions.contains(.request(.status)))
            #expect(actions.contains(.monitor(.pollSucceeded)))
            since = ids[1]
            #expect(actions.last == .request(.poll(since: since, onConnection: 7)))
        }
    }

    /// An engine in a steady stream's pause: its answers (ids 1…8 on connection 7) were news only when `watched`.
    static func paused(watched: Bool) -> (Engine, Instant) {
        var settings = EngineTests.settings
        if !watched { settings.watchedFolders = ["notes"] }
        var e = EngineTests.running(settings)
        var now = Instant.seconds(1)
        _ = e.handle(.polled(.success([event(1), event(2)]), elapsed: .milliseconds(5), connection: 7), now: now)
        _ = e.handle(.status(.success(status), connection: 7), now: now)
        // The first answer was quick too; three more make the streak, and the pause follows the fourth.
        for round in 1...3 {
            now = now + .milliseconds(10)
            let ids = [2 * round + 1, 2 * round + 2]
            let answered = e.handle(
                .polled(.success(ids.map(Self.event)), elapsed: .milliseconds(10), connection: 7), now: now)
            #expect(answered.contains { if case .armTimer(.backoff, _) = $0 { true } else { false } } == (round == 3))
        }
        return (e, now)
    }

    @Test("a stop in a pause with no wake-up to send reads once with no wait, on the vouched connection, 1 s at most")
    func stopInPause() {
        var (e, now) = Self.paused(watched: false)
        let stop = e.handle(.stop, now: now)
        #expect(
            stop == [
                .monitor(.stopping), .cancelTimer(.backoff), .armTimer(.backoff, at: now + .seconds(1)),
                .request(.lastRead(since: 8, onConnection: 7)),
            ])
        // A failed read stops as any other stop: polling ends, nothing to flush, exit.
        let read = e.handle(.polled(.failure(PollLoop.Failure(code: .transportConnect)), elapsed: .zero), now: now)
        #expect(read.prefix(2) == [.cancelSyncthing, .cancelTimer(.backoff)])
        #expect(read.last == .exit(.stopped))
        // The read's time ran out: the stop goes on without it, and its late answer is dropped.
        var (late, then) = Self.paused(watched: false)
        _ = late.handle(.stop, now: then)
        then = then + .seconds(1)
        #expect(late.handle(.timerFired(.backoff), now: then).last == .exit(.stopped))
        #expect(late.handle(.polled(.success([Self.event(9)]), elapsed: .zero), now: then).isEmpty)
    }

    @Test("a stop in a pause with a wake-up to send flushes at once: its push fetches what the pause held")
    func stopInPauseWithWake() {
        var (e, now) = Self.paused(watched: true)
        let stop = e.handle(.stop, now: now)
        #expect(stop.prefix(3) == [.monitor(.stopping), .cancelSyncthing, .cancelTimer(.backoff)])
        #expect(stop.contains { if case .sendTrigger = $0 { true } else { false } })
        #expect(!stop.contains { if case .request = $0 { true } else { false } })
    }

    @Test("an answer on another connection, or on none the transport can name, is followed by a status read")
    func otherConnection() {
        for connection in [8, nil] as [Int?] {
            var e = Self.vouched()
            let actions = e.handle(
                .polled(.success([Self.event(3)]), elapsed: .milliseconds(5), connection: connection),
                now: .seconds(2))
            #expect(actions.last == .request(.status))
        }
    }

    @Test("a restart behind a new connection is found by the status read that follows its first answer")
    func restartOnNewConnection() {
        var e = Self.vouched()
        // The new run's ids start again and may already pass the old cursor: only the start time tells.
        let polled = e.handle(
            .polled(.success([Self.event(3), Self.event(4)]), elapsed: .milliseconds(5), connection: 9),
            now: .seconds(2))
        #expect(polled.last == .request(.status))
        let read = e.handle(.status(.success(Self.restarted), connection: 9), now: .seconds(2))
        #expect(read.last == .request(.head))
        let placed = e.handle(.head(.success(4)), now: .seconds(2))
        #expect(placed.contains { if case .log(let r) = $0 { r.message == .syncthingRestarted } else { false } })
        #expect(placed.last == .request(.poll(since: 4, onConnection: 9)))
    }

    @Test("long-poll time on one connection vouches for 10 s at most: then a status read follows an answer again")
    func recheck() {
        var e = Self.vouched()
        var since = 2
        var reads = 0
        // 25 empty answers of 1 s each on the vouched connection (an early empty answer would back off instead).
        for round in 1...25 {
            let actions = e.handle(
                .polled(.success([Self.event(since + 1)]), elapsed: .seconds(1), connection: 7),
                now: .seconds(Double(1 + round)))
            since += 1
            if actions.last == .request(.status) {
                reads += 1
                #expect(round % 10 == 0, "status read after \(round) s of polling")
                #expect(
                    e.handle(.status(.success(Self.status), connection: 7), now: .seconds(Double(1 + round))).last
                        == .request(.poll(since: since, onConnection: 7)))
            } else {
                #expect(actions.last == .request(.poll(since: since, onConnection: 7)))
            }
        }
        #expect(reads == 2)
        #expect(PollLoop.statusRecheck == .seconds(10))
    }

    @Test("a failed poll ends the vouching: the next answer on the same connection is read with a status again")
    func failureForgets() {
        var e = Self.vouched()
        let failed = e.handle(
            .polled(.failure(PollLoop.Failure(code: .transportTruncated)), elapsed: .milliseconds(5), connection: nil),
            now: .seconds(2))
        #expect(failed.last == .request(.status))
        // Syncthing answers the status read on a connection it had not used: the cursor is re-placed.
        let read = e.handle(.status(.success(Self.status), connection: 7), now: .seconds(2))
        #expect(read.last == .request(.head))
        let placed = e.handle(.head(.success(10)), now: .seconds(2))
        #expect(placed.last == .request(.poll(since: 10, onConnection: 7)))
        // That status read vouches for its connection again.
        let next = e.handle(
            .polled(.success([Self.event(11)]), elapsed: .milliseconds(5), connection: 7), now: .seconds(3))
        #expect(next.last == .request(.poll(since: 11, onConnection: 7)))
    }

    @Test("a server that closes every connection after its answer ends the pinning: no loop of status reads")
    func noKeepAlive() {
        var e = Self.vouched()
        let gone = PollLoop.Failure(code: .transportConnectionGone)
        // The connection of each status read is gone by the poll right after it, twice in a row...
        #expect(e.handle(.polled(.failure(gone), elapsed: .zero), now: .seconds(2)) == [.request(.status)])
        #expect(
            e.handle(.status(.success(Self.status), connection: 8), now: .seconds(2))
                == [.request(.poll(since: 2, onConnection: 8))])
        #expect(e.handle(.polled(.failure(gone), elapsed: .zero), now: .seconds(2)) == [.request(.status)])
        // ...so from then on the long-poll goes out on any connection, and each answer gets its status read.
        #expect(
            e.handle(.status(.success(Self.status), connection: 9), now: .seconds(2))
                == [.request(.poll(since: 2, onConnection: nil))])
        for round in 1...3 {
            let answered = e.handle(
                .polled(.success([Self.event(2 + round)]), elapsed: .milliseconds(500), connection: 9 + round),
                now: .seconds(3))
            #expect(answered.last == .request(.status))
            #expect(
                e.handle(.status(.success(Self.status), connection: 9 + round), now: .seconds(3)).last
                    == .request(.poll(since: 2 + round, onConnection: nil)))
        }
    }

    @Test("a poll whose connection is gone sends nothing: a status read on a new one comes first, then the poll on it")
    func connectionGone() {
        var e = Self.vouched()
        // A clean stop answered the held poll and closed the connection: the next poll could only reach whoever
        // listens now, with the old cursor.
        let gone = e.handle(
            .polled(.failure(PollLoop.Failure(code: .transportConnectionGone)), elapsed: .zero), now: .seconds(2))
        #expect(gone == [.request(.status)])
        // A new run answers there: found at once, not after a long-poll held on the old cursor.
        let read = e.handle(.status(.success(Self.restarted), connection: 8), now: .seconds(2))
        #expect(read.last == .request(.head))
        let placed = e.handle(.head(.success(1)), now: .seconds(2))
        #expect(placed.contains { if case .log(let r) = $0 { r.message == .syncthingRestarted } else { false } })
        #expect(placed.last == .request(.poll(since: 1, onConnection: 8)))
        // The same process on a new connection: no re-sync, no record, the poll goes on where it was.
        var same = Self.vouched()
        _ = same.handle(
            .polled(.failure(PollLoop.Failure(code: .transportConnectionGone)), elapsed: .zero), now: .seconds(2))
        let again = same.handle(.status(.success(Self.status), connection: 8), now: .seconds(2))
        #expect(again == [.request(.poll(since: 2, onConnection: 8))])
    }
}
