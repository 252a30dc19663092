import Testing

@testable import NotifyCore

@Suite("Event decoding, wake rules and the cursor")
struct EventCursorTests {
    static let rules = WakeRules(watchedFolders: [])

    /// Whether `event` alone is news to a tracker that has not read the config yet: the wake rule as the engine
    /// applies it to a batch.
    static func isNews(_ event: SyncthingEvent, _ rules: WakeRules = rules) -> Bool {
        var tracker = PeerTracker(rules: rules)
        return tracker.news(in: [event]) > 0
    }

    @Test("the filtered stream after a create wakes once: LocalIndexUpdated yes, FolderCompletion at 100 % no")
    func filteredCreate() throws {
        let events = try SyncthingEvent.decodeArray(fixture("a03-events-filtered-after-create.json"))
        #expect(events.map(\.id) == [1, 2])
        #expect(events.map(\.type) == ["LocalIndexUpdated", "FolderCompletion"])
        #expect(events.map { Self.isNews($0) } == [true, false])
        #expect(events[0].folder == "vault")
    }

    @Test("slow transfer: FolderCompletion with need > 0 wakes, at 100 % it does not")
    func bigFile() throws {
        let events = try SyncthingEvent.decodeArray(fixture("d16-bigfile-throttled.json"))
        let completions = events.filter { $0.type == "FolderCompletion" }
        #expect(completions.contains { Self.isNews($0) })
        #expect(completions.contains { !Self.isNews($0) })
        // Noise in the default stream never wakes.
        #expect(
            !events.filter { !["FolderCompletion", "LocalIndexUpdated"].contains($0.type) }.contains { Self.isNews($0) }
        )
    }

    @Test("WATCHED_FOLDERS limits both wake rules")
    func watched() throws {
        let events = try SyncthingEvent.decodeArray(fixture("d01-create-connected.json"))
        let onlyNotes = WakeRules(watchedFolders: ["notes"])
        let onlyVault = WakeRules(watchedFolders: ["vault"])
        #expect(!events.contains { Self.isNews($0, onlyNotes) })
        #expect(events.contains { Self.isNews($0, onlyVault) })
    }

    @Test(
        "every recorded response decodes",
        arguments: [
            "a01-events-default-since0-timeout0.json", "c02-inflight-longpoll-during-restart.json",
            "c04-events-since0-after-restart.json", "d04-pause-peer.json", "d07-create-while-paused.json",
            "i02-A-filtered-since0.json", "i05-A-filtered-longnames.json", "x01-B-events-with-TZ-Berlin.json",
            "i03-B-default-since-cursor.json",
        ])
    func decodesFixtures(name: String) throws {
        let events = try SyncthingEvent.decodeArray(fixture(name))
        #expect(!events.isEmpty)
    }

    @Test("5000 files in one poll: LocalIndexUpdated batches of 1000 each wake (they merge in the debounce)")
    func bigPoll() throws {
        let events = try SyncthingEvent.decodeArray(fixture("i02-A-filtered-since0.json"))
        #expect(events.filter { Self.isNews($0) }.count >= 5)
    }

    @Test(
        "malformed bodies are rejected, never half-used",
        arguments: [
            "", "[", "{}", "null", "[{\"id\":1}]", "[{\"id\":\"1\",\"type\":\"x\"}]", "[1,2]",
            "[{\"id\":1,\"type\":\"LocalIndexUpdated\",\"data\":{}}", "<html>", "[{\"id\":1.5,\"type\":\"x\"}]",
            "[{\"id\":0,\"type\":\"x\"}]", "[{\"id\":-3,\"type\":\"x\"}]",
            "[{\"id\":9223372036854775807,\"type\":\"x\"}]",
            "[{\"id\":9007199254740993,\"type\":\"x\"}]",
        ])
    func malformed(body: String) {
        #expect(throws: EventDecodingError.malformed) { try SyncthingEvent.decodeArray(Array(body.utf8)) }
    }

    @Test("a negative since returns placeholders with id 0; they are rejected, never consumed")
    func placeholders() throws {
        #expect(throws: EventDecodingError.malformed) {
            try SyncthingEvent.decodeArray(fixture("b10-events-since-negative.json"))
        }
    }

    @Test(
        "odd data shapes do not fail the poll; a change without a folder counts as watched, a need without a device is no news"
    )
    func oddData() throws {
        let body = """
            [{"id":1,"type":"LocalIndexUpdated","data":null},
             {"id":2,"type":"FolderCompletion","data":{"folder":7,"needBytes":"x","needItems":1e30}},
             {"id":3,"type":"FolderCompletion","data":[1,2]},
             {"id":4,"type":"LocalIndexUpdated","data":"str"}]
            """
        let events = try SyncthingEvent.decodeArray(Array(body.utf8))
        #expect(events.map(\.id) == [1, 2, 3, 4])
        let rules = WakeRules(watchedFolders: ["vault"])
        #expect(events.map { Self.isNews($0, rules) } == [true, false, false, true])
    }

    @Test("head start: begins at the latest id, so events from before the start never wake")
    func headStart() throws {
        let head = try SyncthingEvent.decodeArray(fixture("b03-events-filtered-since0-limit1.json"))
        var cursor = EventCursor(head: head.last?.id ?? 0, startTime: "T0")
        #expect(cursor.since == 2)
        let next = [SyncthingEvent(id: 3, type: "LocalIndexUpdated", folder: "vault")]
        #expect(cursor.consume(next, startTime: "T0") == .events(next))
        #expect(cursor.since == 3)
    }

    @Test("an empty subscription starts at 0")
    func emptyHead() {
        var cursor = EventCursor(head: 0, startTime: "T0")
        #expect(cursor.since == 0)
        #expect(cursor.consume([], startTime: "T0") == .idle)
        let first = [SyncthingEvent(id: 1, type: "LocalIndexUpdated")]
        #expect(cursor.consume(first, startTime: "T0") == .events(first))
    }

    @Test("a jump in ids (buffer overflow, 55 → 9103) is a gap; the cursor still advances")
    func gap() {
        var cursor = EventCursor(head: 55, startTime: "T0")
        let batch = [SyncthingEvent(id: 9103, type: "FolderCompletion"), SyncthingEvent(id: 9104, type: "x")]
        #expect(cursor.consume(batch, startTime: "T0") == .gap(batch))
        #expect(cursor.since == 9104)
    }

    @Test("a hole inside a batch is a gap")
    func innerHole() {
        var cursor = EventCursor(head: 1, startTime: "T0")
        let batch = [SyncthingEvent(id: 2, type: "x"), SyncthingEvent(id: 4, type: "x")]
        #expect(cursor.consume(batch, startTime: "T0") == .gap(batch))
    }

    @Test("startTime changed → restart, even when the ids look like progress (since=43 returns 44, 45)")
    func restartByStartTime() throws {
        let before = try #require(decodeJSON(SystemStatus.self, from: fixture("c01-status-before-restart.json")))
        let after = try #require(decodeJSON(SystemStatus.self, from: fixture("c03-status-after-restart.json")))
        var cursor = EventCursor(head: 43, startTime: before.startTime)
        let batch = [SyncthingEvent(id: 44, type: "LocalIndexUpdated")]
        #expect(cursor.consume(batch, startTime: after.startTime) == .restarted)
        #expect(cursor.consume([], startTime: after.startTime) == .restarted)
        cursor.reset(head: 5, startTime: after.startTime)
        #expect(cursor.since == 5)
        #expect(cursor.consume([], startTime: after.startTime) == .idle)
    }

    @Test("ids at or below the cursor → restart (same-second restart)")
    func restartByIDs() {
        var cursor = EventCursor(head: 43, startTime: "T0")
        #expect(cursor.consume([SyncthingEvent(id: 1, type: "Starting")], startTime: "T0") == .restarted)
        #expect(cursor.consume([SyncthingEvent(id: 43, type: "x")], startTime: "T0") == .restarted)
        #expect(cursor.since == 43)
    }

    @Test("completion: in sync only when all three needs are 0")
    func completion() throws {
        let paused = try #require(
            decodeJSON(Completion.self, from: fixture("d08-completion-B-vault-while-paused.json")))
        #expect(!paused.inSync)
        let done = try #require(decodeJSON(Completion.self, from: fixture("e02-completion-device-B-vault.json")))
        #expect(done.inSync)
        #expect(!Completion(needItems: 0, needBytes: 0, needDeletes: 1).inSync)
    }
}
