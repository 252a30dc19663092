/// One entry of Syncthing's `GET /rest/events` array, reduced to what the wake rules read.
///
/// Shape (docs/syncthing-api.md, the event filter): `{"id": Int, "globalID": Int, "time": String, "type": String,
/// "data": {…}}`. `id` is the per-subscription cursor (no holes unless events were lost). `data` varies by type; only
/// the fields below are decoded, and a `data` of an unexpected shape decodes as empty rather than failing the whole
/// poll. File names are never decoded.
package struct SyncthingEvent: Sendable, Equatable, JSONReadable {
    package var id: Int
    package var type: String
    /// `data.folder` (LocalIndexUpdated, FolderCompletion).
    package var folder: String?
    /// `data.device` (FolderCompletion): the remote Device ID.
    package var device: String?
    /// `data.needItems`, `data.needBytes`, `data.needDeletes` (FolderCompletion).
    package var needItems: Int64?
    package var needBytes: Int64?
    package var needDeletes: Int64?
    /// `data.remoteState` (FolderCompletion, Syncthing 1.20 and later; nil before): whether the remote device shares
    /// the folder with us (`RemoteFolderState`).
    package var remoteState: RemoteFolderState?
    /// `data.sequence` (FolderCompletion: the remote device's index sequence for the folder as known here; 0 while
    /// no index from it has arrived, when Syncthing reports the pair as complete although it knows nothing).
    package var sequence: Int64?

    package init(
        id: Int, type: String, folder: String? = nil, device: String? = nil, needItems: Int64? = nil,
        needBytes: Int64? = nil, needDeletes: Int64? = nil, remoteState: RemoteFolderState? = nil,
        sequence: Int64? = nil
    ) {
        self.id = id
        self.type = type
        self.folder = folder
        self.device = device
        self.needItems = needItems
        self.needBytes = needBytes
        self.needDeletes = needDeletes
        self.remoteState = remoteState
        self.sequence = sequence
    }

    private static let keys: [StaticString] = ["id", "type", "data"]

    /// Reads one event object; `JSONError.shape` unless it has an integer `id` and a string `type`.
    package init(json reader: inout JSONReader) throws(JSONError) {
        var id: Int?
        var type: String?
        var payload = Payload()
        let valid = try reader.readObject(Self.keys) { (r, key) throws(JSONError) in
            switch key {
            case 0: id = try Int(exactly: r.requiredInt64())
            case 1: type = try r.requiredString()
            default: payload = try Payload(json: &r)
            }
        }
        guard valid, let id, let type else { throw .shape }
        self.init(
            id: id, type: type, folder: payload.folder, device: payload.device, needItems: payload.needItems,
            needBytes: payload.needBytes, needDeletes: payload.needDeletes, remoteState: payload.remoteState,
            sequence: payload.sequence)
    }

    /// `data`: each field on its own, a field of an unexpected type is treated as absent, and a `data` that is not an
    /// object (or has a key that is not valid Unicode) is empty.
    private struct Payload {
        var folder: String?
        var device: String?
        var needItems: Int64?
        var needBytes: Int64?
        var needDeletes: Int64?
        var remoteState: RemoteFolderState?
        var sequence: Int64?

        private static let keys: [StaticString] = [
            "folder", "device", "needItems", "needBytes", "needDeletes", "remoteState", "sequence",
        ]

        init() {}

        init(json reader: inout JSONReader) throws(JSONError) {
            guard try reader.peek() == .object else {
                try reader.skipValue()
                return
            }
            var p = Payload()
            let valid = try reader.readObject(Self.keys) { (r, key) throws(JSONError) in
                switch key {
                case 0: p.folder = try r.lenientString()
                case 1: p.device = try r.lenientString()
                case 2: p.needItems = try Self.count(&r)
                case 3: p.needBytes = try Self.count(&r)
                case 4: p.needDeletes = try Self.count(&r)
                case 5: p.remoteState = try r.lenientString().flatMap(RemoteFolderState.init(rawValue:))
                default: p.sequence = try r.lenientInt64()
                }
            }
            if valid { self = p }
        }

        private static func count(_ r: inout JSONReader) throws(JSONError) -> Int64? {
            guard try r.peek() == .number else { return try r.lenientInt64() }
            let number = try r.readNumber()
            if let v = number.int64 { return v }
            // Large or fractional numbers: keep only the sign of the need.
            return number.double.map { $0 > 0 ? 1 : 0 }
        }
    }

    /// Decodes a whole `/rest/events` response body.
    /// - Throws: `EventDecodingError.malformed` unless the body is one complete JSON array of events, each with an
    ///   integer `id` in `validIDs` and a string `type`. A cut or partial body is never half-read
    ///   (docs/syncthing-api.md, bodies: sizes and malformed answers).
    package static func decodeArray(_ body: [UInt8]) throws(EventDecodingError) -> [SyncthingEvent] {
        let events: [SyncthingEvent]
        do {
            events = try JSONReader.read(body) { (reader) throws(JSONError) in
                // Not `[SyncthingEvent](json:)`: the generic Array conformance is not specialized on this hot path.
                guard try reader.peek() == .array else { throw .shape }
                try reader.beginArray()
                var events: [SyncthingEvent] = []
                while try reader.nextElement() { events.append(try SyncthingEvent(json: &reader)) }
                return events
            }
        } catch {
            throw .malformed
        }
        // Syncthing's ids start at 1 and grow by one per event; anything outside 1…2^53 (JSON's exact integer
        // range) is not a real id, and accepting it would let a hostile id overflow the cursor's arithmetic.
        guard events.allSatisfy({ validIDs.contains($0.id) }) else { throw .malformed }
        return events
    }

    /// The ids a real event can carry.
    package static let validIDs = 1...(1 << 53)

    /// True when a peer still needs data according to this FolderCompletion (any need above zero).
    package var peerNeedsData: Bool {
        (needItems ?? 0) > 0 || (needBytes ?? 0) > 0 || (needDeletes ?? 0) > 0
    }
}

/// A `/rest/events` body that is not a complete, well-formed event array.
package enum EventDecodingError: Error, Sendable, Equatable { case malformed }
