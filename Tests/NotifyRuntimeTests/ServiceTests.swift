import Dispatch
import NotifyCore
import Testing

@testable import NotifyRuntime
@testable import NotifyTestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The real `Service` (engine, executor, I/O, clients) against a fake Syncthing and relay, on virtual time: what the
/// end-to-end suites check, reachable without a network or a clock. One test runs it on its Dispatch queues.
@Suite("The real service against a fake Syncthing and relay")
struct ServiceTests {
    @Test("start: the relay is checked, the cursor placed, the announce sent at once, and the long-poll waits")
    func startAnnounces() {
        let rig = ServiceRig()
        rig.start()
        #expect(rig.logged(.relayHealthy).count == 1)
        #expect(rig.logged(.syncthingConnected).count == 1)
        #expect(rig.reasons == [.announce])
        #expect(rig.relay.state.withLock { $0.bodies } == [#"{"device_id": "\#(ServiceRig.idA)"}"#])
        #expect(rig.runtime.holdsLongPoll)
        #expect(rig.exits.withLock { $0 }.isEmpty)
    }

    @Test(
        "shared changes wake once, when the last batch's debounce ends; a stream moves it without a timer per batch",
        arguments: [1, 3])
    func changeWakesAfterDebounce(batches: Int) {
        let rig = ServiceRig(announce: false)
        rig.start()
        let scheduled = rig.runtime.scheduled
        // Each answer comes 2 s after the last (the long-poll's time).
        for batch in 0..<batches {
            rig.answer([(2 * batch + 1, "LocalIndexUpdated"), (2 * batch + 2, "LocalIndexUpdated")])
        }
        #expect(rig.runtime.scheduled - scheduled == 1)
        rig.advance(seconds: 4.9)
        #expect(rig.triggers == 0)
        rig.advance(seconds: 0.2)
        #expect(rig.reasons == [.change])
        rig.advance(seconds: 60)
        #expect(rig.triggers == 1)
        #expect(rig.runtime.holdsLongPoll)
    }

    @Test("a change in a folder shared with no one does not wake")
    func unsharedChangeDoesNotWake() {
        let rig = ServiceRig(announce: false)
        rig.syncthing.state.withLock {
            $0.folders = #"[{"id":"vault","paused":false,"devices":[{"deviceID":"\#(ServiceRig.idA)"}]}]"#
        }
        rig.start()
        rig.answer([(1, "LocalIndexUpdated")])
        rig.advance(seconds: 60)
        #expect(rig.triggers == 0)
    }

    @Test("a Syncthing restart re-places the cursor at the new head and wakes once")
    func restartResyncs() {
        let rig = ServiceRig(announce: false)
        rig.start()
        rig.syncthing.state.withLock {
            $0.startTime = "2026-12-01T01:00:00Z"
            $0.head = 7
        }
        rig.answer("[]")
        #expect(rig.logged(.syncthingRestarted).count == 1)
        rig.advance(seconds: 6)
        #expect(rig.reasons == [.resync])
        // The next poll asks from the new head.
        rig.answer([(8, "LocalIndexUpdated")])
        #expect(rig.logged(.eventGap).isEmpty)
    }

    @Test("a new Device ID counts as a restart; wake-ups carry the new one")
    func deviceIDChangeResyncs() {
        let rig = ServiceRig(announce: false)
        rig.start()
        rig.syncthing.state.withLock { $0.myID = ServiceRig.idB }
        rig.answer("[]")
        #expect(rig.logged(.deviceIDChanged).count == 1)
        #expect(rig.logged(.syncthingRestarted).count == 1)
        rig.advance(seconds: 6)
        #expect(rig.relay.state.withLock { $0.bodies } == [#"{"device_id": "\#(ServiceRig.idB)"}"#])
    }

    @Test("lost events (a gap in the ids) wake once and re-read every pair")
    func gapWakes() {
        let rig = ServiceRig(announce: false)
        rig.start()
        let reads = rig.syncthing.state.withLock { $0.seen.filter { $0 == "/rest/config/devices" }.count }
        rig.answer([(5, "FolderCompletion")])
        #expect(rig.logged(.eventGap).count == 1)
        #expect(rig.syncthing.state.withLock { $0.seen.filter { $0 == "/rest/config/devices" }.count } == reads + 1)
        rig.advance(seconds: 6)
        #expect(rig.reasons == [.resync])
    }

    @Test("a 401 re-reads config.xml; a new key is taken and polling goes on")
    func unauthorizedRereads() {
        let rig = ServiceRig(announce: false)
        rig.start()
        rig.syncthing.state.withLock { $0.apiKey = "n3w" }
        rig.onDisk.withLock { $0 = .success(ServiceRig.access(port: 8384, key: "n3w")) }
        // The held long-poll is answered 401.
        rig.runtime.releaseLongPoll()
        rig.advance(seconds: 10)
        #expect(rig.logged(.syncthingKeyReloaded).count == 1)
        #expect(rig.runtime.holdsLongPoll)
        rig.answer([(1, "LocalIndexUpdated")])
        rig.advance(seconds: 6)
        #expect(rig.reasons == [.change])
    }

    @Test("a key still rejected after the re-read at start exits 78 with the fatal lines")
    func rejectedKeyExits78() {
        let rig = ServiceRig()
        rig.syncthing.state.withLock { $0.apiKey = "other" }
        rig.start()
        #expect(rig.exits.withLock { $0 } == [NotifyCore.ExitStatus.configuration])
        #expect(rig.logged(.syncthingAuthFailed).count == 1)
        #expect(rig.fatalLines.withLock { $0 }.first?.contains("rejected the API key") == true)
    }

    @Test("a relay 404 at start exits 78 with the fatal lines")
    func relayNotFoundExits78() {
        let rig = ServiceRig()
        rig.relay.state.withLock { $0.health = 404 }
        rig.start()
        #expect(rig.exits.withLock { $0 } == [NotifyCore.ExitStatus.configuration])
        #expect(rig.logged(.relayEndpointMissing).count == 1)
        #expect(
            rig.fatalLines.withLock { $0 } == [App.fatalText(RelayClient.notFoundMessage, fix: RelayClient.notFoundFix)]
        )
        #expect(rig.triggers == 0)
    }

    @Test("a malformed Device ID exits 75")
    func malformedDeviceIDExits75() {
        let rig = ServiceRig()
        rig.syncthing.state.withLock { $0.myID = "not-a-device-id" }
        rig.start()
        #expect(rig.exits.withLock { $0 } == [NotifyCore.ExitStatus.temporary])
        #expect(rig.logged(.deviceIDMalformed).first?.fields == [.code(.syncthingMalformed)])
        #expect(rig.fatalLines.withLock { $0 }.isEmpty)
    }

    @Test("a stop before Syncthing answered logs what every idle stop logs, and exits 0")
    func stopBeforeStart() {
        let rig = ServiceRig()
        rig.syncthing.state.withLock { $0.down = true }
        rig.start()
        rig.advance(seconds: 3)
        rig.stop()
        #expect(rig.exits.withLock { $0 } == [NotifyCore.ExitStatus.ok])
        #expect(rig.stopRecords == Engine.idleStopRecords)
    }

    @Test("SIGHUP re-reads config.xml and takes a new address")
    func hangupRereads() {
        let rig = ServiceRig(announce: false)
        rig.start()
        rig.onDisk.withLock { $0 = .success(ServiceRig.access(port: 8385)) }
        rig.syncthing.state.withLock { $0.port = 8385 }
        rig.service.hangup()
        rig.runtime.drain()
        #expect(rig.logged(.configReloaded).count == 1)
        rig.answer([(1, "LocalIndexUpdated")])
        rig.advance(seconds: 6)
        #expect(rig.reasons == [.change])
        #expect(rig.logged(.syncthingUnavailable).isEmpty)
    }

    @Test("SIGHUP with nothing changed, or an unusable config.xml, keeps the access")
    func hangupUnchangedOrFailed() {
        let rig = ServiceRig(announce: false)
        rig.start()
        rig.service.hangup()
        rig.runtime.drain()
        rig.onDisk.withLock { $0 = .failure(.noAPIKey) }
        rig.service.hangup()
        rig.runtime.drain()
        #expect(rig.logged(.configReloadUnchanged).count == 1)
        #expect(rig.logged(.configReloadFailed).first?.fields == [.code(.configInvalid)])
        #expect(rig.syncthing.state.withLock { $0.ports.allSatisfy { $0 == 8384 } })
    }

    @Test("a GUI moved while the service runs: it stays unreachable, config.xml is re-read, the new address is taken")
    func followsMovedGUIWhenUnreachable() {
        let rig = ServiceRig(announce: false)
        rig.start()
        rig.onDisk.withLock { $0 = .success(ServiceRig.access(port: 8385)) }
        rig.syncthing.state.withLock { $0.port = 8385 }
        rig.runtime.releaseLongPoll()
        rig.advance(seconds: 4)
        #expect(rig.rereads == 0)
        rig.advance(seconds: 10)
        #expect(rig.rereads == 1)
        #expect(rig.logged(.syncthingAccessChanged).count == 1)
        #expect(rig.runtime.holdsLongPoll)
        rig.answer([(1, "LocalIndexUpdated")])
        rig.advance(seconds: 6)
        #expect(rig.reasons == [.change])
    }

    @Test("a GUI moved before the service connected: unreachable for 5 s re-reads config.xml, the new address is next")
    func followsMovedGUIWhileConnecting() {
        let rig = ServiceRig(announce: false)
        rig.onDisk.withLock { $0 = .success(ServiceRig.access(port: 8385)) }
        rig.syncthing.state.withLock { $0.port = 8385 }
        rig.start()
        #expect(rig.logged(.syncthingConnected).isEmpty)
        // Refused at 0, 0.5, 1.5, 3.5 and 7.5 s (0.5 s doubling): 7.5 s is the first 5 s or more after the first.
        #expect(Self.rereadTimes(rig, for: 10) == [.milliseconds(7500)])
        #expect(rig.logged(.syncthingAccessChanged).count == 1)
        let asked = rig.syncthing.state.withLock { $0.ports.count }
        rig.advance(seconds: 10)
        #expect(rig.logged(.syncthingConnected).count == 1)
        #expect(rig.syncthing.state.withLock { Array($0.ports.dropFirst(asked)) }.allSatisfy { $0 == 8385 })
        #expect(rig.runtime.holdsLongPoll)
    }

    @Test(
        "a GUI moved with a ConfigSaved: config.xml is re-read before the next request, which goes to the new address")
    func followsMovedGUIOnConfigSaved() {
        let rig = ServiceRig(announce: false)
        rig.start()
        rig.onDisk.withLock { $0 = .success(ServiceRig.access(port: 8385)) }
        rig.syncthing.state.withLock { $0.moveAfterPoll = 8385 }
        rig.answer([(1, "ConfigSaved")])
        #expect(rig.logged(.syncthingAccessChanged).count == 1)
        #expect(rig.logged(.syncthingUnavailable).isEmpty)
        #expect(rig.runtime.holdsLongPoll)
        rig.answer([(2, "LocalIndexUpdated")])
        rig.advance(seconds: 6)
        #expect(rig.reasons == [.change])
    }

    /// When config.xml was re-read, from the rig's start, sampling every 0.5 s (every retry falls on one) for
    /// `seconds`.
    static func rereadTimes(_ rig: ServiceRig, for seconds: Double) -> [Duration] {
        var times: [Duration] = []
        for _ in 0..<Int(seconds * 2) {
            rig.advance(seconds: 0.5)
            if rig.rereads > times.count { times.append(rig.elapsed) }
        }
        return times
    }

    @Test("Syncthing down for an hour with config.xml unchanged: re-read every 15 s, not at every retry")
    func unreachableRereadIsBounded() {
        let rig = ServiceRig(announce: false)
        rig.start()
        rig.takeSyncthingDown()
        let times = Self.rereadTimes(rig, for: 3600)
        let rereads = rig.rereads
        // Failures at 0, 0.5, 1.5, 3.5 and 7.5 s (backoff 0.5 s doubling), then every 5 s (its cap): the first one
        // 5 s or more into the outage re-reads (7.5 s), then every third one (15 s later): 1 + ⌊(3600 − 7.5) / 15⌋.
        #expect(rereads == 240)
        #expect(times == (0..<240).map { .milliseconds(7500 + 15_000 * $0) })
        #expect(rig.logged(.syncthingAccessChanged).isEmpty)
        rig.syncthing.state.withLock { $0.down = false }
        rig.advance(seconds: 6)
        #expect(rig.runtime.holdsLongPoll)
        rig.advance(seconds: 600)
        #expect(rig.rereads == rereads)
    }

    @Test(
        "on its Dispatch queues: a change wakes the relay once after the debounce, and a stop cuts the long-poll and exits 0"
    )
    func onDispatchQueues() {
        let syncthing = FakeSyncthingTransport(holdsPolls: true)
        let relay = FakeRelay()
        let exits = Locked<[NotifyCore.ExitStatus]>([])
        let exited = DispatchSemaphore(value: 0)
        let deps = Service.Dependencies(
            syncthing: SyncthingClient(transport: syncthing, access: ServiceRig.access(port: 8384)),
            relay: RelayClient(transport: relay, baseURL: "http://127.0.0.1:9000", clock: SystemClock()),
            cancelSyncthing: { syncthing.cancel() },
            rereadAccess: { .success(ServiceRig.access(port: 8384)) }, logger: Logger(sink: RecordingLogSink()))
        let settings = Engine.Settings(
            policy: WakePolicy.Settings(
                debounce: .milliseconds(50), startupAnnounce: false, staleRetrigger: nil, relayWindow: nil))
        let service = Service(dependencies: deps, settings: settings) { status in
            exits.withLock { $0.append(status) }
            exited.signal()
        }
        service.begin()
        #expect(Self.waitFor { syncthing.state.withLock { $0.longPolls } == 1 })
        syncthing.script(#"[{"id":1,"type":"LocalIndexUpdated","data":{"folder":"vault"}}]"#)
        #expect(Self.waitFor { relay.state.withLock { $0.triggerTimeouts.count } == 1 })
        service.requestStop()
        #expect(exited.wait(timeout: .now() + .seconds(10)) == .success)
        #expect(exits.withLock { $0 } == [.ok])
        #expect(relay.state.withLock { $0.triggerTimeouts.count } == 1)
    }

    /// Polls `condition` every 10 ms for up to 10 s.
    static func waitFor(_ condition: () -> Bool) -> Bool {
        for _ in 0..<1000 {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }
}
