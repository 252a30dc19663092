import FoundationEssentials

/// The parts of Syncthing's REST answers the sidecar reads. Every other field is ignored; nothing that carries a
/// secret (`/rest/system/config` holds the API key) is ever requested.

/// `GET /rest/system/status` (docs/syncthing-api.md, status and startTime; fixture e27-system-status.json).
package struct SystemStatus: Sendable, Equatable, Decodable {
    /// The server's own Device ID. Sent to the relay; never logged.
    package var myID: String
    /// When this Syncthing process started (RFC 3339, whole seconds). Changes on every restart.
    package var startTime: String
    /// True when STGUIADDRESS or `--gui-address` overrides config.xml's GUI address.
    package var guiAddressOverridden: Bool?

    package init(myID: String, startTime: String, guiAddressOverridden: Bool? = nil) {
        self.myID = myID
        self.startTime = startTime
        self.guiAddressOverridden = guiAddressOverridden
    }
}

/// One entry of `GET /rest/config/devices` (fixture e21-config-devices.json). The list includes the local device.
package struct ConfiguredDevice: Sendable, Equatable, Decodable {
    package var deviceID: String
    package var paused: Bool

    package init(deviceID: String, paused: Bool) {
        self.deviceID = deviceID
        self.paused = paused
    }

    private enum Keys: String, CodingKey { case deviceID, paused }
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        deviceID = try c.decode(String.self, forKey: .deviceID)
        paused = (try? c.decodeIfPresent(Bool.self, forKey: .paused)) ?? false
    }
}

/// One entry of `GET /rest/config/folders` (fixture e25-config-folders.json): its ID, whether it is paused, and which
/// devices share it.
package struct ConfiguredFolder: Sendable, Equatable, Decodable {
    package var id: String
    package var paused: Bool
    package var deviceIDs: [String]

    package init(id: String, paused: Bool, deviceIDs: [String]) {
        self.id = id
        self.paused = paused
        self.deviceIDs = deviceIDs
    }

    private enum Keys: String, CodingKey { case id, paused, devices }
    private struct Member: Decodable { var deviceID: String }
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        id = try c.decode(String.self, forKey: .id)
        paused = (try? c.decodeIfPresent(Bool.self, forKey: .paused)) ?? false
        deviceIDs = ((try? c.decodeIfPresent([Member].self, forKey: .devices)) ?? []).map(\.deviceID)
    }
}

/// One entry of `GET /rest/system/connections` `.connections` (docs/syncthing-api.md, completion and connections):
/// keyed by Device ID; every configured remote device, and on 1.19 the local device too (always `connected: false`;
/// 1.29 leaves it out). Other fields are ignored.
package struct DeviceConnection: Sendable, Equatable, Decodable {
    package var connected: Bool
    package var paused: Bool

    package init(connected: Bool, paused: Bool) {
        self.connected = connected
        self.paused = paused
    }

    private enum Keys: String, CodingKey { case connected, paused }
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        connected = (try? c.decodeIfPresent(Bool.self, forKey: .connected)) ?? false
        paused = (try? c.decodeIfPresent(Bool.self, forKey: .paused)) ?? false
    }
}

/// `GET /rest/db/completion?device=D&folder=F` (docs/syncthing-api.md, completion and connections). In sync means all
/// three needs are 0 (not `completion == 100`: 95 means only deletes are pending).
package struct Completion: Sendable, Equatable, Decodable {
    package var needItems: Int64
    package var needBytes: Int64
    package var needDeletes: Int64
    /// `remoteState` (Syncthing 1.20 and later; nil before, or when the value is not one Syncthing documents).
    package var remoteState: RemoteFolderState?
    /// The remote device's index sequence for the folder as known here (per-folder queries; 0 in the aggregate, and
    /// 0 while no index from the device has arrived). Nil when absent.
    package var sequence: Int64?

    package init(
        needItems: Int64, needBytes: Int64, needDeletes: Int64, remoteState: RemoteFolderState? = nil,
        sequence: Int64? = nil
    ) {
        self.needItems = needItems
        self.needBytes = needBytes
        self.needDeletes = needDeletes
        self.remoteState = remoteState
        self.sequence = sequence
    }

    private enum Keys: String, CodingKey { case needItems, needBytes, needDeletes, remoteState, sequence }
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        needItems = try c.decode(Int64.self, forKey: .needItems)
        needBytes = try c.decode(Int64.self, forKey: .needBytes)
        needDeletes = try c.decode(Int64.self, forKey: .needDeletes)
        remoteState = (try? c.decodeIfPresent(String.self, forKey: .remoteState)).flatMap(
            RemoteFolderState.init(rawValue:))
        sequence = try? c.decodeIfPresent(Int64.self, forKey: .sequence)
    }

    package var inSync: Bool { needItems == 0 && needBytes == 0 && needDeletes == 0 }
}

/// Decodes a bounded JSON body into `T`, or nil when it is not exactly that shape.
package func decodeJSON<T: Decodable>(_ type: T.Type, from body: [UInt8]) -> T? {
    try? JSONDecoder().decode(T.self, from: Data(body))
}
