import NotifyCore

/// A `/rest/…` response body through `SyncthingEvent.decodeArray(_:)` and the decoders of SyncthingModels.swift.
///
/// Invariants: accepted events all have ids in `SyncthingEvent.validIDs`; an accepted body is a JSON array; the
/// accepted events rendered back as a `/rest/events` body decode to the same events; a `Completion` is in sync
/// exactly when its three needs are 0; and the stale-peer sweep pairs built from whatever decodes name only unpaused
/// remote devices and unpaused folders shared with them.
func fuzzEvents(_ input: [UInt8], _ check: inout InvariantCheck) {
    if let events = try? SyncthingEvent.decodeArray(input) {
        check.expect(
            events.allSatisfy { SyncthingEvent.validIDs.contains($0.id) }, "accepted an id outside validIDs")
        let first = input.first(where: { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) })
        check.expect(first == UInt8(ascii: "["), "accepted a body that is not a JSON array")
        let rendered = renderEvents(events)
        do {
            let again = try SyncthingEvent.decodeArray(Array(rendered.utf8))
            check.expect(again == events, "round trip changed \(events) into \(again)")
        } catch {
            check.fail("the rendered events do not decode: \(rendered)")
        }
    }

    if let completion = decodeJSON(Completion.self, from: input) {
        let needsNothing = completion.needItems == 0 && completion.needBytes == 0 && completion.needDeletes == 0
        check.expect(completion.inSync == needsNothing, "Completion.inSync disagrees with its needs")
    }
    _ = decodeJSON(SystemConnections.self, from: input)
    let status = decodeJSON(SystemStatus.self, from: input)
    let devices = decodeJSON([ConfiguredDevice].self, from: input) ?? []
    let folders = decodeJSON([ConfiguredFolder].self, from: input) ?? []
    let myID = status?.myID ?? devices.first?.deviceID ?? ""
    let rules = WakeRules(watchedFolders: Set(folders.prefix(1).map(\.id)))
    let active = Set(devices.filter { !$0.paused && $0.deviceID != myID }.map(\.deviceID))
    for pair in SharedPairs.of(myID: myID, devices: devices, folders: folders, rules: rules) {
        check.expect(active.contains(pair.device), "sweep pair with the local, a paused or an unknown device")
        check.expect(rules.watches(pair.folder), "sweep pair with an unwatched folder")
        check.expect(
            folders.contains { $0.id == pair.folder && !$0.paused && $0.deviceIDs.contains(pair.device) },
            "sweep pair with a paused folder or one not shared with the device")
    }
}

/// `events` as Syncthing would send them: `[{"id":…,"type":…,"data":{…}}]`, absent fields left out.
func renderEvents(_ events: [SyncthingEvent]) -> String {
    let objects = events.map { event -> String in
        var data: [String] = []
        if let folder = event.folder { data.append("\"folder\":" + jsonString(folder)) }
        if let device = event.device { data.append("\"device\":" + jsonString(device)) }
        if let n = event.needItems { data.append("\"needItems\":\(n)") }
        if let n = event.needBytes { data.append("\"needBytes\":\(n)") }
        if let n = event.needDeletes { data.append("\"needDeletes\":\(n)") }
        if let state = event.remoteState { data.append("\"remoteState\":" + jsonString(state.rawValue)) }
        if let n = event.sequence { data.append("\"sequence\":\(n)") }
        return "{\"id\":\(event.id),\"globalID\":\(event.id),\"time\":\"2026-11-30T00:50:16Z\",\"type\":"
            + jsonString(event.type) + ",\"data\":{" + data.joined(separator: ",") + "}}"
    }
    return "[" + objects.joined(separator: ",\n") + "]"
}
