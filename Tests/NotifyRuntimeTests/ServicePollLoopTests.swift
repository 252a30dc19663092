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
    static let refused = FakeSyncthingTransport.Reply.failure(.connect)
    static let wrongKey = FakeSyncthingTransport.Reply.body("Unauthorized\n", status: 401)

    static func started(_ startTime: String, id: String = ServiceRig.idA) -> FakeSyncthingTransport.Reply {
        .body(#"{"myID":"\#(id)","startTime":"\#(startTime)"}"#)
    }
    static func change(_ id: Int) -> String { #"{"id":\#(id),"type":"LocalIndexUpdated","data":{"folder":"vault"}}"# }
    static func inSync(_ id: Int) -> String {
        #"{"id":\#(id),"type":"FolderCompletion","data":{"folder":"vault","needItems":0,"needBytes":0,"#
            + #""needDeletes":0}}"#
    }
    static let configSaved = #"{"id":1,"type":"ConfigSaved","data":{}}"#

    /// A long-poll answered with these events after `seconds`.
    static func answer(_ events: [String], after seconds: Double = 2) -> FakeSyncthingTransport.Reply {
        .body("[" + events.joined(separator: ",") + "]", takes: .milliseconds(Int64(seconds * 1000)))
    }
    /// A long-poll that fails after `seconds`.
    static func fail(_ reply: FakeSyncthingTransport.Reply, after seconds: Double = 0.1) -> FakeSyncthingTransport.Reply
    {
        var reply = reply
        reply.takes = .milliseconds(Int64(seconds * 1000))
        return reply
    }
    static let malformed = FakeSyncthingTransport.Reply.body(#"[{"id":1,"type":"#)

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

    /// The lines of a multi-line literal, one record or request a line.
    static func lines(_ text: String) -> [String] { text.split(separator: "\n").map(String.init) }

    /// A change's batch of `count` events received at `seconds`, and its wake-up, sent and delivered at once.
    static func changeWake(at seconds: String, count: Int) -> [String] {
        lines(
            #"""
            \#(seconds) level=debug msg="wake-up scheduled" reason=change
            \#(seconds) level=debug msg="events received" count=\#(count) events=1
            \#(seconds) level=debug msg="sending wake-up" reason=change
            \#(seconds) level=info msg="wake-up delivered" status=202 reason=change
            """#)
    }

    // MARK: - The ordinary round

    @Test(
        "a change 3 s into the poll wakes at once, then the status read, then the next poll; an empty 50 s answer too")
    func ordinaryRound() {
        let (rig, t) = Self.rig(head: 5)
        rig.script(.poll, [Self.answer([Self.change(6), Self.inSync(7)], after: 3), Self.answer([], after: 50)])
        rig.settle()
        #expect(t.requests == ["0 poll since=5", "3 status", "3 poll since=7", "53 status", "53 poll"])
        #expect(t.triggers == ["3"])
        #expect(t.log == Self.changeWake(at: "3", count: 2))
        #expect(rig.heldPollCursor() == 7)
    }

    @Test("a steady stream: after four quick answers each poll waits out 100 ms from the last; a quiet one ends it")
    func steadyStream() {
        // No connection vouches here, so each answer gets its status read, and the pause goes before that read:
        // the read still comes right before the poll it vouches for.
        let (rig, t) = Self.rig()
        let quick = (1...6).map { Self.answer([Self.change($0)], after: 0.02) }
        rig.script(.poll, quick + [Self.answer([], after: 50), Self.answer([Self.change(7)], after: 0.02)])
        rig.settle()
        #expect(
            t.requests == [
                "0 poll since=0", "0.020 status", "0.020 poll since=1", "0.040 status", "0.040 poll since=2",
                "0.060 status", "0.060 poll since=3", "0.160 status", "0.160 poll since=4", "0.260 status",
                "0.260 poll since=5", "0.360 status", "0.360 poll since=6", "50.360 status", "50.360 poll since=6",
                "50.380 status", "50.380 poll",
            ])
        #expect(t.triggers.count == 7)
        #expect(rig.heldPollCursor() == 7)
    }

    // MARK: - Early empty answers

    @Test("early empty answers: the first is free, then 0.5, 1, 2, 4, 5, 5 s; never a spin, never a wake-up")
    func earlyEmpty() {
        let (rig, t) = Self.rig()
        rig.script(.poll, Array(repeating: Self.answer([], after: 0.01), count: 7))
        rig.settle()
        // Each early answer (10 ms after its poll) is still followed by a status read at once (it may be a restart);
        // the next poll waits 0.5, 1, 2, 4, 5, 5 s after the answer, but the first.
        #expect(
            t.requests == [
                "0 poll since=0", "0.010 status", "0.010 poll since=0", "0.520 status", "0.520 poll since=0",
                "1.530 status", "1.530 poll since=0", "3.540 status", "3.540 poll since=0", "7.550 status",
                "7.550 poll since=0", "12.560 status", "12.560 poll since=0", "17.570 status", "17.570 poll",
            ])
        #expect(
            t.log
                == Self.lines(
                    #"""
                    0.020 level=debug msg="event poll failed, retrying" count=2
                    0.530 level=debug msg="event poll failed, retrying" count=3
                    1.540 level=debug msg="event poll failed, retrying" count=4
                    3.550 level=debug msg="event poll failed, retrying" count=5
                    7.560 level=debug msg="event poll failed, retrying" count=6
                    12.570 level=debug msg="event poll failed, retrying" count=7
                    """#))
        #expect(t.triggers.isEmpty)
    }

    @Test("an answer after the 1 s mark ends a run of early ones: the next early answer is free again")
    func earlyEmptyResets() {
        let (rig, t) = Self.rig()
        rig.script(.poll, [0.01, 0.99, 1, 0.01].map { Self.answer([], after: $0) })
        rig.settle()
        // Only the 0.99 s answer waits (0.5 s); the one after the 1 s answer is free.
        #expect(
            t.requests == [
                "0 poll since=0", "0.010 status", "0.010 poll since=0", "1.500 status", "1.500 poll since=0",
                "2.500 status", "2.500 poll since=0", "2.510 status", "2.510 poll",
            ])
        #expect(t.log == [#"1 level=debug msg="event poll failed, retrying" count=2"#])
        #expect(t.triggers.isEmpty)
    }

    // MARK: - Lost polls

    /// A re-sync's wake-up at `seconds`: scheduled, sent and delivered at once.
    static func resyncWake(at seconds: String) -> [String] {
        lines(
            #"""
            \#(seconds) level=debug msg="wake-up scheduled" reason=resync
            \#(seconds) level=debug msg="sending wake-up" reason=resync
            \#(seconds) level=info msg="wake-up delivered" status=202 reason=resync
            """#)
    }

    /// A restart found at `seconds`, and its wake-up.
    static func restartWake(at seconds: String) -> [String] {
        [#"\#(seconds) level=info msg="Syncthing restarted, cursor reset""#] + resyncWake(at: seconds)
    }

    /// A long-poll lost at `seconds` (its `attempt`-th fault in a row) and the re-sync that follows at once.
    static func lostPollRecords(at seconds: String, _ code: ErrorCode = .transportTruncated, attempt: Int) -> [String] {
        [
            #"\#(seconds) level=warn msg="event poll failed, retrying" code=\#(code.rawValue) attempt=\#(attempt)"#,
            #"\#(seconds) level=warn msg="events were lost, re-syncing""#,
        ]
    }

    @Test(
        "a cut, oversized or malformed poll → one warning, one waking re-sync at the head, the next poll at once",
        arguments: [ErrorCode.transportTruncated, .transportBodyTooLarge, .syncthingMalformed])
    func lostPoll(code: ErrorCode) {
        let (rig, t) = Self.rig(head: 5)
        let fault: FakeSyncthingTransport.Reply =
            switch code {
            case .transportTruncated: .failure(.truncated)
            case .transportBodyTooLarge: .failure(.bodyTooLarge)
            default: Self.malformed
            }
        rig.script(.poll, [Self.fail(fault), Self.answer([Self.change(10)])])
        rig.syncthing.state.withLock { $0.head = 9 }
        rig.settle()
        #expect(
            t.requests == [
                "0 poll since=5", "0.100 status", "0.100 head", "0.100 poll since=9", "2.100 status", "2.100 poll",
            ])
        #expect(t.triggers == ["0.100", "2.100"])
        #expect(
            t.log
                == Self.lostPollRecords(at: "0.100", code, attempt: 1) + Self.resyncWake(at: "0.100")
                + Self.changeWake(at: "2.100", count: 1))
        #expect(rig.heldPollCursor() == 10)
    }

    @Test("repeated lost polls → back off 0.5, 1 s, no more wake-ups; the owed one is paid once polls recover")
    func repeatedLostPolls() {
        let (rig, t) = Self.rig()
        rig.script(
            .poll,
            Array(repeating: Self.fail(.failure(.truncated)), count: 3) + [Self.answer([]), Self.fail(Self.malformed)])
        rig.settle()
        #expect(
            t.requests == [
                "0 poll since=0", "0.100 status", "0.100 head", "0.100 poll since=0", "0.200 status", "0.200 head",
                "0.700 poll since=0", "0.800 status", "0.800 head", "1.800 poll since=0", "3.800 status",
                "3.800 poll since=0", "3.900 status", "3.900 head", "3.900 poll",
            ])
        // The first re-sync wakes; the 2nd and 3rd do not; the answer that worked (3.8 s) pays what they owed, before
        // the next fault, whose re-sync wakes again.
        #expect(t.triggers == ["0.100", "3.800", "3.900"])
        #expect(
            t.log
                == Self.lostPollRecords(at: "0.100", attempt: 1) + Self.resyncWake(at: "0.100")
                + Self.lostPollRecords(at: "0.200", attempt: 2) + Self.lostPollRecords(at: "0.800", attempt: 3)
                + Self.resyncWake(at: "3.800") + Self.lostPollRecords(at: "3.900", .syncthingMalformed, attempt: 1)
                + Self.resyncWake(at: "3.900"))
    }

    @Test("a gap whose batch's change was already pushed (a slow status read) adds no re-sync wake-up")
    func gapAfterItsBatchWasPushed() {
        // Found by the simulator: the gap woke the relay again right after the push its own batch had sent.
        let (rig, t) = Self.rig(head: 5)
        // Event 6 was lost; the status read that applies the batch takes 1 s, and the change goes out meanwhile.
        rig.script(.poll, [Self.answer([Self.change(7)])])
        rig.script(
            .status, [.body(#"{"myID":"\#(ServiceRig.idA)","startTime":"2026-12-01T00:00:00Z"}"#, takes: .seconds(1))])
        rig.settle()
        #expect(t.requests == ["0 poll since=5", "2 status", "3 poll"])
        #expect(t.triggers == ["2"])
        #expect(
            t.log
                == Self.lines(
                    #"""
                    2 level=debug msg="wake-up scheduled" reason=change
                    2 level=debug msg="sending wake-up" reason=change
                    2 level=info msg="wake-up delivered" status=202 reason=change
                    3 level=warn msg="events were lost, re-syncing" count=1
                    3 level=debug msg="events received" count=1 events=1
                    """#))
        #expect(rig.heldPollCursor() == 7)
    }

    // MARK: - Restarts

    @Test("a clean restart (early [] and a new startTime) → the cursor is re-placed at the new head, one wake-up")
    func restartByStartTime() {
        let (rig, t) = Self.rig(head: 5)
        rig.syncthing.state.withLock { ($0.startTime, $0.head) = (Self.later, 2) }
        rig.script(.poll, [Self.answer([], after: 0.2)])
        rig.settle()
        #expect(t.requests == ["0 poll since=5", "0.200 status", "0.200 head", "0.200 poll"])
        #expect(t.triggers == ["0.200"])
        #expect(t.log == Self.restartWake(at: "0.200"))
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
        #expect(t.requests == ["0 poll since=5", "1.500 status", "1.500 head", "1.500 poll"])
        #expect(t.triggers == ["1.500"])
        #expect(t.log == Self.restartWake(at: "1.500"))
        #expect(rig.heldPollCursor() == 2)
    }

    @Test("Syncthing down, then back with a new startTime → verify-first finds the restart before any long-poll")
    func restartAfterDowntime() {
        let (rig, t) = Self.rig(head: 5)
        rig.script(.poll, [Self.fail(.failure(.truncated))])
        rig.script(.status, [Self.refused, Self.refused, Self.started(Self.later)])
        rig.syncthing.state.withLock { $0.head = 1 }
        rig.settle()
        #expect(
            t.requests == [
                "0 poll since=5", "0.100 status", "0.600 status", "1.600 status", "1.600 head", "1.600 poll",
            ])
        #expect(t.triggers == ["1.600"])
        #expect(
            t.log
                == Self.lines(
                    #"""
                    0.100 level=warn msg="Syncthing not reachable, retrying" code=transport.connect attempt=1
                    0.600 level=debug msg="Syncthing not reachable, retrying" code=transport.connect attempt=2
                    """#) + Self.restartWake(at: "1.600"))
    }

    @Test("a crash-looping Syncthing → the first restart wakes, the next ones back off and owe one, paid on recovery")
    func crashLoop() {
        let (rig, t) = Self.rig()
        rig.script(.status, ["00:01:00", "00:02:00", "00:03:00"].map { Self.started("2026-12-01T\($0)Z") })
        rig.syncthing.state.withLock { $0.startTime = "2026-12-01T00:03:00Z" }
        rig.script(.poll, Array(repeating: Self.answer([], after: 0.1), count: 3) + [Self.answer([], after: 50)])
        rig.settle()
        // Early-answer backoff before each status read (0.5, 1 s), restart backoff after each re-sync (0.5, 1 s).
        #expect(
            t.requests == [
                "0 poll since=0", "0.100 status", "0.100 head", "0.100 poll since=0", "0.700 status", "0.700 head",
                "1.200 poll since=0", "2.300 status", "2.300 head", "3.300 poll since=0", "53.300 status",
                "53.300 poll",
            ])
        // The first restart wakes; the recovered poll (53.3 s) pays what the two after it owed.
        #expect(t.triggers == ["0.100", "53.300"])
        #expect(
            t.log
                == Self.restartWake(at: "0.100")
                + Self.lines(
                    #"""
                    0.200 level=debug msg="event poll failed, retrying" count=2
                    0.700 level=info msg="Syncthing restarted, cursor reset"
                    1.300 level=debug msg="event poll failed, retrying" count=3
                    2.300 level=info msg="Syncthing restarted, cursor reset"
                    53.300 level=debug msg="wake-up scheduled" reason=resync
                    53.300 level=debug msg="sending wake-up" reason=resync
                    53.300 level=info msg="wake-up delivered" status=202 reason=resync
                    """#))
        #expect(t.now == "53.300")
    }

    @Test("a changed Device ID is a restart: the batch is not applied, the cursor is re-placed, one wake-up")
    func deviceIDChanged() {
        let (rig, t) = Self.rig(head: 5)
        rig.syncthing.state.withLock { ($0.myID, $0.head) = (ServiceRig.idB, 6) }
        rig.script(.poll, [Self.answer([Self.change(6)])])
        rig.settle()
        #expect(t.requests == ["0 poll since=5", "2 status", "2 head", "2 poll"])
        // The change woke at once; the restart's wake-up comes at the same instant and joins it: one wake-up, sent
        // after the restart was found, so it carries the new Device ID. The batch itself is not received.
        #expect(t.triggers == ["2"])
        #expect(
            t.log
                == Self.lines(
                    #"""
                    2 level=debug msg="wake-up scheduled" reason=change
                    2 level=warn msg="Syncthing's Device ID changed; wake-ups carry the new one"
                    2 level=info msg="Syncthing restarted, cursor reset"
                    2 level=debug msg="sending wake-up" reason=change
                    2 level=info msg="wake-up delivered" status=202 reason=change
                    """#))
        #expect(rig.relay.state.withLock { $0.bodies }.allSatisfy { $0.contains(ServiceRig.idB) })
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
        #expect(
            t.requests == [
                "0 poll since=0", "0.100 status", "0.100 head", "0.100 poll since=0", "0.200 status", "0.200 head",
                "0.700 poll",
            ])
        #expect(t.triggers == ["0.100", "0.200"])
        #expect(
            t.log
                == Self.lostPollRecords(at: "0.100", attempt: 1) + Self.resyncWake(at: "0.100")
                + Self.lines(
                    #"""
                    0.200 level=warn msg="event poll failed, retrying" code=transport.truncated attempt=2
                    0.200 level=warn msg="Syncthing's Device ID changed; wake-ups carry the new one"
                    """#) + Self.restartWake(at: "0.200"))
    }

    @Test("a restart that wakes after repeated faults pays what they owed: recovery adds no second wake-up")
    func wakingRestartPaysTheDebt() {
        let (rig, t) = Self.rig()
        rig.script(.poll, Array(repeating: Self.fail(.failure(.truncated)), count: 3))
        let start = "2026-12-01T00:00:00Z"
        rig.script(.status, [Self.started(start), Self.started(start), Self.started(start, id: ServiceRig.idB)])
        rig.syncthing.state.withLock { $0.myID = ServiceRig.idB }
        rig.settle()
        // Re-syncs at 0.1 s (wakes), 0.2 s (owes) and 0.8 s (a restart: wakes).
        #expect(t.triggers == ["0.100", "0.800"])
        #expect(
            t.log
                == Self.lostPollRecords(at: "0.100", attempt: 1) + Self.resyncWake(at: "0.100")
                + Self.lostPollRecords(at: "0.200", attempt: 2)
                + Self.lines(
                    #"""
                    0.800 level=warn msg="event poll failed, retrying" code=transport.truncated attempt=3
                    0.800 level=warn msg="Syncthing's Device ID changed; wake-ups carry the new one"
                    """#) + Self.restartWake(at: "0.800"))
        let recovery = Timeline(rig)
        rig.script(.poll, [Self.answer([Self.change(1)])])
        rig.settle()
        // The poll that works delivers its change only: no re-sync wake-up is left to pay.
        #expect(recovery.triggers == ["0.100", "0.800", "3.800"])
        #expect(recovery.log == Self.changeWake(at: "3.800", count: 1))
    }

    @Test("a change pushed after a re-sync that owed a wake-up pays it: recovery adds no second wake-up")
    func owedWakePaidByALaterPush() {
        // Found by the simulator: the owed wake-up went out on recovery although the change's push came after the
        // re-sync that owed it, a second trigger with nothing new.
        let (rig, t) = Self.rig()
        let start = Self.started("2026-12-01T00:00:00Z")
        rig.script(
            .poll,
            [
                Self.fail(.failure(.truncated)), Self.fail(.failure(.truncated)), Self.answer([Self.change(1)]),
                Self.answer([Self.change(1)]),
            ])
        // The change's status read fails, so the poll and status read that pay the debt come only at 6.7 s.
        rig.script(.status, [start, start, Self.refused])
        rig.settle()
        #expect(
            t.requests == [
                "0 poll since=0", "0.100 status", "0.100 head", "0.100 poll since=0", "0.200 status", "0.200 head",
                "0.700 poll since=0", "2.700 status", "4.700 status", "4.700 poll since=0", "6.700 status",
                "6.700 poll",
            ])
        // Re-syncs at 0.1 s (wakes) and 0.2 s (owes); the change at 2.7 s wakes at once, after that debt arose.
        #expect(t.triggers == ["0.100", "2.700"])
        #expect(
            t.log(.triggerDelivered) == [
                #"0.100 level=info msg="wake-up delivered" status=202 reason=resync"#,
                #"2.700 level=info msg="wake-up delivered" status=202 reason=change"#,
            ])
        #expect(
            t.log
                == Self.lostPollRecords(at: "0.100", attempt: 1) + Self.resyncWake(at: "0.100")
                + Self.lostPollRecords(at: "0.200", attempt: 2)
                + Self.lines(
                    #"""
                    2.700 level=debug msg="wake-up scheduled" reason=change
                    2.700 level=debug msg="Syncthing not reachable, retrying" code=transport.connect attempt=3
                    2.700 level=debug msg="sending wake-up" reason=change
                    2.700 level=info msg="wake-up delivered" status=202 reason=change
                    6.700 level=debug msg="events received" count=1 events=0
                    """#))
    }

    @Test("a restart found after a re-sync whose head read failed pays what that re-sync owed: no second wake-up")
    func restartPaysAFailedResyncsDebt() {
        // Found by the simulator: the restart's wake-up went out, and the next good poll paid the failed re-sync's
        // debt once more, a second trigger with nothing new.
        let (rig, t) = Self.rig()
        rig.script(
            .poll, [Self.fail(.failure(.truncated)), Self.fail(.failure(.truncated)), Self.answer([], after: 50)])
        let start = "2026-12-01T00:00:00Z"
        rig.script(.status, [Self.started(start), Self.started(start), Self.refused])
        rig.syncthing.state.withLock { $0.startTime = Self.later }
        // The first re-sync's head read works; the second's (the one that owes) fails.
        rig.script(.head, [.body("[]"), Self.refused])
        rig.settle()
        #expect(
            t.requests == [
                "0 poll since=0", "0.100 status", "0.100 head", "0.100 poll since=0", "0.200 status", "0.200 head",
                "1.200 status", "3.200 status", "3.200 head", "3.200 poll since=0", "53.200 status", "53.200 poll",
            ])
        // Re-syncs at 0.1 s (wakes), 0.2 s (owes, its head read fails) and 3.2 s (a restart: wakes, and pays).
        #expect(t.triggers == ["0.100", "3.200"])
        #expect(
            t.log(.triggerDelivered) == [
                #"0.100 level=info msg="wake-up delivered" status=202 reason=resync"#,
                #"3.200 level=info msg="wake-up delivered" status=202 reason=resync"#,
            ])
    }

    // MARK: - Syncthing not answering

    @Test("status failing → verify-first, backoff to 5 s, a warning on the 1st and every 20th; no re-sync after")
    func statusFailing() {
        let (rig, t) = Self.rig()
        rig.script(.poll, [Self.answer([Self.change(1)]), Self.answer([Self.change(1)])])
        // The start-up's status read answered; the poll's and the verify-first ones fail.
        rig.script(.status, Array(repeating: Self.refused, count: 21))
        rig.settle()
        // Status reads 0.5, 1, 2, 4 s apart, then every 5 s (config.xml re-read every 3rd failure from the 5th);
        // after the 22nd, which answers, the same batch is polled again from the same cursor.
        let statusReads = ["2", "2.500", "3.500", "5.500"] + (0..<18).map { Timeline.seconds(9.5 + 5 * Double($0)) }
        #expect(t.requests.filter { $0.hasSuffix(" status") } == statusReads.map { $0 + " status" } + ["96.500 status"])
        #expect(Array(t.requests.prefix(2)) == ["0 poll since=0", "2 status"])
        #expect(
            Array(t.requests.suffix(4)) == ["94.500 status", "94.500 poll since=0", "96.500 status", "96.500 poll"])
        let unavailable = (1...21).map { attempt in
            let level = attempt == 1 || attempt == 20 ? "warn" : "debug"
            return #"\#(statusReads[attempt - 1]) level=\#(level) msg="Syncthing not reachable, retrying" "#
                + "code=transport.connect attempt=\(attempt)"
        }
        #expect(t.log(.syncthingUnavailable) == unavailable)
        // The change woke once, at 2 s, before its status read failed; the batch polled again is received once
        // (96.5 s), and the change it repeats is not news a second time: no second wake-up, no re-sync in between.
        #expect(t.triggers == ["2"])
        #expect(t.log(.triggerDelivered) == [#"2 level=info msg="wake-up delivered" status=202 reason=change"#])
        #expect(t.log(.eventsReceived) == [#"96.500 level=debug msg="events received" count=1 events=0"#])
        #expect(t.logged(.syncthingRestarted).isEmpty && t.logged(.eventGap).isEmpty)
    }

    @Test("a batch polled again after its status read failed is not news twice; the change after it is")
    func batchPolledAgainIsNewsOnce() {
        // Found by the simulator: the repeated batch woke the phone a second time for the same change.
        let (rig, t) = Self.rig()
        rig.script(
            .poll,
            [Self.answer([Self.change(1)]), Self.answer([Self.change(1)]), Self.answer([Self.change(2)])])
        rig.script(.status, [Self.refused])
        rig.settle()
        #expect(
            t.requests == [
                "0 poll since=0", "2 status", "2.500 status", "2.500 poll since=0", "4.500 status",
                "4.500 poll since=1", "6.500 status", "6.500 poll",
            ])
        #expect(t.triggers == ["2", "6.500"])
        #expect(
            t.log(.eventsReceived) == [
                #"4.500 level=debug msg="events received" count=1 events=0"#,
                #"6.500 level=debug msg="events received" count=1 events=1"#,
            ])
    }

    @Test("a batch with a ConfigSaved re-reads config.xml before its status read, and its change is delivered")
    func configSavedRereadsBeforeTheStatusRead() {
        let (rig, t) = Self.rig()
        rig.script(.poll, [Self.answer([Self.configSaved, Self.change(2)])])
        rig.settle()
        #expect(t.requests == ["0 poll since=0", "2 reread", "2 status", "2 poll"])
        #expect(t.triggers == ["2"])
        #expect(t.log == Self.changeWake(at: "2", count: 2))
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
        #expect(t.requests == ["0 poll since=0", "2 status", "2 reread", "2 status", "2 poll"])
        #expect(t.log == [#"2 level=info msg="re-read config.xml after an authentication failure""#])
    }

    @Test("401 with an unchanged key → an error on the 1st and every 20th, backoff, then the unavailable record")
    func unauthorizedKeyUnchanged() {
        let (rig, t) = Self.rig()
        rig.script(.poll, [Self.answer([])])
        rig.script(.status, Array(repeating: Self.wrongKey, count: 20))
        rig.settle()
        // Each 401 re-reads config.xml at once; the next status read follows the backoff: 0.5, 1, 2, 4, then 5 s.
        let times = ["2", "2.500", "3.500", "5.500"] + (0..<16).map { Timeline.seconds(9.5 + 5 * Double($0)) }
        #expect(
            t.requests == ["0 poll since=0"] + times.flatMap { ["\($0) status", "\($0) reread"] } + [
                "89.500 status", "89.500 poll",
            ])
        let expected = times.indices.flatMap { index in
            let attempt = index + 1
            let first = attempt == 1 || attempt == 20
            return [
                #"\#(times[index]) level=\#(first ? "error" : "debug") msg="Syncthing rejected the API key" "#
                    + "code=syncthing.wrong-api-key attempt=\(attempt)",
                #"\#(times[index]) level=\#(first ? "warn" : "debug") msg="Syncthing not reachable, retrying" "#
                    + "status=401 code=syncthing.wrong-api-key attempt=\(attempt)",
            ]
        }
        #expect(t.log == expected)
    }

    @Test("401 on a poll while the status read works → re-read, back off, poll again from the same cursor")
    func unauthorizedPoll() {
        let (rig, t) = Self.rig(head: 5)
        rig.script(.poll, [Self.fail(Self.wrongKey)])
        rig.settle()
        #expect(t.requests == ["0 poll since=5", "0.100 status", "0.100 reread", "0.600 poll"])
        #expect(
            t.log
                == Self.lines(
                    #"""
                    0.100 level=warn msg="event poll failed, retrying" code=syncthing.wrong-api-key attempt=1
                    0.100 level=error msg="Syncthing rejected the API key" code=syncthing.wrong-api-key attempt=1
                    """#))
        #expect(t.triggers.isEmpty)
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
        #expect(t.requests == ["0 status", "0 reread", "0 status"])
        #expect(rig.exitStatuses == [.configuration])
        #expect(
            t.log
                == Self.lines(
                    #"""
                    0 level=info msg="relay healthy"
                    0 level=info msg="re-read config.xml after an authentication failure"
                    0 level=error msg="Syncthing rejected the API key" code=syncthing.wrong-api-key
                    """#))
    }

    @Test("connect: an unchanged key → exit 78 at once")
    func connectKeyUnchanged() {
        let (rig, t) = Self.rig(.connect)
        rig.script(.status, [Self.wrongKey])
        rig.start()
        rig.settle()
        #expect(t.requests == ["0 status", "0 reread"])
        #expect(rig.exitStatuses == [.configuration])
        #expect(
            t.log(.syncthingAuthFailed) == [
                #"0 level=error msg="Syncthing rejected the API key" code=syncthing.wrong-api-key"#
            ])
    }

    @Test("connect: Syncthing down → backoff to 5 s, a warning with the delay on the 1st and every 10th")
    func connectWhileDown() {
        let (rig, t) = Self.rig(.connect)
        rig.script(.status, Array(repeating: Self.refused, count: 12))
        rig.start()
        rig.settle()
        // Connected: the head read follows the 13th status read.
        let times = ["0", "0.500", "1.500", "3.500"] + (0..<9).map { Timeline.seconds(7.5 + 5 * Double($0)) }
        #expect(
            t.requests.filter { !$0.hasSuffix("reread") } == times.map { "\($0) status" } + [
                "47.500 head", "47.500 poll",
            ])
        let delays = ["0.500", "1.000", "2.000", "4.000"] + Array(repeating: "5.000", count: 8)
        let unavailable = (1...12).map { attempt in
            let level = attempt == 1 || attempt == 10 ? "warn" : "debug"
            return #"\#(times[attempt - 1]) level=\#(level) msg="Syncthing not reachable, retrying" "#
                + "code=transport.connect attempt=\(attempt) delay=\(delays[attempt - 1])"
        }
        #expect(t.log(.syncthingUnavailable) == unavailable)
        #expect(t.log(.syncthingConnected) == [#"47.500 level=info msg="connected to Syncthing""#])
    }

    // MARK: - The head read

    @Test("placing the cursor: head read failures back off and warn with the delay; the answer is the first poll")
    func placeHeadFailing() {
        let (rig, t) = Self.rig(.placeHead)
        rig.script(.head, Array(repeating: Self.refused, count: 3))
        rig.syncthing.state.withLock { $0.head = 9 }
        rig.start()
        rig.settle()
        #expect(t.requests == ["0 head", "0.500 head", "1.500 head", "3.500 head", "3.500 poll"])
        #expect(
            t.log
                == Self.lines(
                    #"""
                    0 level=info msg="relay healthy"
                    0 level=warn msg="event poll failed, retrying" code=transport.connect attempt=1 delay=0.500
                    0.500 level=warn msg="event poll failed, retrying" code=transport.connect attempt=2 delay=1.000
                    1.500 level=warn msg="event poll failed, retrying" code=transport.connect attempt=3 delay=2.000
                    3.500 level=info msg="connected to Syncthing"
                    """#))
        #expect(rig.heldPollCursor() == 9)
    }

    @Test("a lost poll whose head read fails → verify-first re-syncs before the next poll, and still wakes once")
    func resyncHeadFailing() {
        let (rig, t) = Self.rig(head: 5)
        rig.script(.poll, [Self.fail(.failure(.truncated))])
        rig.script(.head, [Self.refused])
        rig.syncthing.state.withLock { $0.head = 7 }
        rig.settle()
        #expect(
            t.requests == ["0 poll since=5", "0.100 status", "0.100 head", "0.600 status", "0.600 head", "0.600 poll"])
        #expect(t.triggers == ["0.600"])
        #expect(
            t.log
                == Self.lines(
                    #"""
                    0.100 level=warn msg="event poll failed, retrying" code=transport.truncated attempt=1
                    0.600 level=warn msg="events were lost, re-syncing"
                    """#) + Self.resyncWake(at: "0.600"))
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
            t.requests == [
                "0 poll since=5", "1.500 status", "1.500 head", "1.500 status", "1.500 head", "2.500 status",
                "2.500 head", "2.500 poll",
            ])
        #expect(t.triggers == ["2.500"])
        #expect(t.log == Self.restartWake(at: "2.500"))
        #expect(rig.heldPollCursor() == 1)
    }
}
