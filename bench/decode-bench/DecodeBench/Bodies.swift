/// Event bodies shaped like Syncthing's `/rest/events` answers (docs/syncthing-api.md: pretty-printed with a
/// 2-space indent, the envelope `id, globalID, time, type, data`, data keys in Go's sorted order; the shapes of the
/// fixtures under Tests/NotifyCoreTests/Fixtures).
enum JSON {
    case string(String)
    case number(String)
    case array([JSON])
    case object([(String, JSON)])

    /// Go's `json.MarshalIndent(v, "", "  ")`, which is how Syncthing writes its answers.
    func pretty(_ indent: String = "") -> String {
        switch self {
        case .string(let s): return "\"" + s + "\""
        case .number(let n): return n
        case .array(let items):
            if items.isEmpty { return "[]" }
            let inner = indent + "  "
            return "[\n" + items.map { inner + $0.pretty(inner) }.joined(separator: ",\n") + "\n" + indent + "]"
        case .object(let fields):
            if fields.isEmpty { return "{}" }
            let inner = indent + "  "
            let lines = fields.map { inner + "\"" + $0.0 + "\": " + $0.1.pretty(inner) }
            return "{\n" + lines.joined(separator: ",\n") + "\n" + indent + "}"
        }
    }
}

enum Bodies {
    static let peer = "3QS6B4R-BPY5SWQ-47G2S54-F46T34Y-3Z3C33C-FPJLDKZ-CWKDRFD-G4XJAAD"

    static func int(_ n: Int) -> JSON { .number(String(n)) }

    /// A file name as a vault holds them: a few directories deep, about 45 bytes.
    static func fileName(_ i: Int) -> String {
        "Projects/2026/area-\(i % 23)/meeting-notes-\(i)-draft.md"
    }

    static func localIndexUpdated(names: Int, first: Int = 0) -> JSON {
        .object([
            ("filenames", .array((first..<first + names).map { .string(fileName($0)) })),
            ("folder", .string("vault")), ("items", int(names)), ("sequence", int(1400 + first)),
            ("version", int(1400 + first)),
        ])
    }

    static func folderCompletion(need: Int) -> JSON {
        .object([
            ("completion", need == 0 ? int(100) : .number("97.14285714285714")), ("device", .string(peer)),
            ("folder", .string("vault")), ("globalBytes", int(48_213)), ("globalItems", int(14)),
            ("needBytes", int(need * 1377)), ("needDeletes", int(0)), ("needItems", int(need)),
            ("remoteState", .string("valid")), ("sequence", int(14)),
        ])
    }

    static func stateChanged(from: String, to: String) -> JSON {
        .object([
            ("duration", .number("0.020327602")), ("folder", .string("vault")), ("from", .string(from)),
            ("to", .string(to)),
        ])
    }

    static let remoteIndexUpdated = JSON.object([
        ("device", .string(peer)), ("folder", .string("vault")), ("items", int(1)), ("sequence", int(14)),
        ("version", int(14)),
    ])

    static let deviceConnected = JSON.object([
        ("addr", .string("127.0.0.1:22000")), ("clientName", .string("syncthing")),
        ("clientVersion", .string("v1.19.2")), ("deviceName", .string("phone")), ("id", .string(peer)),
        ("type", .string("tcp-server")),
    ])

    /// A whole answer: the events get ids 1, 2, … in order.
    static func answer(_ events: [(String, JSON)]) -> [UInt8] {
        let items = events.enumerated().map { i, event in
            JSON.object([
                ("id", int(i + 1)), ("globalID", int(i + 101)),
                ("time", .string("2026-12-02T13:30:06.0\(20_295_253 + i)Z")), ("type", .string(event.0)),
                ("data", event.1),
            ])
        }
        return Array(JSON.array(items).pretty().utf8)
    }
}

/// One benchmark case: an answer and what it holds.
struct Case {
    var name: String
    var summary: String
    var body: [UInt8]
    var events: Int
    /// File names in the answer (all of them skipped by the decoder).
    var names: Int

    init(_ name: String, _ summary: String, _ events: [(String, JSON)], names: Int) {
        self.name = name
        self.summary = summary
        body = Bodies.answer(events)
        self.events = events.count
        self.names = names
    }

    static var all: [Case] {
        let liu1 = ("LocalIndexUpdated", Bodies.localIndexUpdated(names: 1))
        let mib4 = 4 << 20
        // The 4 MiB answer: LocalIndexUpdated events of 1000 names (Syncthing's batch cap), about 4 MiB in all.
        let one = Bodies.answer([("LocalIndexUpdated", Bodies.localIndexUpdated(names: 1000))]).count
        let big = (0..<(mib4 + one - 1) / one).map {
            ("LocalIndexUpdated", Bodies.localIndexUpdated(names: 1000, first: $0 * 1000))
        }
        return [
            Case("lone", "1 LocalIndexUpdated, 1 file name", [liu1], names: 1),
            Case(
                "small", "4 subscribed events: LocalIndexUpdated (1 name), FolderCompletion, x2",
                [
                    liu1, ("FolderCompletion", Bodies.folderCompletion(need: 1)), liu1,
                    ("FolderCompletion", Bodies.folderCompletion(need: 0)),
                ], names: 2),
            Case(
                "mixed", "6 events of the default mask: StateChanged, LIU (1 name), RemoteIndexUpdated, …",
                [
                    ("StateChanged", Bodies.stateChanged(from: "idle", to: "scanning")), liu1,
                    ("StateChanged", Bodies.stateChanged(from: "scanning", to: "idle")),
                    ("RemoteIndexUpdated", Bodies.remoteIndexUpdated),
                    ("FolderCompletion", Bodies.folderCompletion(need: 0)),
                    ("DeviceConnected", Bodies.deviceConnected),
                ], names: 1),
            Case(
                "names200", "3 LocalIndexUpdated, 200 file names each",
                (0..<3).map { ("LocalIndexUpdated", Bodies.localIndexUpdated(names: 200, first: $0 * 200)) },
                names: 600),
            Case(
                "names1000", "3 LocalIndexUpdated, 1000 file names each",
                (0..<3).map { ("LocalIndexUpdated", Bodies.localIndexUpdated(names: 1000, first: $0 * 1000)) },
                names: 3000),
            Case(
                "4mib", "one 4 MiB answer: \(big.count) LocalIndexUpdated of 1000 names", big, names: big.count * 1000),
        ]
    }
}
