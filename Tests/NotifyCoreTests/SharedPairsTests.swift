import Testing

@testable import NotifyCore

@Suite("Shared pairs: the one rule for which (device, folder) pairs share data")
struct SharedPairsTests {
    @Test("unpaused remote devices × unpaused watched folders they share; never the local device")
    func fromSyncthingsConfig() throws {
        let devices = try #require(decodeJSON([ConfiguredDevice].self, from: fixture("e21-config-devices.json")))
        let folders = try #require(decodeJSON([ConfiguredFolder].self, from: fixture("e25-config-folders.json")))
        let status = try #require(decodeJSON(SystemStatus.self, from: fixture("e27-system-status.json")))
        let all = SharedPairs.of(
            myID: status.myID, devices: devices, folders: folders, rules: WakeRules(watchedFolders: []))
        #expect(Set(all.map(\.folder)) == ["vault", "notes"])
        #expect(!all.contains { $0.device == status.myID })
        #expect(all.count == 2)
        let vault = SharedPairs.of(
            myID: status.myID, devices: devices, folders: folders, rules: WakeRules(watchedFolders: ["vault"]))
        #expect(vault.map(\.folder) == ["vault"])
        let paused = devices.map { ConfiguredDevice(deviceID: $0.deviceID, paused: true) }
        #expect(
            SharedPairs.of(myID: status.myID, devices: paused, folders: folders, rules: WakeRules(watchedFolders: []))
                .isEmpty)
    }

    static let me = "ME"
    static let devices = [
        ConfiguredDevice(deviceID: me, paused: false), ConfiguredDevice(deviceID: "PHONE", paused: false),
        ConfiguredDevice(deviceID: "LAPTOP", paused: true),
    ]

    /// (folder, watched folders, the devices it is shared with)
    static let cases: [(ConfiguredFolder, Set<String>, [String])] = [
        (ConfiguredFolder(id: "v", paused: false, deviceIDs: [me, "PHONE"]), [], ["PHONE"]),
        (ConfiguredFolder(id: "v", paused: false, deviceIDs: [me, "PHONE", "LAPTOP"]), [], ["PHONE"]),
        (ConfiguredFolder(id: "v", paused: false, deviceIDs: [me, "LAPTOP"]), [], []),
        (ConfiguredFolder(id: "v", paused: false, deviceIDs: [me]), [], []),
        (ConfiguredFolder(id: "v", paused: true, deviceIDs: [me, "PHONE"]), [], []),
        (ConfiguredFolder(id: "v", paused: false, deviceIDs: [me, "PHONE"]), ["other"], []),
        (ConfiguredFolder(id: "v", paused: false, deviceIDs: [me, "PHONE"]), ["v"], ["PHONE"]),
        // A device the config does not list is no peer.
        (ConfiguredFolder(id: "v", paused: false, deviceIDs: [me, "STRANGER"]), [], []),
    ]

    @Test("each condition on its own", arguments: cases)
    func conditions(folder: ConfiguredFolder, watched: Set<String>, peers: [String]) {
        let pairs = SharedPairs.of(
            myID: Self.me, devices: Self.devices, folders: [folder], rules: WakeRules(watchedFolders: watched))
        #expect(pairs == peers.map { SweepPair(device: $0, folder: "v") })
    }

    @Test("the sweep's pairs are exactly the shared pairs")
    func trackerSweepsTheSharedPairs() {
        let folders = [
            ConfiguredFolder(id: "a", paused: false, deviceIDs: [Self.me, "PHONE", "LAPTOP"]),
            ConfiguredFolder(id: "b", paused: true, deviceIDs: [Self.me, "PHONE"]),
        ]
        let rules = WakeRules(watchedFolders: [])
        var tracker = PeerTracker(rules: rules)
        tracker.setConfig(myID: Self.me, devices: Self.devices, folders: folders)
        #expect(
            tracker.sweepPairs == SharedPairs.of(myID: Self.me, devices: Self.devices, folders: folders, rules: rules))
        #expect(tracker.sweepPairs == [SweepPair(device: "PHONE", folder: "a")])
    }
}
