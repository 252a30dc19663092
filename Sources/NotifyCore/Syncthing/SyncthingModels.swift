/// The parts of Syncthing's REST answers the sidecar reads. Every other field is ignored; nothing that carries a
/// secret (`/rest/system/config` holds the API key) is ever requested.

/// `GET /rest/system/status` (docs/syncthing-api.md, status and startTime; fixture e27-system-status.json).
package struct SystemStatus: Sendable, Equatable, JSONReadable {
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

    private static let keys: [StaticString] = ["myID", "startTime", "guiAddressOverridden"]

    /// `JSONError.shape` unless `myID` and `startTime` are strings and `guiAddressOverridden` is a Bool or absent.
    package init(json reader: inout JSONReader) throws(JSONError) {
        var myID: String?
        var startTime: String?
        var overridden: Bool?
        let valid = try reader.readObject(Self.keys) { (r, key) throws(JSONError) in
            switch key {
            case 0: myID = try r.requiredString()
            case 1: startTime = try r.requiredString()
            default: overridden = try r.optionalBool()
            }
        }
        guard valid, let myID, let startTime else { throw .shape }
        self.init(myID: myID, startTime: startTime, guiAddressOverridden: overridden)
    }
}

/// `GET /rest/system/version`: only `version` (e.g. `v1.29.5`), shown by `--status`.
package struct SystemVersion: Sendable, Equatable, JSONReadable {
    /// The release, as `ServerVersion.displayable` keeps it; nil when Syncthing sent something else.
    package var version: String?

    package init(version: String?) { self.version = version.flatMap(ServerVersion.displayable) }

    private static let keys: [StaticString] = ["version"]

    /// `JSONError.shape` unless it is an object; a `version` that is not a string is nil.
    package init(json reader: inout JSONReader) throws(JSONError) {
        var version: String?
        let valid = try reader.readObject(Self.keys) { (r, _) throws(JSONError) in version = try r.lenientString() }
        guard valid else { throw .shape }
        self.init(version: version)
    }
}

/// One entry of `GET /rest/config/devices` (fixture e21-config-devices.json). The list includes the local device.
package struct ConfiguredDevice: Sendable, Equatable, JSONReadable {
    package var deviceID: String
    package var paused: Bool

    package init(deviceID: String, paused: Bool) {
        self.deviceID = deviceID
        self.paused = paused
    }

    private static let keys: [StaticString] = ["deviceID", "paused"]

    /// `JSONError.shape` unless `deviceID` is a string; a `paused` that is not a Bool is false.
    package init(json reader: inout JSONReader) throws(JSONError) {
        var deviceID: String?
        var paused: Bool?
        let valid = try reader.readObject(Self.keys) { (r, key) throws(JSONError) in
            if key == 0 { deviceID = try r.requiredString() } else { paused = try r.lenientBool() }
        }
        guard valid, let deviceID else { throw .shape }
        self.init(deviceID: deviceID, paused: paused ?? false)
    }
}

/// One entry of `GET /rest/config/folders` (fixture e25-config-folders.json): its ID, whether it is paused, and which
/// devices share it.
package struct ConfiguredFolder: Sendable, Equatable, JSONReadable {
    package var id: String
    package var paused: Bool
    package var deviceIDs: [String]
    /// True when `devices` was missing or not a list of members with a string `deviceID`: the folder is then taken
    /// as shared with no device, and the answer counts as malformed (`PeerAnswer.folders`).
    package var devicesUnreadable: Bool

    package init(id: String, paused: Bool, deviceIDs: [String], devicesUnreadable: Bool = false) {
        self.id = id
        self.paused = paused
        self.deviceIDs = deviceIDs
        self.devicesUnreadable = devicesUnreadable
    }

    private static let keys: [StaticString] = ["id", "paused", "devices"]
    private static let memberKeys: [StaticString] = ["deviceID"]

    /// `JSONError.shape` unless `id` is a string; a `paused` that is not a Bool is false, and `devices` is empty
    /// unless it is an array of objects that all have a string `deviceID`.
    package init(json reader: inout JSONReader) throws(JSONError) {
        var id: String?
        var paused: Bool?
        var deviceIDs: [String]?
        let valid = try reader.readObject(Self.keys) { (r, key) throws(JSONError) in
            switch key {
            case 0: id = try r.requiredString()
            case 1: paused = try r.lenientBool()
            default: deviceIDs = try Self.members(&r)
            }
        }
        guard valid, let id else { throw .shape }
        self.init(id: id, paused: paused ?? false, deviceIDs: deviceIDs ?? [], devicesUnreadable: deviceIDs == nil)
    }

    /// The `deviceID`s of `devices`, or nil when it is not an array of such members (read to its end either way).
    private static func members(_ reader: inout JSONReader) throws(JSONError) -> [String]? {
        guard try reader.peek() == .array else {
            try reader.skipValue()
            return nil
        }
        try reader.beginArray()
        var ids: [String]? = []
        while try reader.nextElement() {
            guard ids != nil, try reader.peek() == .object else {
                try reader.skipValue()
                ids = nil
                continue
            }
            var id: String?
            let valid = try reader.readObject(memberKeys) { (r, _) throws(JSONError) in id = try r.lenientString() }
            if valid, let id { ids?.append(id) } else { ids = nil }
        }
        return ids
    }
}

/// One entry of `GET /rest/system/connections` `.connections` (docs/syncthing-api.md, completion and connections):
/// keyed by Device ID; every configured remote device, and on 1.19 the local device too (always `connected: false`;
/// 1.29 leaves it out). Other fields are ignored.
package struct DeviceConnection: Sendable, Equatable, JSONReadable {
    package var connected: Bool
    package var paused: Bool

    package init(connected: Bool, paused: Bool) {
        self.connected = connected
        self.paused = paused
    }

    private static let keys: [StaticString] = ["connected", "paused"]

    /// `JSONError.shape` unless it is an object; a field that is not a Bool is false.
    package init(json reader: inout JSONReader) throws(JSONError) {
        var connected: Bool?
        var paused: Bool?
        let valid = try reader.readObject(Self.keys) { (r, key) throws(JSONError) in
            if key == 0 { connected = try r.lenientBool() } else { paused = try r.lenientBool() }
        }
        guard valid else { throw .shape }
        self.init(connected: connected ?? false, paused: paused ?? false)
    }
}

/// `GET /rest/db/completion?device=D&folder=F` (docs/syncthing-api.md, completion and connections). In sync means all
/// three needs are 0 (not `completion == 100`: 95 means only deletes are pending).
package struct Completion: Sendable, Equatable, JSONReadable {
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

    private static let keys: [StaticString] = ["needItems", "needBytes", "needDeletes", "remoteState", "sequence"]

    /// `JSONError.shape` unless the three needs are integers (`JSONNumber.int64`); an unknown `remoteState` or a
    /// `sequence` that is not an integer is nil.
    package init(json reader: inout JSONReader) throws(JSONError) {
        var needs: [Int64?] = [nil, nil, nil]
        var remoteState: RemoteFolderState?
        var sequence: Int64?
        let valid = try reader.readObject(Self.keys) { (r, key) throws(JSONError) in
            switch key {
            case 0...2: needs[key] = try r.requiredInt64()
            case 3: remoteState = try r.lenientString().flatMap(RemoteFolderState.init(rawValue:))
            default: sequence = try r.lenientInt64()
            }
        }
        guard valid, let items = needs[0], let bytes = needs[1], let deletes = needs[2] else { throw .shape }
        self.init(
            needItems: items, needBytes: bytes, needDeletes: deletes, remoteState: remoteState, sequence: sequence)
    }

    package var inSync: Bool { needItems == 0 && needBytes == 0 && needDeletes == 0 }
}

/// `GET /rest/system/connections`: `{"connections": {"<Device ID>": {…}, …}, "total": {…}}`, of which only
/// `connections` is read (docs/syncthing-api.md, completion and connections).
package struct SystemConnections: Sendable, Equatable, JSONReadable {
    package var connections: [String: DeviceConnection]

    package init(connections: [String: DeviceConnection]) { self.connections = connections }

    private static let keys: [StaticString] = ["connections"]

    /// `JSONError.shape` unless `connections` is an object of `DeviceConnection`s. For a key given twice (or two
    /// canonically equivalent keys), the first wins and the later value is not read, as in `JSONDecoder`.
    package init(json reader: inout JSONReader) throws(JSONError) {
        var connections: [String: DeviceConnection]?
        let valid = try reader.readObject(Self.keys) { (r, _) throws(JSONError) in
            guard try r.peek() == .object else { throw .shape }
            try r.beginObject()
            var byID: [String: DeviceConnection] = [:]
            while let key = try r.nextKey() {
                guard let id = key.string else { throw .shape }
                if byID[id] == nil { byID[id] = try DeviceConnection(json: &r) } else { try r.skipValue() }
            }
            connections = byID
        }
        guard valid, let connections else { throw .shape }
        self.connections = connections
    }
}
