import FoundationEssentials

/// The parts of Syncthing's REST answers the sidecar reads. Every other field is ignored; nothing that carries a
/// secret (`/rest/system/config` holds the API key) is ever requested.

/// `GET /rest/system/status` (docs/syncthing-api.md, status and startTime; fixture e27-system-status.json).
public struct SystemStatus: Sendable, Equatable, Decodable {
    /// The server's own Device ID. Sent to the relay; never logged.
    public var myID: String
    /// When this Syncthing process started (RFC 3339, whole seconds). Changes on every restart.
    public var startTime: String
    /// True when STGUIADDRESS or `--gui-address` overrides config.xml's GUI address.
    public var guiAddressOverridden: Bool?

    public init(myID: String, startTime: String, guiAddressOverridden: Bool? = nil) {
        self.myID = myID
        self.startTime = startTime
        self.guiAddressOverridden = guiAddressOverridden
    }
}

/// One entry of `GET /rest/config/devices` (fixture e21-config-devices.json). The list includes the local device.
public struct ConfiguredDevice: Sendable, Equatable, Decodable {
    public var deviceID: String
    public var paused: Bool

    public init(deviceID: String, paused: Bool) {
        self.deviceID = deviceID
        self.paused = paused
    }

    private enum Keys: String, CodingKey { case deviceID, paused }
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        deviceID = try c.decode(String.self, forKey: .deviceID)
        paused = (try? c.decodeIfPresent(Bool.self, forKey: .paused)) ?? false
    }
}

/// One entry of `GET /rest/config/folders` (fixture e25-config-folders.json): its ID, whether it is paused, and which
/// devices share it.
public struct ConfiguredFolder: Sendable, Equatable, Decodable {
    public var id: String
    public var paused: Bool
    public var deviceIDs: [String]

    public init(id: String, paused: Bool, deviceIDs: [String]) {
        self.id = id
        self.paused = paused
        self.deviceIDs = deviceIDs
    }

    private enum Keys: String, CodingKey { case id, paused, devices }
    private struct Member: Decodable { var deviceID: String }
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        id = try c.decode(String.self, forKey: .id)
        paused = (try? c.decodeIfPresent(Bool.self, forKey: .paused)) ?? false
        deviceIDs = ((try? c.decodeIfPresent([Member].self, forKey: .devices)) ?? []).map(\.deviceID)
    }
}

/// One entry of `GET /rest/system/connections` `.connections` (docs/syncthing-api.md, completion and connections):
/// keyed by Device ID; every configured remote device, and on 1.19 the local device too (always `connected: false`;
/// 1.29 leaves it out). Other fields are ignored.
public struct DeviceConnection: Sendable, Equatable, Decodable {
    public var connected: Bool
    public var paused: Bool

    public init(connected: Bool, paused: Bool) {
        self.connected = connected
        self.paused = paused
    }

    private enum Keys: String, CodingKey { case connected, paused }
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        connected = (try? c.decodeIfPresent(Bool.self, forKey: .connected)) ?? false
        paused = (try? c.decodeIfPresent(Bool.self, forKey: .paused)) ?? false
    }
}

/// `GET /rest/db/completion?device=D&folder=F` (docs/syncthing-api.md, completion and connections). In sync means all
/// three needs are 0 (not `completion == 100`: 95 means only deletes are pending).
public struct Completion: Sendable, Equatable, Decodable {
    public var needItems: Int64
    public var needBytes: Int64
    public var needDeletes: Int64
    /// `remoteState` (Syncthing 1.20 and later; nil before, or when the value is not one Syncthing documents).
    public var remoteState: RemoteFolderState?
    /// The remote device's index sequence for the folder as known here (per-folder queries; 0 in the aggregate, and
    /// 0 while no index from the device has arrived). Nil when absent.
    public var sequence: Int64?

    public init(
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
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        needItems = try c.decode(Int64.self, forKey: .needItems)
        needBytes = try c.decode(Int64.self, forKey: .needBytes)
        needDeletes = try c.decode(Int64.self, forKey: .needDeletes)
        remoteState = (try? c.decodeIfPresent(String.self, forKey: .remoteState)).flatMap(
            RemoteFolderState.init(rawValue:))
        sequence = try? c.decodeIfPresent(Int64.self, forKey: .sequence)
    }

    public var inSync: Bool { needItems == 0 && needBytes == 0 && needDeletes == 0 }
}

/// Decodes a bounded JSON body into `T`, or nil when it is not exactly that shape.
public func decodeJSON<T: Decodable>(_ type: T.Type, from body: [UInt8]) -> T? {
    try? JSONDecoder().decode(T.self, from: Data(body))
}
