import Foundation
import Testing

@testable import NotifyCore

/// The HEALTHCHECK timeout the image sets (packaging/docker/Dockerfile), as Docker reads `--timeout=<n>s`.
private func dockerHealthcheckTimeout() throws -> Duration {
    let dockerfile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("packaging/docker/Dockerfile")
    let text = try String(contentsOf: dockerfile, encoding: .utf8)
    let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("HEALTHCHECK ") })
    let option = try #require(line.split(separator: " ").first { $0.hasPrefix("--timeout=") })
    let value = option.dropFirst("--timeout=".count)
    #expect(value.hasSuffix("s") && !value.hasSuffix("ms"), "\(option)")
    return .seconds(try #require(Int64(value.dropLast())))
}

@Suite("The healthcheck's time limits agree with Docker's and the service's")
struct HealthcheckTimeoutsTests {
    @Test("the check, and --status's two questions bounded like it, end before Docker's HEALTHCHECK timeout")
    func withinDockersTimeout() throws {
        // Twice the budget: --status asks two bounded questions; for the check, the process's start and exit.
        #expect(HealthcheckTimeouts.budget * 2 < (try dockerHealthcheckTimeout()))
    }

    @Test("one status request, to one address, fits inside the whole check")
    func requestInsideBudget() {
        #expect(HealthcheckTimeouts.request < HealthcheckTimeouts.budget)
    }

    @Test("the whole check asks Syncthing for less patience than one of the service's own requests")
    func shorterThanTheService() {
        #expect(HealthcheckTimeouts.request < SyncthingTimeouts.request)
        #expect(HealthcheckTimeouts.budget < SyncthingTimeouts.request)
    }
}

@Suite("Response body limits")
struct ResponseBodyLimitsTests {
    @Test("the event poll's limit holds the lists', which hold any other Syncthing answer's; the relay's is smallest")
    func ordered() {
        #expect(ResponseBodyLimits.relay < ResponseBodyLimits.syncthing)
        #expect(ResponseBodyLimits.syncthing < ResponseBodyLimits.syncthingLists)
        #expect(ResponseBodyLimits.syncthingLists < ResponseBodyLimits.syncthingEvents)
    }

    @Test("every answer recorded from Syncthing 1.19.2, 1.29.5 and 2.1.3 fits its limit ten times over")
    func recordedAnswersFit() throws {
        for version in ["1.19.2", "1.29.5", "2.1.3"] {
            let folder = try #require(
                Bundle.module.url(forResource: "Fixtures/syncthing-\(version)", withExtension: nil))
            let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
                $0.hasSuffix(".json")
            }
            #expect(!names.isEmpty)
            for name in names {
                let size = try fixture(name, version: version).count
                let isList = ["config-devices", "config-folders", "connections"].contains { name.contains($0) }
                let isStatus = ["status", "version", "completion"].contains { name.contains($0) }
                let limit =
                    isList
                    ? ResponseBodyLimits.syncthingLists
                    : isStatus ? ResponseBodyLimits.syncthing : ResponseBodyLimits.syncthingEvents
                #expect(size * 10 <= limit, "\(version)/\(name): \(size) bytes")
            }
        }
    }

    @Test("the relay's largest healthy answer, with the longest version shown, fits its limit")
    func relayAnswerFits() {
        let version = String(repeating: "9", count: ServerVersion.maxBytes)
        let body = #"{"status":"ok","version":"\#(version)"}"#
        #expect(body.utf8.count * 100 <= ResponseBodyLimits.relay)
        #expect(
            RelayHealthAnswer.classify(status: 200, body: Array(body.utf8)) == RelayHealthAnswer(.ok, version: version))
    }
}
