import NotifyCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation  // Darwin: FoundationEssentials is not a module of its own there
#endif

/// The models as Foundation's `JSONDecoder` read them before NotifyCore had its own reader: the Decodable
/// implementations of that time, kept unchanged as the differential oracle of `JSONReader` (tests and fuzzing only;
/// never linked into vaultsync-notify).
package enum Oracle {
    package static func events(_ body: [UInt8]) -> [SyncthingEvent]? {
        guard let events = decode([OracleEvent].self, body)?.map(\.value),
            events.allSatisfy({ SyncthingEvent.validIDs.contains($0.id) })
        else { return nil }
        return events
    }

    package static func completion(_ body: [UInt8]) -> Completion? { decode(OracleCompletion.self, body)?.value }
    package static func status(_ body: [UInt8]) -> SystemStatus? { decode(OracleStatus.self, body)?.value }
    package static func devices(_ body: [UInt8]) -> [ConfiguredDevice]? {
        decode([OracleDevice].self, body)?.map(\.value)
    }
    package static func folders(_ body: [UInt8]) -> [ConfiguredFolder]? {
        decode([OracleFolder].self, body)?.map(\.value)
    }
    package static func connections(_ body: [UInt8]) -> SystemConnections? {
        decode(OracleConnections.self, body).map { SystemConnections(connections: $0.connections.mapValues(\.value)) }
    }
    package static func health(_ body: [UInt8]) -> RelayHealthBody? {
        decode(OracleHealth.self, body).map { RelayHealthBody(status: $0.status, version: $0.version) }
    }

    private static func decode<T: Decodable>(_ type: T.Type, _ body: [UInt8]) -> T? {
        try? JSONDecoder().decode(T.self, from: Data(body))
    }
}

private struct OracleEvent: Decodable {
    var value: SyncthingEvent

    private enum Keys: String, CodingKey { case id, type, data }

    private struct Payload: Decodable {
        var folder: String?
        var device: String?
        var needItems: Int64?
        var needBytes: Int64?
        var needDeletes: Int64?
        var remoteState: RemoteFolderState?
        var sequence: Int64?

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: PayloadKeys.self)
            folder = try? c.decodeIfPresent(String.self, forKey: .folder)
            device = try? c.decodeIfPresent(String.self, forKey: .device)
            needItems = Payload.count(c, .needItems)
            needBytes = Payload.count(c, .needBytes)
            needDeletes = Payload.count(c, .needDeletes)
            remoteState = (try? c.decodeIfPresent(String.self, forKey: .remoteState)).flatMap(
                RemoteFolderState.init(rawValue:))
            sequence = try? c.decodeIfPresent(Int64.self, forKey: .sequence)
        }

        private static func count(_ c: KeyedDecodingContainer<PayloadKeys>, _ key: PayloadKeys) -> Int64? {
            if let v = try? c.decodeIfPresent(Int64.self, forKey: key) { return v }
            if let v = try? c.decodeIfPresent(Double.self, forKey: key), v.isFinite { return v > 0 ? 1 : 0 }
            return nil
        }
    }

    private enum PayloadKeys: String, CodingKey {
        case folder, device, needItems, needBytes, needDeletes, remoteState, sequence
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        let payload = try? c.decodeIfPresent(Payload.self, forKey: .data)
        value = SyncthingEvent(
            id: try c.decode(Int.self, forKey: .id), type: try c.decode(String.self, forKey: .type),
            folder: payload?.folder, device: payload?.device, needItems: payload?.needItems,
            needBytes: payload?.needBytes, needDeletes: payload?.needDeletes, remoteState: payload?.remoteState,
            sequence: payload?.sequence)
    }
}

private struct OracleStatus: Decodable {
    var myID: String
    var startTime: String
    var guiAddressOverridden: Bool?

    var value: SystemStatus {
        SystemStatus(myID: myID, startTime: startTime, guiAddressOverridden: guiAddressOverridden)
    }
}

private struct OracleDevice: Decodable {
    var value: ConfiguredDevice

    private enum Keys: String, CodingKey { case deviceID, paused }
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        value = ConfiguredDevice(
            deviceID: try c.decode(String.self, forKey: .deviceID),
            paused: (try? c.decodeIfPresent(Bool.self, forKey: .paused)) ?? false)
    }
}

private struct OracleFolder: Decodable {
    var value: ConfiguredFolder

    private enum Keys: String, CodingKey { case id, paused, devices }
    private struct Member: Decodable { var deviceID: String }
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        let members = (try? c.decodeIfPresent([Member].self, forKey: .devices)) ?? nil
        value = ConfiguredFolder(
            id: try c.decode(String.self, forKey: .id),
            paused: (try? c.decodeIfPresent(Bool.self, forKey: .paused)) ?? false,
            deviceIDs: (members ?? []).map(\.deviceID), devicesUnreadable: members == nil)
    }
}

private struct OracleConnection: Decodable {
    var value: DeviceConnection

    private enum Keys: String, CodingKey { case connected, paused }
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        value = DeviceConnection(
            connected: (try? c.decodeIfPresent(Bool.self, forKey: .connected)) ?? false,
            paused: (try? c.decodeIfPresent(Bool.self, forKey: .paused)) ?? false)
    }
}

private struct OracleConnections: Decodable { var connections: [String: OracleConnection] }

private struct OracleCompletion: Decodable {
    var value: Completion

    private enum Keys: String, CodingKey { case needItems, needBytes, needDeletes, remoteState, sequence }
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        value = Completion(
            needItems: try c.decode(Int64.self, forKey: .needItems),
            needBytes: try c.decode(Int64.self, forKey: .needBytes),
            needDeletes: try c.decode(Int64.self, forKey: .needDeletes),
            remoteState: (try? c.decodeIfPresent(String.self, forKey: .remoteState)).flatMap(
                RemoteFolderState.init(rawValue:)),
            sequence: try? c.decodeIfPresent(Int64.self, forKey: .sequence))
    }
}

private struct OracleHealth: Decodable {
    var status: String
    var version: String?
}

extension Oracle {
    /// Each model that `JSONReader` and `JSONDecoder` read differently from `body`, one line each; empty when they
    /// agree. On a body the reader takes as JSON (`JSONReader.isValid`: RFC 8259, within the depth bound) every model
    /// must be equal, both nil included; on any other body the reader must reject every model, whatever
    /// `JSONDecoder` (more lenient: trailing commas, bad escapes in skipped strings, 512 levels) does.
    ///
    /// A valid body with a long number (`hasLongNumber`) is compared only for syntax: `JSONDecoder` reads an integer
    /// field written with a fraction or exponent from 2^53 up through `Decimal`, which fails on some such numbers or
    /// stops the process (a precondition failure in `Decimal`), where `JSONReader` reads them exactly.
    package static func disagreements(_ body: [UInt8]) -> [String] {
        let strict = JSONReader.isValid(body)
        if strict && hasLongNumber(body) { return [] }
        var lines: [String] = []
        func compare<T: Equatable>(_ model: String, _ ours: T?, _ theirs: @autoclosure () -> T?) {
            let expected = strict ? theirs() : nil
            if ours != expected {
                lines.append(
                    "\(model): JSONReader read \(String(describing: ours)), expected \(String(describing: expected))")
            }
        }
        compare("events", try? SyncthingEvent.decodeArray(body), events(body))
        compare("completion", decodeJSON(Completion.self, from: body), completion(body))
        compare("status", decodeJSON(SystemStatus.self, from: body), status(body))
        compare("devices", decodeJSON([ConfiguredDevice].self, from: body), devices(body))
        compare("folders", decodeJSON([ConfiguredFolder].self, from: body), folders(body))
        compare("connections", decodeJSON(SystemConnections.self, from: body), connections(body))
        compare("health", decodeJSON(RelayHealthBody.self, from: body), health(body))
        return lines
    }

    /// True when `body` has, in one run of number characters (digits, `.`, `e`, `E`, `+`, `-`), more than 38 digits,
    /// or more than 18 digits together with a fraction or an exponent: `JSONDecoder` reads the second kind as an
    /// integer through `Decimal` too, and gives nil for some of them from 20 digits on (`9000000000000000001.5`).
    static func hasLongNumber(_ body: [UInt8]) -> Bool {
        var digits = 0
        var fractionOrExponent = false
        for byte in body {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                digits += 1
                if digits > 38 || (digits > 18 && fractionOrExponent) { return true }
            case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"):
                fractionOrExponent = true
                if digits > 18 { return true }
            case UInt8(ascii: "+"), UInt8(ascii: "-"): break
            default:
                digits = 0
                fractionOrExponent = false
            }
        }
        return false
    }
}
