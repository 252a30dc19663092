import Foundation
import Testing

@testable import NotifyCore

/// Reads a recorded Syncthing response: 1.19.2 (the measurements behind docs/syncthing-api.md), or another `version`
/// (1.29.5 and 2.1.3: recorded by Tests/Lab/stversions.py, see docs/syncthing-versions.md).
func fixture(_ name: String, version: String = "1.19.2") throws -> [UInt8] {
    let url = try #require(
        Bundle.module.url(forResource: "Fixtures/syncthing-\(version)/\(name)", withExtension: nil))
    return try [UInt8](Data(contentsOf: url))
}

/// Decodes a stversions run's `/rest/system/status`, `/rest/config/devices` and `/rest/config/folders` and checks what
/// every release's lab gives: two devices (this one among them), the folders `vault` and `notes` shared by both, so
/// two shared pairs. Returns the status, whose `myID` the caller's further checks need.
func checkLabConfigAnswers(version: String) throws -> SystemStatus {
    let status = try #require(decodeJSON(SystemStatus.self, from: fixture("system-status.json", version: version)))
    let devices = try #require(
        decodeJSON([ConfiguredDevice].self, from: fixture("config-devices.json", version: version)))
    let folders = try #require(
        decodeJSON([ConfiguredFolder].self, from: fixture("config-folders.json", version: version)))
    #expect(devices.count == 2 && devices.contains { $0.deviceID == status.myID })
    #expect(Set(folders.map(\.id)) == ["vault", "notes"])
    #expect(folders.allSatisfy { Set($0.deviceIDs) == Set(devices.map(\.deviceID)) })
    let rules = WakeRules(watchedFolders: [])
    #expect(SharedPairs.of(myID: status.myID, devices: devices, folders: folders, rules: rules).count == 2)
    return status
}
