import NotifyCore
import Testing

@testable import NotifyRuntime
@testable import NotifyTestSupport

/// The real `Service` against a Syncthing that misbehaves or reports peers, on virtual time (`ServiceRig`): poll
/// faults, restarts, the FolderCompletion and paused-peer rules, and the stale-peer sweep. Times are from the rig's
/// start; a long-poll answered by `answer` takes 2 s unless the test says otherwise.
@Suite("The real service and what Syncthing answers")
struct ServiceSyncthingTests {
    static func at(_ seconds: Double) -> Duration { .milliseconds(Int64(seconds * 1000)) }

    static func completion(
        _ id: Int, device: String = ServiceRig.phone, needBytes: Int, remoteState: String = "valid", sequence: Int = 5
    ) -> String {
        let items = needBytes > 0 ? 1 : 0
        return
            #"{"id":\#(id),"type":"FolderCompletion","data":{"folder":"vault","device":"\#(device)","needBytes":\#(needBytes),"needItems":\#(items),"needDeletes":0,"remoteState":"\#(remoteState)","sequence":\#(sequence)}}"#
    }

    /// A long-poll answer that does not arrive whole.
    enum PollFault: String, CaseIterable, Sendable {
        case cut, oversized, malformed, maxEventId

        func apply(to rig: ServiceRig) {
            switch self {
            case .cut: rig.fail(.truncated)
            case .oversized: rig.fail(.bodyTooLarge)
            case .malformed: rig.answer(#"[{"id":1,"type":"#)
            case .maxEventId:
                rig.answer(#"[{"id":9223372036854775807,"type":"LocalIndexUpdated","data":{"folder":"vault"}}]"#)
            }
        }
    }

    // MARK: - Poll faults

    @Test(
        "a cut, oversized or malformed long-poll answer: one re-sync wake-up, the next poll at once, later events wake",
        arguments: PollFault.allCases)
    func pollFaultResyncsOnce(fault: PollFault) {
        let rig = ServiceRig(announce: false)
        rig.start()
        fault.apply(to: rig)
        #expect(rig.logged(.eventPollFailed).count == 1)
        rig.advance(seconds: 6)
        // The fault came at 2 (the long-poll's 2 s): the re-sync's wake-up 5 s later.
        #expect(rig.triggerTimes == [.seconds(7)])
        #expect(rig.runtime.holdsLongPoll)
        rig.answer([(1, "LocalIndexUpdated")])
        rig.advance(seconds: 10)
        #expect(rig.reasons == [.resync, .change])
        #expect(rig.triggerTimes == [.seconds(7), .seconds(15)])
        #expect(rig.exits.withLock { $0 }.isEmpty)
    }

    @Test("malformed answers that never stop: one wake-up, and the polls back off (0.5 s doubling to 5 s), no spin")
    func malformedAnswersBackOff() {
        let rig = ServiceRig(announce: false)
        rig.syncthing.state.withLock { $0.pollTakes = .zero }
        rig.start()
        rig.answerEveryPoll(#"[{"id":1,"type":"#, for: 30)
        // The first fault's re-sync worked, so it costs no wait; then 0.5, 1, 2, 4, 5, 5, … s between polls.
        #expect(
            rig.pollTimes == [
                .zero, .zero, Self.at(0.5), Self.at(1.5), Self.at(3.5), Self.at(7.5), Self.at(12.5), Self.at(17.5),
                Self.at(22.5), Self.at(27.5),
            ])
        #expect(rig.logged(.eventPollFailed).count == 10)
        #expect(rig.reasons == [.resync])
        #expect(rig.triggerTimes == [.seconds(5)])
    }

    @Test("early empty answers that never stop: the first is free, then 0.5 s doubling to 5 s; no wake-up; recovers")
    func earlyEmptyAnswersBackOff() {
        let rig = ServiceRig(announce: false)
        rig.syncthing.state.withLock { $0.pollTakes = .zero }
        rig.start()
        rig.answerEveryPoll("[]", for: 30)
        // The first early answer is free (a clean restart answers the held poll so); then 0.5, 1, 2, 4, 5, … s.
        #expect(
            rig.pollTimes == [
                .zero, .zero, Self.at(0.5), Self.at(1.5), Self.at(3.5), Self.at(7.5), Self.at(12.5), Self.at(17.5),
                Self.at(22.5), Self.at(27.5),
            ])
        #expect(rig.triggers == 0)
        rig.syncthing.state.withLock { $0.pollTakes = .seconds(2) }
        rig.advance(seconds: 5)
        #expect(rig.runtime.holdsLongPoll)
        rig.answer([(1, "LocalIndexUpdated")])
        rig.advance(seconds: 10)
        #expect(rig.reasons == [.change])
    }

    @Test("ids replayed at once read as restarts: re-placed each time, backed off, one wake-up for them, no storm")
    func replayedIdsResyncWithoutStorm() {
        let rig = ServiceRig(announce: false)
        rig.start()
        rig.answer([(1, "LocalIndexUpdated"), (2, "LocalIndexUpdated")])
        rig.advance(seconds: 6)
        #expect(rig.triggerTimes == [.seconds(7)])
        rig.syncthing.state.withLock {
            $0.head = 2
            $0.pollTakes = .zero
        }
        rig.answerEveryPoll(#"[{"id":1,"type":"LocalIndexUpdated","data":{"folder":"vault"}}]"#, for: 30)
        // From 8 s: the first replay re-syncs at once, then 0.5, 1, 2, 4, 5, … s between polls.
        let replays = [8, 8, 8.5, 9.5, 11.5, 15.5, 20.5, 25.5, 30.5, 35.5].map { Self.at($0) }
        #expect(rig.pollTimes == [.zero] + replays)
        #expect(rig.logged(.syncthingRestarted).count == replays.count)
        #expect(rig.reasons == [.change, .resync])
    }

    @Test("after a gap, consecutive ids are an ordinary batch again: one wake-up for the gap, none after")
    func gapWakesOnceThenOrdinary() {
        let rig = ServiceRig(announce: false)
        rig.start()
        rig.answer("[" + Self.completion(5, needBytes: 0) + "]")
        rig.answer("[" + Self.completion(6, needBytes: 0) + "]")
        rig.advance(seconds: 60)
        #expect(rig.logged(.eventGap).count == 1)
        #expect(rig.reasons == [.resync])
        #expect(rig.triggerTimes == [.seconds(7)])
    }

    @Test("Syncthing killed mid-poll, down 1.5 s, back with a new start time: reconnects, wakes once, a change wakes")
    func restartWithDowntime() {
        let rig = ServiceRig(announce: false)
        rig.start()
        rig.takeSyncthingDown()
        rig.advance(seconds: 1.5)
        rig.syncthing.state.withLock {
            $0.down = false
            $0.startTime = "2026-12-01T01:00:00Z"
            $0.head = 3
        }
        rig.advance(seconds: 10)
        // Failures at 0, 0.5 and 1.5 (warned once); the status read at 3.5 (1.5 + 2) finds the new run.
        #expect(rig.logged(.syncthingUnavailable).filter { $0.level == .warn }.count == 1)
        #expect(rig.logged(.syncthingRestarted).count == 1)
        #expect(rig.triggerTimes == [Self.at(8.5)])
        rig.answer([(4, "LocalIndexUpdated")])
        rig.advance(seconds: 10)
        #expect(rig.reasons == [.resync, .change])
    }

    @Test("Syncthing unreachable at start, then started: the service connects, announces, and does not exit")
    func unreachableAtStartConnectsLater() {
        let rig = ServiceRig()
        rig.syncthing.state.withLock { $0.down = true }
        rig.start()
        rig.advance(seconds: 10)
        #expect(rig.triggers == 0)
        rig.syncthing.state.withLock { $0.down = false }
        rig.advance(seconds: 10)
        #expect(rig.logged(.syncthingConnected).count == 1)
        // Status reads at 0, 0.5, 1.5, 3.5, 7.5 (0.5 s doubling) fail; the one at 12.5 connects and announces.
        #expect(rig.triggerTimes == [Self.at(12.5)])
        #expect(rig.exits.withLock { $0 }.isEmpty)
        #expect(rig.runtime.holdsLongPoll)
    }

    // MARK: - What is news

    @Test("a burst of 200 local changes wakes once")
    func burstWakesOnce() {
        let rig = ServiceRig(announce: false)
        rig.start()
        rig.answer((1...200).map { (id: $0, type: "LocalIndexUpdated") })
        rig.advance(seconds: 60)
        #expect(rig.triggerTimes == [.seconds(7)])
    }

    @Test("events outside WATCHED_FOLDERS and a FolderCompletion with nothing needed do not wake")
    func nothingToWake() {
        let rig = ServiceRig(announce: false, watched: ["vault"])
        rig.start()
        rig.answer(
            #"[{"id":1,"type":"LocalIndexUpdated","data":{"folder":"notes"}},"#
                + Self.completion(2, needBytes: 0) + "]")
        rig.advance(seconds: 60)
        #expect(rig.logged(.eventsReceived).last?.fields == [.count(2), LogField(.events, .int(0))])
        #expect(rig.triggers == 0)
    }

    @Test("FolderCompletion is news only on the edge to needing data: repeats of a need do not wake again")
    func completionNewsOnlyOnFirstNeed() {
        let rig = ServiceRig(announce: false)
        rig.start()
        rig.answer("[" + Self.completion(1, needBytes: 4096) + "]")
        rig.advance(seconds: 6)
        #expect(rig.triggerTimes == [.seconds(7)])
        // The peer pulls: the same need reported again and again, then less, then in sync.
        rig.answer("[" + Self.completion(2, needBytes: 4096) + "," + Self.completion(3, needBytes: 1024) + "]")
        rig.answer("[" + Self.completion(4, needBytes: 0) + "]")
        rig.advance(seconds: 60)
        #expect(rig.triggers == 1)
        // A new need after the sync is news again (asked at 72, it arrives at 74).
        rig.answer("[" + Self.completion(5, needBytes: 512) + "]")
        rig.advance(seconds: 6)
        #expect(rig.triggerTimes == [.seconds(7), .seconds(79)])
        #expect(rig.reasons == [.change, .change])
    }

    @Test("files trickling to a slow, connected peer: one wake-up for the whole transfer, not one per progress report")
    func trickleWakesOnce() {
        let rig = ServiceRig(announce: false)
        rig.start()
        rig.answer([(1, "LocalIndexUpdated"), (2, "LocalIndexUpdated")])
        // Syncthing reports the peer's progress every few seconds while it pulls, need falling to 0.
        for (id, need) in zip(3..., [8192, 8192, 6144, 4096, 4096, 2048, 0]) {
            rig.advance(seconds: 8)
            rig.answer("[" + Self.completion(id, needBytes: need) + "]")
        }
        rig.advance(seconds: 60)
        #expect(rig.triggerTimes == [.seconds(7)])
    }

    @Test("a peer with no index yet (complete at sequence 0, then needing): one change, one wake-up, never swept awake")
    func peerWithoutIndexWakesOnce() {
        let rig = ServiceRig(announce: false, sweep: .seconds(10))
        rig.syncthing.state.withLock { $0.phoneSequence = 0 }
        rig.start()
        rig.answer([(1, "LocalIndexUpdated")])
        rig.answer("[" + Self.completion(2, needBytes: 0, sequence: 0) + "]")
        rig.syncthing.state.withLock {
            $0.phoneSequence = 3
            $0.phoneNeedBytes = 4096
        }
        rig.answer("[" + Self.completion(3, needBytes: 4096, sequence: 3) + "]")
        rig.advance(seconds: 60)
        #expect(rig.triggerTimes == [.seconds(7)])
        #expect(rig.reasons == [.change])
        // Sweeps at 10, 20, … 60 s saw it connected and needing data.
        #expect(rig.logged(.sweepFinished).count == 6)
    }

    @Test("a paused peer is not news: neither its FolderCompletion nor a local change shared only with it")
    func pausedPeerIsNotNews() {
        let rig = ServiceRig(announce: false)
        rig.syncthing.state.withLock {
            $0.devices =
                #"[{"deviceID":"\#(ServiceRig.idA)","paused":false},{"deviceID":"\#(ServiceRig.phone)","paused":true}]"#
        }
        rig.start()
        rig.answer("[" + Self.completion(1, needBytes: 4096) + "]")
        rig.answer([(2, "LocalIndexUpdated")])
        rig.advance(seconds: 60)
        #expect(rig.triggers == 0)
    }

    @Test("a peer that paused the folder on its side (remoteState paused) is not news until it resumes")
    func remotelyPausedFolderIsNotNews() {
        let rig = ServiceRig(announce: false)
        rig.start()
        rig.answer("[" + Self.completion(1, needBytes: 4096, remoteState: "paused") + "]")
        rig.advance(seconds: 60)
        #expect(rig.triggers == 0)
        rig.answer("[" + Self.completion(2, needBytes: 4096) + "]")
        rig.advance(seconds: 6)
        #expect(rig.reasons == [.change])
    }

    // MARK: - Push window

    @Test("edits 12 s apart inside the relay's push window: the first at once, the rest held and sent once at its end")
    func editsInsidePushWindow() {
        let rig = ServiceRig(announce: false, window: .seconds(30))
        rig.start()
        rig.answer([(1, "LocalIndexUpdated")])
        rig.advance(seconds: 10)
        rig.answer([(2, "LocalIndexUpdated")])
        rig.advance(seconds: 10)
        rig.answer([(3, "LocalIndexUpdated")])
        rig.advance(seconds: 120)
        // Changes arrive at 2, 14 and 26 (each long-poll takes 2 s): the first goes out at 7 and opens the window;
        // the others are due at 19 and 31 and go out together when it ends, at 37.
        #expect(rig.triggerTimes == [.seconds(7), .seconds(37)])
        #expect(rig.logged(.triggerHeldForWindow).count == 1)
    }

    // MARK: - The stale-peer sweep

    @Test("the sweep wakes for a peer that is offline and needs data, at every sweep")
    func sweepWakesForOfflinePeerNeedingData() {
        let rig = ServiceRig(announce: false, sweep: .seconds(60))
        rig.syncthing.state.withLock {
            $0.phoneConnected = false
            $0.phoneNeedBytes = 4096
        }
        rig.start()
        rig.advance(seconds: 130)
        #expect(rig.triggerTimes == [.seconds(65), .seconds(125)])
        #expect(rig.reasons == [.stalePeer, .stalePeer])
        #expect(
            rig.logged(.sweepFinished).map(\.fields) == [[LogField(.needing, .int(1))], [LogField(.needing, .int(1))]])
    }

    @Test("malformed completion answers void the sweep and are logged once an hour, with a count and no body")
    func malformedCompletionIsLoggedOncePerHour() {
        let rig = ServiceRig(announce: false, sweep: .seconds(60))
        rig.syncthing.state.withLock {
            $0.phoneConnected = false
            $0.phoneNeedBytes = 4096
            $0.completionBody = #"{"needBytes":"ZZBODYZZ"}"#
        }
        rig.start()
        rig.advance(seconds: 130)
        #expect(rig.triggers == 0, "a sweep that could not read a completion acts on nothing")
        #expect(rig.logged(.syncthingAnswerMalformed).map(\.fields) == [[.answer(.completion), .count(1)]])
        #expect(rig.logged(.syncthingAnswerMalformed).first?.level == .warn)
        // Sweeps at +65, +125, … +3665 s: the next line comes with the first malformed answer an hour after the
        // first line, and counts every one since (60).
        rig.advance(seconds: 3_600)
        #expect(
            rig.logged(.syncthingAnswerMalformed).map(\.fields)
                == [[.answer(.completion), .count(1)], [.answer(.completion), .count(60)]])
        #expect(!rig.records.map { $0.textLine() }.joined().contains("ZZBODYZZ"))
        // Syncthing answers properly again: the next sweep wakes.
        rig.syncthing.state.withLock { $0.completionBody = nil }
        rig.advance(seconds: 60)
        #expect(rig.reasons == [.stalePeer])
    }

    @Test("a folder whose devices list cannot be read and a malformed connections answer are logged, each on its own")
    func malformedFoldersAndConnectionsAreLogged() {
        let rig = ServiceRig(announce: false, sweep: .seconds(60))
        rig.syncthing.state.withLock {
            $0.folders = #"[{"id":"vault","paused":false,"devices":"ZZBODYZZ"}]"#
            $0.connectionsBody = #"{"connections":[]}"#
        }
        rig.start()
        #expect(rig.logged(.syncthingAnswerMalformed).map(\.fields) == [[.answer(.folders), .count(1)]])
        // The folder is shared with nobody, so no sweep reads connections: share it again to see them.
        rig.syncthing.state.withLock {
            $0.folders =
                #"[{"id":"vault","paused":false,"devices":[{"deviceID":"\#(ServiceRig.idA)"},{"deviceID":"\#(ServiceRig.phone)"}]}]"#
        }
        rig.advance(seconds: 70)
        #expect(
            rig.logged(.syncthingAnswerMalformed).map(\.fields)
                == [[.answer(.folders), .count(1)], [.answer(.connections), .count(1)]])
        #expect(rig.triggers == 0)
    }

    @Test("the sweep does not wake for a connected peer that needs data (it is syncing), nor when nobody needs any")
    func sweepQuietForConnectedOrInSyncPeers() {
        for (connected, need) in [(true, 4096), (false, 0), (true, 0)] {
            let rig = ServiceRig(announce: false, sweep: .seconds(60))
            rig.syncthing.state.withLock {
                $0.phoneConnected = connected
                $0.phoneNeedBytes = need
            }
            rig.start()
            rig.advance(seconds: 130)
            #expect(rig.triggers == 0)
            #expect(
                rig.logged(.sweepFinished).map(\.fields) == [
                    [LogField(.needing, .int(0))], [LogField(.needing, .int(0))],
                ])
        }
    }
}
