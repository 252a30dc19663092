import Testing

@testable import NotifyCore

/// How the sweep reads its answers: a folder gone since the config was read skips its pair; any other failure
/// voids the whole sweep, which never acts on half an answer.
@Suite("Sweep observations")
struct SweepObservationTests {
    static let a = SweepPair(device: "PEER-A", folder: "notes")
    static let b = SweepPair(device: "PEER-B", folder: "notes")
    static let c = SweepPair(device: "PEER-A", folder: "photos")
    static let needing = Completion(needItems: 3, needBytes: 10, needDeletes: 0)
    static let done = Completion(needItems: 0, needBytes: 0, needDeletes: 0)
    static let connections = ["PEER-A": DeviceConnection(connected: true, paused: false)]

    @Test("no pair: nothing is read")
    func noPairReadsNothing() {
        var reads = 0
        let result = SweepObservation.collect(
            [],
            connections: {
                reads += 1; return [:]
            }
        ) { _ in
            reads += 1
            return .failed
        }
        #expect(result == [])
        #expect(reads == 0)
    }

    @Test("every pair answered: each with its device's connection; a device missing from connections is offline")
    func answersCarryConnection() {
        let result = SweepObservation.collect([Self.a, Self.b], connections: { Self.connections }) { pair in
            .answered(pair == Self.a ? Self.needing : Self.done)
        }
        #expect(
            result == [
                SweepObservation(pair: Self.a, connected: true, completion: Self.needing),
                SweepObservation(pair: Self.b, connected: false, completion: Self.done),
            ])
    }

    @Test("a folder gone since the config was read skips its pair only")
    func folderGoneSkipsPair() {
        let result = SweepObservation.collect([Self.a, Self.b, Self.c], connections: { Self.connections }) { pair in
            pair == Self.b ? .folderGone : .answered(Self.done)
        }
        #expect(result?.map(\.pair) == [Self.a, Self.c])
    }

    @Test("any other failure voids the sweep and stops asking")
    func failureVoidsSweep() {
        var asked: [SweepPair] = []
        let result = SweepObservation.collect([Self.a, Self.b, Self.c], connections: { Self.connections }) { pair in
            asked.append(pair)
            return pair == Self.b ? .failed : .answered(Self.done)
        }
        #expect(result == nil)
        #expect(asked == [Self.a, Self.b])
    }

    @Test("connections unanswered: the sweep is void and no completion is asked")
    func connectionsUnanswered() {
        var asked = 0
        let result = SweepObservation.collect([Self.a], connections: { nil }) { _ in
            asked += 1
            return .answered(Self.done)
        }
        #expect(result == nil)
        #expect(asked == 0)
    }
}
