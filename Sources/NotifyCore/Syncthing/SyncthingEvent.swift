import FoundationEssentials

/// One entry of Syncthing's `GET /rest/events` array, reduced to what the wake rules read.
///
/// Shape (docs/syncthing-api.md, the event filter): `{"id": Int, "globalID": Int, "time": String, "type": String,
/// "data": {…}}`. `id` is the per-subscription cursor (no holes unless events were lost). `data` varies by type; only
/// the fields below are decoded, and a `data` of an unexpected shape decodes as empty rather than failing the whole
/// poll. File names are never decoded.
package struct SyncthingEvent: Sendable, Equatable, Decodable {
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
            // Each field on its own: a field of an unexpected type is treated as absent.
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
            // Large or fractional numbers: keep only the sign of the need.
            if let v = try? c.decodeIfPresent(Double.self, forKey: key), v.isFinite { return v > 0 ? 1 : 0 }
            return nil
        }
    }

    private enum PayloadKeys: String, CodingKey {
        case folder, device, needItems, needBytes, needDeletes, remoteState, sequence
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        id = try c.decode(Int.self, forKey: .id)
        type = try c.decode(String.self, forKey: .type)
        let payload = try? c.decodeIfPresent(Payload.self, forKey: .data)
        folder = payload?.folder
        device = payload?.device
        needItems = payload?.needItems
        needBytes = payload?.needBytes
        needDeletes = payload?.needDeletes
        remoteState = payload?.remoteState
        sequence = payload?.sequence
    }

    /// Decodes a whole `/rest/events` response body.
    /// - Throws: `EventDecodingError.malformed` unless the body is one complete JSON array of events, each with an
    ///   integer `id` in `validIDs` and a string `type`. A cut or partial body is never half-read
    ///   (docs/syncthing-api.md, bodies: sizes and malformed answers).
    package static func decodeArray(_ body: [UInt8]) throws(EventDecodingError) -> [SyncthingEvent] {
        let events: [SyncthingEvent]
        do {
            events = try JSONDecoder().decode([SyncthingEvent].self, from: Data(body))
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
