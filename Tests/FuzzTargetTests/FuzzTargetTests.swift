import Testing

@testable import FuzzTargets

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation  // Darwin: FoundationEssentials is not a module of its own there
#endif

/// The fuzz targets without libFuzzer: every seed in fuzz/corpus/ keeps its target's invariants (so a seed that a code
/// change breaks fails here, in the normal test run, not only in scripts/fuzz), and the invariants catch what they
/// are there to catch.
@Suite struct FuzzTargetTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("fuzz/corpus")

    static func seeds(_ target: FuzzTarget) throws -> [(name: String, bytes: [UInt8])] {
        let directory = corpus.appendingPathComponent(target.rawValue)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        return try names.map { ($0, [UInt8](try Data(contentsOf: directory.appendingPathComponent($0)))) }
    }

    @Test("every seed keeps its target's invariants", arguments: FuzzTarget.productTargets)
    func seedsKeepInvariants(target: FuzzTarget) throws {
        let seeds = try Self.seeds(target)
        #expect(seeds.count >= 10, "too few seeds for \(target.rawValue)")
        for seed in seeds {
            #expect(target.run(seed.bytes) == [], "\(target.rawValue)/\(seed.name)")
        }
    }

    @Test("the config.xml and events seeds are the test fixtures")
    func seededFromFixtures() throws {
        let config = try Self.seeds(.configXML).map(\.name)
        #expect(config.contains("config-standard-generated.xml") && config.contains("config-xxe.xml"))
        let events = try Self.seeds(.events).map(\.name)
        #expect(events.contains("syncthing-1.19.2-d01-create-connected.json"))
        #expect(events.contains("syncthing-1.29.5-events-FolderCompletion.json"))
        let json = try Self.seeds(.json).map(\.name)
        #expect(
            json.contains("syncthing-1.19.2-e24-system-connections.json")
                && json.contains("syncthing-1.29.5-noauth-health.json"))
    }

    @Test("the json target reports a model read differently from JSONDecoder, and a cut text that is accepted")
    func jsonTargetInvariants() {
        #expect(FuzzTarget.json.run(Array(#"[{"id":1,"type":"T","data":{"folder":"a"}}]"#.utf8)) == [])
        // JSONDecoder takes the trailing comma; the reader must then reject every model, and does.
        #expect(FuzzTarget.json.run(Array(#"[{"id":1,"type":"T"},]"#.utf8)) == [])
        // A text whose prefix is valid JSON is not a cut container (a number), so it is not checked for cuts.
        #expect(FuzzTarget.json.run(Array("12".utf8)) == [])
    }

    @Test("the self-test target breaks an invariant on CRASH only")
    func selfTest() {
        #expect(FuzzTarget.selfTestCrash.run(Array("CRASH".utf8)) == ["self-test: the input starts with CRASH"])
        #expect(FuzzTarget.selfTestCrash.run(Array("CRAS".utf8)) == [])
        #expect(!FuzzTarget.productTargets.contains(.selfTestCrash))
        #expect(!FuzzTarget.productTargets.contains(.selfTestLeak))
    }

    @Test("every target survives empty and hostile inputs", arguments: FuzzTarget.productTargets)
    func hostileInputs(target: FuzzTarget) {
        for input: [UInt8] in [[], [0], [0xFF, 0xFE], Array(repeating: 0x5B, count: 300), Array("\n\n\n=".utf8)] {
            #expect(target.run(input) == [], "\(target.rawValue) on \(input.prefix(8))")
        }
    }

    // MARK: The writers behind the round trips

    @Test("HTTP dates written in all three forms, against known instants")
    func httpDates() {
        let date = CivilTime(unixSeconds: 784_111_777)
        #expect(date.imfFixdate == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(date.rfc850 == "Sunday, 06-Nov-94 08:49:37 GMT")
        #expect(date.asctime == "Sun Nov  6 08:49:37 1994")
        #expect(CivilTime(unixSeconds: 0).imfFixdate == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(CivilTime(unixSeconds: -1).imfFixdate == "Wed, 31 Dec 1969 23:59:59 GMT")
        #expect(CivilTime(unixSeconds: 1_835_395_200).imfFixdate == "Tue, 29 Feb 2028 00:00:00 GMT")
        #expect(CivilTime(unixSeconds: 253_402_300_799).imfFixdate == "Fri, 31 Dec 9999 23:59:59 GMT")
        #expect(CivilTime(unixSeconds: 253_402_300_800).imfFixdate == nil)
        #expect(CivilTime(unixSeconds: 3_155_760_000).rfc850 == nil)  // 2070
    }

    @Test("XML and JSON escaping")
    func escaping() {
        #expect(xmlEscaped("a<b>&\"c\r\u{85}") == "a&lt;b&gt;&amp;&quot;c&#xd;&#x85;")
        #expect(jsonString("a\"\\\n\u{1}é") == "\"a\\\"\\\\\\u000a\\u0001é\"")
    }

    // MARK: Each invariant catches what it is there to catch

    @Test("the loopback oracle reads addresses with inet_pton")
    func loopbackOracleReadsAddresses() {
        for host in ["127.0.0.1", "127.9.9.9", "[::1]", "::1", "[0:0:0:0:0:0:0:1]", "::ffff:127.0.0.1", "LocalHost."] {
            #expect(loopbackOracle(host), "\(host)")
        }
        for host in ["[::+1]", "::+1", "0177.0.0.1", "127.1", "[::2]", "::ffff:10.0.0.1", "localhost.example", "["] {
            #expect(!loopbackOracle(host), "\(host)")
        }
    }

    @Test("a configuration renders back to an environment that parses the same")
    func configurationRoundTrip() {
        let input =
            "RELAY_URL=https://r.example/x/api/v1/api/v1/\nWATCHED_FOLDERS=b, a\nDEBOUNCE_SECONDS=0.25\n"
            + "METRICS_FILE=/var/lib/node_exporter/textfile/vaultsync-notify.prom\n"
        #expect(FuzzTarget.configuration.run(Array(input.utf8)) == [])
        // A folder ID that starts with a combining mark fuses with a comma; the raw list is kept for it.
        #expect(FuzzTarget.configuration.run(Array("RELAY_URL=https://r\nWATCHED_FOLDERS=\u{301}b".utf8)) == [])
    }
}
