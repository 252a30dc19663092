import NotifyCore
import Testing

@testable import NotifyRuntime
@testable import NotifyTestSupport

/// What reaches the phone, through the real `Service` on virtual time (`ServiceRig`): batches arrive as long-poll
/// answers (each followed by its status read), the config and each sweep's observations are Syncthing's answers,
/// and the relay pushes at most once per 30 s (a trigger sooner after its last push is accepted but pushes nothing),
/// so these timelines count pushes, not triggers.
@Suite("News timelines: what reaches the phone")
struct ServiceNewsTimelineTests {
    /// `vault` and `notes` shared with the phone, `solo` with no one.
    static let folders = folderList()

    /// `folders`, with the folders in `paused` paused here, and `solo` shared with the phone when `soloShared`.
    static func folderList(paused: Set<String> = [], soloShared: Bool = false) -> String {
        let phone = ServiceRig.phone
        return "["
            + [
                folder("vault", phone, paused: paused.contains("vault")),
                folder("notes", phone, paused: paused.contains("notes")),
                soloShared ? folder("solo", phone) : folder("solo"),
            ].joined(separator: ",") + "]"
    }

    static func folder(_ id: String, _ peers: String..., paused: Bool = false) -> String {
        let devices = ([ServiceRig.idA] + peers).map { #"{"deviceID":"\#($0)"}"# }.joined(separator: ",")
        return #"{"id":"\#(id)","paused":\#(paused),"devices":[\#(devices)]}"#
    }

    /// The service as the environment sets it: a 2 s debounce held back at most 30 s, no announce, the relay's 30 s
    /// window, and a stale-peer sweep every `sweep` (none when nil). Long-polls take no time.
    /// - Parameter beforeStart: runs before the service starts (to script the start-up's answers).
    static func rig(sweep: Duration? = nil, beforeStart: (ServiceRig) -> Void = { _ in }) -> (ServiceRig, Timeline) {
        let rig = ServiceRig(environment: [
            "RELAY_URL": "http://127.0.0.1:9000", "DEBOUNCE_SECONDS": "2", "DEBOUNCE_MAX_SECONDS": "30",
            "STARTUP_ANNOUNCE": "false", "RELAY_WINDOW_SECONDS": "30",
            "STALE_RETRIGGER_SECONDS": sweep.map { "\($0.components.seconds)" } ?? "0", "LOG_LEVEL": "debug",
        ])
        rig.syncthing.state.withLock {
            $0.folders = Self.folders
            $0.pollTakes = .zero
        }
        rig.relayPushWindow(.seconds(30))
        beforeStart(rig)
        // Marked before the start: the start-up's reads and records are part of every timeline here.
        let t = Timeline(rig)
        rig.start()
        return (rig, t)
    }

    /// Event ids in order, from 1.
    struct Events {
        var id = 0
        mutating func local(_ folder: String) -> String {
            id += 1
            return #"{"id":\#(id),"type":"LocalIndexUpdated","data":{"folder":"\#(folder)"}}"#
        }
        mutating func completion(_ folder: String, need: Int, remote: String = "valid", sequence: Int = 7) -> String {
            id += 1
            return
                #"{"id":\#(id),"type":"FolderCompletion","data":{"folder":"\#(folder)","#
                + #""device":"\#(ServiceRig.phone)","needBytes":\#(need),"needItems":\#(need > 0 ? 1 : 0),"#
                + #""needDeletes":0,"remoteState":"\#(remote)","sequence":\#(sequence)}}"#
        }
        /// The phone takes `folder` (accepts or resumes it): complete at sequence 0 until its index comes, then
        /// what it needs.
        mutating func acceptance(_ folder: String, need: Int) -> [String] {
            [completion(folder, need: 0, sequence: 0), completion(folder, need: need, sequence: 4)]
        }
        mutating func configSaved() -> String {
            id += 1
            return #"{"id":\#(id),"type":"ConfigSaved","data":{}}"#
        }
    }

    /// `/rest/db/completion`'s answer for the phone in one folder.
    static func completion(need: Int, remote: String = "valid") -> FakeSyncthingTransport.Reply {
        .body(
            #"{"needBytes":\#(need),"needItems":\#(need > 0 ? 1 : 0),"needDeletes":0,"remoteState":"\#(remote)","#
                + #""sequence":7}"#)
    }

    static func deliver(_ rig: ServiceRig, _ batch: [String]) { rig.answer("[" + batch.joined(separator: ",") + "]") }

    @Test("120 files to a rate-limited connected peer over 60 s: one wake-up, one push")
    func trickle() {
        let (rig, t) = Self.rig()
        var e = Events()
        Self.deliver(rig, [e.local("notes"), e.local("notes")])
        for step in 0..<30 {
            rig.advance(seconds: 2)
            Self.deliver(rig, [e.completion("notes", need: 120 - 4 * step)])
        }
        rig.advance(seconds: 2)
        Self.deliver(rig, [e.completion("notes", need: 0)])
        rig.advance(seconds: 120)
        #expect(t.triggers == ["2"])
        #expect(t.pushes == ["2"])
    }

    @Test("a change in a folder shared with no one, repeated for an hour: no wake-up at all")
    func unsharedFolder() {
        let (rig, t) = Self.rig()
        var e = Events()
        for _ in 0..<360 {
            Self.deliver(rig, [e.local("solo")])
            rig.advance(seconds: 10)
        }
        #expect(t.logged(.eventsReceived).count == 360)
        #expect(t.triggers.isEmpty)
    }

    @Test("a folder the phone has not accepted (notSharing): its changes and its need never wake")
    func notAccepted() {
        let (rig, t) = Self.rig(sweep: .seconds(60))
        // Every sweep hears the same from Syncthing about that folder.
        rig.script(
            .completion(folder: "notes"), Array(repeating: Self.completion(need: 40, remote: "notSharing"), count: 20))
        var e = Events()
        Self.deliver(rig, [e.completion("notes", need: 40, remote: "notSharing")])
        for _ in 0..<30 {
            Self.deliver(rig, [e.local("notes")])
            rig.advance(seconds: 20)
        }
        #expect(t.logged(.eventsReceived).count == 31)
        // The start-up's read, and each sweep's.
        #expect(t.reads.filter { $0.hasSuffix(" connections") } == (0...10).map { "\(60 * $0) connections" })
        #expect(t.triggers.isEmpty)
    }

    @Test("an offline phone that needs data is woken on every sweep; once connected, the sweep leaves it alone")
    func sweepOfflineThenConnected() {
        let (rig, t) = Self.rig(sweep: .seconds(60))
        // The phone needs 9 bytes of vault (notes is in sync); offline for three sweeps, then connected.
        rig.script(.completion(folder: "vault"), Array(repeating: Self.completion(need: 9), count: 10))
        rig.syncthing.state.withLock { $0.phoneConnected = false }
        rig.advance(seconds: 3 * 60 + 30)
        rig.syncthing.state.withLock { $0.phoneConnected = true }
        rig.advance(seconds: 3 * 60)
        #expect(
            t.log(.triggerDelivered) == [
                #"62 level=info msg="wake-up delivered" status=202 reason=stale-peer"#,
                #"122 level=info msg="wake-up delivered" status=202 reason=stale-peer"#,
                #"182 level=info msg="wake-up delivered" status=202 reason=stale-peer"#,
            ])
        // Each sweep's wake-up goes out after the 2 s debounce.
        #expect(t.triggers == ["62", "122", "182"])
        #expect(t.pushes == ["62", "122", "182"])
    }

    @Test("a decline outlives a pause here: after the resume, changes in a folder the phone declined wake no one")
    func declineKeptWhilePausedHere() {
        // Found by the simulator: pausing the folder here made the tracker forget the phone's decline, so changes
        // after the resume woke the phone for a folder it does not take.
        let (rig, t) = Self.rig()
        var e = Events()
        // The phone has not accepted notes.
        Self.deliver(rig, [e.completion("notes", need: 40, remote: "notSharing")])
        // Both folders are paused here; meanwhile the phone pauses vault on its side.
        rig.syncthing.state.withLock { $0.folders = Self.folderList(paused: ["vault", "notes"]) }
        Self.deliver(rig, [e.configSaved()])
        rig.advance(seconds: 10)
        Self.deliver(rig, [e.completion("vault", need: 0, remote: "paused")])
        rig.advance(seconds: 10)
        // Both are resumed here.
        rig.syncthing.state.withLock { $0.folders = Self.folders }
        Self.deliver(rig, [e.configSaved()])
        rig.advance(seconds: 10)
        Self.deliver(rig, [e.local("notes")])
        rig.advance(seconds: 60)
        #expect(t.triggers.isEmpty, "notes: declined before the pause")
        Self.deliver(rig, [e.local("vault")])
        rig.advance(seconds: 60)
        #expect(t.triggers.isEmpty, "vault: declined during the pause")
        #expect(t.logged(.eventsReceived).count == 6)
    }

    @Test("a slow completion answer that lands after a newer FolderCompletion keeps what the event said")
    func slowAnswerAfterANewerEvent() {
        // Found by the simulator: the sweep's older "needs data" turned the event's "in sync" back, so the phone's
        // next need was not news.
        let (rig, t) = Self.rig(sweep: .seconds(60))
        // The sweep at 60 s asks while the phone needs vault data; the answer lands at 70 s.
        var slow = Self.completion(need: 40)
        slow.takes = .seconds(10)
        rig.script(.completion(folder: "vault"), [slow])
        var e = Events()
        rig.advance(to: 65)
        Self.deliver(rig, [e.completion("vault", need: 0)])  // the phone caught up
        rig.advance(to: 75)
        #expect(t.logged(.sweepFinished).count == 1)
        // A new need (another device's change reached this server): an edge, news.
        Self.deliver(rig, [e.completion("vault", need: 9)])
        rig.advance(seconds: 30)
        #expect(t.triggers == ["77"])
        #expect(t.log(.triggerDelivered) == [#"77 level=info msg="wake-up delivered" status=202 reason=change"#])
    }

    @Test("after lost events and a failed config read, a change in a folder shared meanwhile is news")
    func configStaleAfterLostEvents() {
        // Found by the simulator: the lost events held the ConfigSaved that shared solo with the phone, the config
        // read after the re-sync failed, and the old config was taken as current: the change in solo woke no one.
        let (rig, t) = Self.rig()
        rig.syncthing.state.withLock { $0.folders = Self.folderList(soloShared: true) }
        rig.script(.folders, [.failure(.connect)])
        rig.gap(after: 0)
        var e = Events(id: 2)
        rig.advance(to: 40)
        Self.deliver(rig, [e.local("solo")])
        rig.advance(seconds: 30)
        // The re-sync wakes at 2 s; the change at 40 s goes out after its debounce.
        #expect(t.triggers == ["2", "42"])
        #expect(
            t.log(.triggerDelivered) == [
                #"2 level=info msg="wake-up delivered" status=202 reason=resync"#,
                #"42 level=info msg="wake-up delivered" status=202 reason=change"#,
            ])
    }

    /// The sweep at 60 s finds the phone connected and needing `folder` data (its side accepted): no stale-peer
    /// wake-up, it is syncing.
    static func sweepFindsThePhoneSyncing(_ rig: ServiceRig, _ t: Timeline, _ folder: String) {
        rig.script(.completion(folder: folder), [Self.completion(need: 40)])
        rig.advance(to: 61)
        #expect(t.logged(.sweepFinished).map(\.fields) == [[LogField(.needing, .int(0))]])
    }

    @Test("a sweep that finds a connected phone needing data before the event that tells of it keeps that event news")
    func sweepAnswerAheadOfItsEvent() {
        // Found by the simulator: the answer set the pair to needing data silently, so the FolderCompletion that told
        // of the need (sent before the sweep read, its long-poll answer landing after it) was no edge.
        let (rig, t) = Self.rig(sweep: .seconds(60))
        var e = Events()
        Self.deliver(rig, [e.completion("vault", need: 0)])
        Self.sweepFindsThePhoneSyncing(rig, t, "vault")
        Self.deliver(rig, [e.completion("vault", need: 40)])  // what the sweep found, told: news
        rig.advance(to: 65)
        Self.deliver(rig, [e.completion("vault", need: 20)])  // the download's progress: not news
        rig.advance(to: 100)
        #expect(t.triggers == ["63"])
        #expect(t.log(.triggerDelivered) == [#"63 level=info msg="wake-up delivered" status=202 reason=change"#])
    }

    /// The phone declines notes; at 10 s events are lost (they may have held its acceptance) and the snapshot read
    /// after the re-sync fails (a malformed `/rest/system/connections` answer), so nothing says again what it does.
    /// Returns the events from the one past the gap on.
    static func declineThenLostEvents(_ rig: ServiceRig) -> Events {
        var e = Events()
        Self.deliver(rig, [e.completion("notes", need: 40, remote: "notSharing")])
        rig.advance(to: 10)
        rig.script(.connections, [.body("{")])
        rig.gap(after: e.id)
        return Events(id: e.id + 2)
    }

    @Test("after lost events and a failed snapshot read, a change in a folder the phone had declined is news")
    func declineUnconfirmedAfterLostEvents() {
        // Found by the simulator: the phone's acceptance was among the lost events, the decline was kept as certain,
        // and the change in notes woke no one until the next sweep.
        let (rig, t) = Self.rig()
        var e = Self.declineThenLostEvents(rig)
        rig.advance(to: 40)
        Self.deliver(rig, [e.local("notes")])
        rig.advance(seconds: 30)
        #expect(t.logged(.syncthingAnswerMalformed).count == 1)
        // The re-sync wakes at 12 s; the change at 40 s goes out after its debounce.
        #expect(t.triggers == ["12", "42"])
        #expect(
            t.log(.triggerDelivered) == [
                #"12 level=info msg="wake-up delivered" status=202 reason=resync"#,
                #"42 level=info msg="wake-up delivered" status=202 reason=change"#,
            ])
    }

    /// The deliveries when events are lost at 10 s and both changes after it (at 40 and 80 s) are news.
    static let resyncThenTwoChanges = [
        #"12 level=info msg="wake-up delivered" status=202 reason=resync"#,
        #"42 level=info msg="wake-up delivered" status=202 reason=change"#,
        #"82 level=info msg="wake-up delivered" status=202 reason=change"#,
    ]

    @Test("an acceptance with a need wakes, even after the unconfirmed pair was marked as needing data")
    func acceptanceAfterAnUnconfirmedNeed() {
        // While the decline is unconfirmed, a report that cannot tell the phone's side (remoteState unknown: it is
        // not connected) marks the pair as needing data, maybe wrongly. The acceptance that follows with a need is
        // still an edge: until it came the phone may not have taken the folder at all.
        let (rig, t) = Self.rig()
        var e = Self.declineThenLostEvents(rig)
        rig.advance(to: 40)
        Self.deliver(rig, [e.completion("notes", need: 40, remote: "unknown")])
        rig.advance(to: 80)
        Self.deliver(rig, [e.completion("notes", need: 40)])  // accepted
        rig.advance(seconds: 30)
        #expect(t.logged(.syncthingAnswerMalformed).count == 1)
        #expect(t.triggers == ["12", "42", "82"])
        #expect(t.log(.triggerDelivered) == Self.resyncThenTwoChanges)
    }

    @Test("after lost events and a failed snapshot read, a phone that resumes a folder with a need is news")
    func resumeAfterAnUnseenPause() {
        // Found by the simulator: the phone's pause of notes was among the lost events and the snapshot read failed;
        // a change in notes (news, it wakes) marked the pair as needing data, so the phone's resume with a need
        // woke no one.
        let (rig, t) = Self.rig()
        var e = Events()
        Self.deliver(rig, [e.completion("notes", need: 0)])
        rig.advance(to: 10)
        rig.script(.connections, [.body("{")])
        rig.gap(after: e.id)
        e = Events(id: e.id + 2)
        rig.advance(to: 40)
        Self.deliver(rig, [e.local("notes")])
        rig.advance(to: 80)
        // Resumed.
        Self.deliver(rig, e.acceptance("notes", need: 40))
        rig.advance(seconds: 30)
        #expect(t.logged(.syncthingAnswerMalformed).count == 1)
        #expect(t.triggers == ["12", "42", "82"])
        #expect(t.log(.triggerDelivered) == Self.resyncThenTwoChanges)
    }

    @Test("a failed snapshot read at start leaves the phone's side unknown: its acceptance with a need is news")
    func acceptanceAfterAFailedFirstRead() {
        // Found by the simulator: the phone had not accepted notes, the start-up's read of the pairs failed, a change
        // in notes (news, it wakes) marked the pair as needing data, and the phone's acceptance with a need woke no
        // one.
        let (rig, t) = Self.rig { $0.script(.connections, [.body("{")]) }
        var e = Events()
        rig.advance(to: 40)
        Self.deliver(rig, [e.local("notes")])
        rig.advance(to: 80)
        // Accepted.
        Self.deliver(rig, e.acceptance("notes", need: 40))
        rig.advance(seconds: 30)
        #expect(t.logged(.syncthingAnswerMalformed).count == 1)
        #expect(t.triggers == ["42", "82"])
        #expect(
            t.log(.triggerDelivered) == [
                #"42 level=info msg="wake-up delivered" status=202 reason=change"#,
                #"82 level=info msg="wake-up delivered" status=202 reason=change"#,
            ])
    }

    @Test("a folder newly shared with the phone: its acceptance with a need is news, though a change came first")
    func acceptanceOfANewShare() {
        // Until a read or an event tells what the phone does with the offer, a change in solo wakes (it may have
        // accepted), but does not mark the phone as needing data: its acceptance with a need must still wake.
        let (rig, t) = Self.rig()
        var e = Events()
        rig.syncthing.state.withLock { $0.folders = Self.folderList(soloShared: true) }
        Self.deliver(rig, [e.configSaved()])
        rig.advance(to: 10)
        Self.deliver(rig, [e.local("solo")])
        rig.advance(to: 50)
        // Accepted.
        Self.deliver(rig, e.acceptance("solo", need: 40))
        rig.advance(seconds: 30)
        #expect(t.triggers == ["12", "52"])
        #expect(
            t.log(.triggerDelivered) == [
                #"12 level=info msg="wake-up delivered" status=202 reason=change"#,
                #"52 level=info msg="wake-up delivered" status=202 reason=change"#,
            ])
    }

    @Test("a sweep that finds the phone's acceptance with a need before the events that tell of it keeps them news")
    func sweepAnswerAheadOfAnAcceptance() {
        // Found by the simulator: the answer lifted the decline and set the pair to needing data silently, so the
        // acceptance's FolderCompletion (its long-poll answer landing after the sweep read) was no edge.
        let (rig, t) = Self.rig(sweep: .seconds(60))
        var e = Events()
        Self.deliver(rig, [e.completion("notes", need: 40, remote: "notSharing")])
        Self.sweepFindsThePhoneSyncing(rig, t, "notes")
        // The acceptance, told: news.
        Self.deliver(rig, e.acceptance("notes", need: 40))
        rig.advance(to: 65)
        Self.deliver(rig, [e.completion("notes", need: 20)])  // the download's progress: not news
        rig.advance(to: 100)
        #expect(t.triggers == ["63"])
        #expect(t.log(.triggerDelivered) == [#"63 level=info msg="wake-up delivered" status=202 reason=change"#])
    }
}
