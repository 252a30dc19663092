import Testing

@testable import NotifyCore

/// How the core reads Syncthing's raw config and sweep answers: which failures void a read, which skip a pair, and
/// which count as malformed.
@Suite("Peer answer reads")
struct PeerAnswerReadTests {
    static let device = ConfiguredDevice(deviceID: "PEER-A", paused: false)
    static let folder = ConfiguredFolder(id: "notes", paused: false, deviceIDs: ["PEER-A"])
    static let unreadable = ConfiguredFolder(id: "photos", paused: false, deviceIDs: [], devicesUnreadable: true)
    static let refused = SyncthingError.transport(.connect)
    static let a = SweepPair(device: "PEER-A", folder: "notes")
    static let b = SweepPair(device: "PEER-B", folder: "photos")
    static let done = Completion(needItems: 0, needBytes: 0, needDeletes: 0)
    static let online = ["PEER-A": DeviceConnection(connected: true, paused: false)]

    @Test("config: both answered gives the snapshot, nothing malformed")
    func configAnswered() {
        let read = Engine.ConfigSnapshot.read(
            devices: { .success([Self.device]) }, folders: { .success([Self.folder]) })
        #expect(read.snapshot == Engine.ConfigSnapshot(devices: [Self.device], folders: [Self.folder]))
        #expect(read.malformed.isEmpty)
    }

    @Test("config: failed devices void the read and the folders are not asked for", arguments: [false, true])
    func devicesFailed(malformed: Bool) {
        var foldersAsked = false
        let read = Engine.ConfigSnapshot.read(devices: { .failure(malformed ? .malformed : Self.refused) }) {
            foldersAsked = true
            return .success([Self.folder])
        }
        #expect(read.snapshot == nil)
        #expect(!foldersAsked)
        #expect(read.malformed == (malformed ? [.devices] : []))
    }

    @Test("config: failed folders void the read; only a malformed one counts", arguments: [false, true])
    func foldersFailed(malformed: Bool) {
        let read = Engine.ConfigSnapshot.read(devices: { .success([Self.device]) }) {
            .failure(malformed ? .malformed : .notFound)
        }
        #expect(read.snapshot == nil)
        #expect(read.malformed == (malformed ? [.folders] : []))
    }

    @Test("config: a folder with unreadable devices keeps the snapshot but counts as a malformed folders answer")
    func unreadableDevices() {
        let read = Engine.ConfigSnapshot.read(devices: { .success([Self.device]) }) {
            .success([Self.folder, Self.unreadable])
        }
        #expect(
            read.snapshot == Engine.ConfigSnapshot(devices: [Self.device], folders: [Self.folder, Self.unreadable]))
        #expect(read.malformed == [.folders])
    }

    @Test("completion answer: success is answered, 404 is a gone folder, any other failure failed")
    func completionAnswer() {
        #expect(SweepObservation.CompletionAnswer(.success(Self.done)) == .answered(Self.done))
        #expect(SweepObservation.CompletionAnswer(.failure(.notFound)) == .folderGone)
        for error in [SyncthingError.status(500), .malformed, .unauthorized, Self.refused] {
            #expect(SweepObservation.CompletionAnswer(.failure(error)) == .failed)
        }
    }

    @Test("sweep: a 404 completion skips its pair and is not malformed")
    func sweepFolderGone() {
        let read = SweepObservation.read([Self.a, Self.b], connections: { .success(Self.online) }) { pair in
            pair == Self.a ? .success(Self.done) : .failure(.notFound)
        }
        #expect(read.observations == [SweepObservation(pair: Self.a, connected: true, completion: Self.done)])
        #expect(read.malformed.isEmpty)
    }

    @Test("sweep: a failed completion voids the sweep; only a malformed one counts", arguments: [false, true])
    func sweepCompletionFailed(malformed: Bool) {
        let read = SweepObservation.read([Self.a], connections: { .success(Self.online) }) { _ in
            .failure(malformed ? .malformed : .status(500))
        }
        #expect(read.observations == nil)
        #expect(read.malformed == (malformed ? [.completion] : []))
    }

    @Test("sweep: failed connections void the sweep; only a malformed one counts", arguments: [false, true])
    func sweepConnectionsFailed(malformed: Bool) {
        var completions = 0
        let read = SweepObservation.read([Self.a], connections: { .failure(malformed ? .malformed : Self.refused) }) {
            _ in
            completions += 1
            return .success(Self.done)
        }
        #expect(read.observations == nil)
        #expect(completions == 0)
        #expect(read.malformed == (malformed ? [.connections] : []))
    }
}
