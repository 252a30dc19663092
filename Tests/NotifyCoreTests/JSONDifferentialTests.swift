import Foundation
import JSONOracle
import NotifyCore
import Testing

/// `JSONReader` against Foundation's `JSONDecoder` (`Oracle`: the models' Decodable implementations as they were):
/// every recorded answer, every fuzz seed and a table of edge cases read to the same models, and every recorded answer
/// cut short is rejected.
@Suite struct JSONDifferentialTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Every file under `directory` (relative to the repository) whose name passes `include`.
    static func files(_ directory: String, _ include: (String) -> Bool = { _ in true }) throws -> [(String, [UInt8])] {
        let base = root.appendingPathComponent(directory)
        guard let walk = FileManager.default.enumerator(atPath: base.path) else { return [] }
        return try walk.compactMap { $0 as? String }.filter(include).sorted().compactMap { name in
            var isDirectory: ObjCBool = false
            let url = base.appendingPathComponent(name)
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue
            else { return nil }
            return (directory + "/" + name, [UInt8](try Data(contentsOf: url)))
        }
    }

    /// The recorded Syncthing answers and the other JSON fixtures of the tests.
    static func fixtures() throws -> [(String, [UInt8])] {
        try files("Tests/NotifyCoreTests/Fixtures") { $0.hasSuffix(".json") }
            + files("Tests/NotifyRuntimeTests/Fixtures") { $0.hasSuffix(".json") }
    }

    /// The one recorded answer that is not JSON: the plain-text body of a 404.
    static let plainText = "e15-completion-paused-folder.json"

    @Test("every JSON fixture reads the same as with JSONDecoder, and the Syncthing answers are strict JSON")
    func fixturesAgree() throws {
        let fixtures = try Self.fixtures()
        #expect(fixtures.count >= 40)
        for (name, body) in fixtures {
            #expect(Oracle.disagreements(body) == [], "\(name)")
            #expect(JSONReader.isValid(body) == !name.hasSuffix(Self.plainText), "\(name)")
        }
        // Not vacuous: the event answers decode to events.
        let events = fixtures.filter { $0.0.contains("events") }.compactMap { try? SyncthingEvent.decodeArray($0.1) }
        #expect(events.filter { !$0.isEmpty }.count >= 5)
    }

    @Test("every seed of the events, json and relay fuzz corpora reads the same as with JSONDecoder")
    func seedsAgree() throws {
        var bodies = try Self.files("fuzz/corpus/events") + Self.files("fuzz/corpus/json")
        // A relay seed is `<status> <now>\n<Retry-After>\n<body>` (fuzz/README.md).
        for (name, seed) in try Self.files("fuzz/corpus/relay") {
            let lines = seed.split(separator: 0x0A, maxSplits: 2, omittingEmptySubsequences: false)
            if lines.count == 3 { bodies.append((name, Array(lines[2]))) }
        }
        #expect(bodies.count >= 50)
        for (name, body) in bodies {
            #expect(Oracle.disagreements(body) == [], "\(name)")
        }
    }

    /// Bodies where the models' reading rules matter: repeated keys, mistyped fields, numbers, escapes, Unicode.
    static let edgeCases: [String] = [
        #"[{"id":1,"type":"T"}]"#, #"[{"id":1,"id":2,"type":"T"}]"#, #"[{"id":1,"id":"x","type":"T"}]"#,
        #"[{"id":"x","id":1,"type":"T"}]"#, #"[{"i\u0064":3,"type":"T"}]"#, #"[{"id":1.0,"type":"T"}]"#,
        #"[{"id":1e2,"type":"T"}]"#, #"[{"id":-0,"type":"T"}]"#, #"[{"id":0,"type":"T"}]"#,
        #"[{"id":9007199254740992,"type":"T"}]"#, #"[{"id":9007199254740993,"type":"T"}]"#,
        #"[{"id":9223372036854775808,"type":"T"}]"#, #"[{"id":null,"type":"T"}]"#, #"[{"type":"T"}]"#,
        #"[{"id":1,"type":null}]"#, #"[{"id":1,"type":"\ud800"}]"#, #"[{"id":1,"type":"T\u00e9"}]"#,
        #"[{"id":1,"type":"T","data":null}]"#, #"[{"id":1,"type":"T","data":[1]}]"#,
        #"[{"id":1,"type":"T","data":"x"}]"#,
        #"[{"id":1,"type":"T","data":{"folder":"f","device":"D","needItems":0,"needBytes":5,"needDeletes":-1}}]"#,
        #"[{"id":1,"type":"T","data":{"folder":1,"device":null,"needItems":"3","needBytes":true}}]"#,
        #"[{"id":1,"type":"T","data":{"needItems":1.5,"needBytes":-0.5,"needDeletes":1e400}}]"#,
        #"[{"id":1,"type":"T","data":{"needItems":1e30,"needBytes":-1e30,"needDeletes":9223372036854775808}}]"#,
        #"[{"id":1,"type":"T","data":{"needItems":1e-400,"needBytes":0.0,"needDeletes":-0}}]"#,
        #"[{"id":1,"type":"T","data":{"remoteState":"valid","sequence":7}}]"#,
        #"[{"id":1,"type":"T","data":{"remoteState":"bogus","sequence":7.0}}]"#,
        #"[{"id":1,"type":"T","data":{"remoteState":3,"sequence":"7"}}]"#,
        #"[{"id":1,"type":"T","data":{"folder":"a","folder":"b"}}]"#,
        #"[{"id":1,"type":"T","data":{"folder":"a","\ud800":1}}]"#,
        #"[{"id":1,"type":"T","data":{"folder":"\ud800","device":"d"}}]"#,
        #"[{"id":1,"type":"T","data":{"folder":"a"},"data":{"folder":"b"}}]"#,
        #"[{"id":1,"type":"T","\ud800":1}]"#, #"[{"id":1,"type":"T","x":{"\ud800":"\udc00"}}]"#,
        #"[{"id":1,"type":"T","data":{"filenames":["a","b\"c","\u00e9"],"items":[{"x":[]}]}}]"#,
        #"[]"#, #"{}"#, #"[1]"#, #"[null]"#, #"[[]]"#, "\u{FEFF}[]", "[\n]\n",
        #"{"needItems":0,"needBytes":0,"needDeletes":0}"#, #"{"needItems":1.0,"needBytes":0,"needDeletes":0}"#,
        #"{"needItems":0.5,"needBytes":0,"needDeletes":0}"#, #"{"needItems":null,"needBytes":0,"needDeletes":0}"#,
        #"{"needItems":9007199254740993.5,"needBytes":90071992547409930.5,"needDeletes":0}"#,
        #"{"needItems":0,"needBytes":0}"#,
        #"{"needItems":0,"needBytes":0,"needDeletes":0,"remoteState":"notSharing","sequence":-5}"#,
        #"{"needItems":0,"needBytes":0,"needDeletes":0,"remoteState":null,"sequence":1.5}"#,
        #"{"myID":"A","startTime":"t"}"#, #"{"myID":"A","startTime":"t","guiAddressOverridden":true}"#,
        #"{"myID":"A","startTime":"t","guiAddressOverridden":null}"#,
        #"{"myID":"A","startTime":"t","guiAddressOverridden":1}"#, #"{"myID":"A"}"#, #"{"myID":5,"startTime":"t"}"#,
        #"[{"deviceID":"A"},{"deviceID":"B","paused":true},{"deviceID":"C","paused":"yes"}]"#,
        #"[{"deviceID":"A","paused":null}]"#, #"[{"paused":true}]"#, #"[{"deviceID":null}]"#,
        #"[{"id":"f","devices":[{"deviceID":"A"},{"deviceID":"B"}]}]"#,
        #"[{"id":"f","paused":true,"devices":[{"deviceID":"A"},{"x":1}]}]"#,
        #"[{"id":"f","devices":[{"deviceID":"A"},5]}]"#, #"[{"id":"f","devices":{"deviceID":"A"}}]"#,
        #"[{"id":"f","devices":null}]"#, #"[{"id":"f","devices":[{"deviceID":"A","\ud800":1}]}]"#,
        #"[{"id":"f","devices":[{"deviceID":"\ud800"}]}]"#, #"[{"id":"f","devices":[]}]"#,
        #"{"connections":{"A":{"connected":true,"paused":false},"B":{"connected":"no"}},"total":{}}"#,
        #"{"connections":{"A":{"connected":true},"A":5}}"#, #"{"connections":{"A":5}}"#,
        #"{"connections":{"\u00e9":{"connected":true},"e\u0301":{"connected":false}}}"#,
        #"{"connections":{"\ud800":{}}}"#, #"{"connections":null}"#, #"{"connections":[]}"#, #"{"connections":{}}"#,
        #"{"status":"ok","version":"1.3.2"}"#, #"{"status":"ok","version":null}"#, #"{"status":"ok","version":3}"#,
        #"{"status":"ok"}"#, #"{"status":"ok","status":"down"}"#, #"{"version":"1"}"#,
        #"{"status":"ok","version":"a\u0000b"}"#,
    ]

    @Test("edge cases read the same as with JSONDecoder", arguments: edgeCases)
    func edgeCaseAgrees(body: String) {
        #expect(JSONReader.isValid(Array(body.utf8)), "not strict JSON: the comparison would be vacuous")
        #expect(Oracle.disagreements(Array(body.utf8)) == [])
    }

    @Test("integers of more than 38 digits read exactly, outside the differential (Decimal traps on some)")
    func longNumbers() {
        let zeros = String(repeating: "0", count: 130)
        let body = #"{"needItems":0."# + zeros + #"9007199254740993e146,"needBytes":0,"needDeletes":0}"#
        #expect(decodeJSON(Completion.self, from: Array(body.utf8))?.needItems == 9_007_199_254_740_993)
        #expect(Oracle.disagreements(Array(body.utf8)) == [])
        #expect(Oracle.disagreements(Array((body + ",").utf8)) == [])
    }

    @Test(
        "numbers of 20 digits or more with a fraction read exactly, outside the differential (JSONDecoder gives nil)",
        arguments: [
            (#"{"needItems":9223372036854775295.5,"needBytes":0,"needDeletes":0}"#, Int64(9_223_372_036_854_775_295)),
            (#"{"needItems":9000000000000000001.5,"needBytes":0,"needDeletes":0}"#, 9_000_000_000_000_000_001),
            (#"{"needItems":9007199254740993.0000001,"needBytes":0,"needDeletes":0}"#, 9_007_199_254_740_993),
        ])
    func longFractions(body: String, needItems: Int64) {
        #expect(decodeJSON(Completion.self, from: Array(body.utf8))?.needItems == needItems)
        #expect(Oracle.disagreements(Array(body.utf8)) == [])
    }

    @Test("what JSONDecoder accepts beyond RFC 8259 is rejected by every model")
    func lenientJSONRejected() {
        for body in [
            #"[{"id":1,"type":"T"},]"#, #"[{"id":1,"type":"T","x":"\q"}]"#, #"[{"id":1,"type":"T","x":01}]"#,
            "[{\"id\":1,\"type\":\"T\",\"x\":\"\u{01}\"}]", #"{"status":"ok",}"#,
        ] {
            #expect(Oracle.events(Array(body.utf8)) != nil || Oracle.health(Array(body.utf8)) != nil, "\(body)")
            #expect(Oracle.disagreements(Array(body.utf8)) == [], "\(body)")
            #expect(throws: EventDecodingError.malformed) { try SyncthingEvent.decodeArray(Array(body.utf8)) }
        }
    }

    /// Offsets to cut `count` bytes at: all of them up to 16 KiB; beyond, the first 4 KiB, the last 256 bytes and
    /// 256 spread over the rest (every offset of the 512 KB fixture would take minutes in a debug build).
    static func cuts(_ count: Int) -> [Int] {
        guard count > 16 << 10 else { return Array(0..<count) }
        let middle = stride(from: 4096, to: count - 256, by: (count - 4352) / 256)
        return Array(0..<4096) + Array(middle) + Array((count - 256)..<count)
    }

    @Test("every fixture cut before its end is rejected, by the reader and by decodeArray")
    func truncatedFixtures() throws {
        for (name, body) in try Self.fixtures() where !name.hasSuffix(Self.plainText) {
            let end = try #require(body.lastIndex { ![0x20, 0x0A, 0x0D, 0x09].contains($0) })
            for cut in Self.cuts(end + 1) {
                let prefix = Array(body[..<cut])
                #expect(!JSONReader.isValid(prefix), "\(name) cut at \(cut)")
                if name.contains("events") && body.count <= 16 << 10 {
                    #expect(throws: EventDecodingError.malformed, "\(name) cut at \(cut)") {
                        try SyncthingEvent.decodeArray(prefix)
                    }
                }
            }
        }
    }
}
