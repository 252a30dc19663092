import NotifyCore
import Testing

@testable import NotifyRuntime
@testable import NotifyTestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The real `Service` against a relay that does not simply accept: every answer the relay defines for a trigger
/// (README.md, "Relay answers"), its outages, and the shutdown flush, on virtual time (`ServiceRig`). Times are
/// from the rig's start; the announce goes out at 0.
@Suite("The real service and the relay's answers")
struct ServiceRelayTests {
    static func at(_ seconds: Double) -> Duration { .milliseconds(Int64(seconds * 1000)) }

    @Test(
        "a 429 holds the wake-up for its Retry-After (delta-seconds, or an HTTP-date clamped to 1 s … 1 h), then sends it once",
        arguments: [("120", 120.0), ("Fri, 01 Jan 2100 00:00:00 GMT", 3600), ("Sun, 06 Nov 1994 08:49:37 GMT", 1)])
    func rateLimitedWaitsForRetryAfter(header: String, wait: Double) {
        let rig = ServiceRig()
        rig.relay.state.withLock { $0.triggers = [.status(429, retryAfter: header)] }
        rig.start()
        rig.advance(seconds: wait - 0.1)
        #expect(rig.triggerTimes == [.zero])
        rig.advance(seconds: 0.1)
        #expect(rig.triggerTimes == [.zero, Self.at(wait)])
        #expect(rig.logged(.triggerRateLimited).first?.fields.contains(.delay(Self.at(wait))) == true)
        rig.advance(seconds: 7200)
        #expect(rig.reasons == [.announce])
        #expect(rig.exits.withLock { $0 }.isEmpty)
    }

    @Test("a 429 whose Retry-After is an HTTP-date 90 s after the host's wall clock holds the wake-up 90 s")
    func rateLimitedUntilADate() {
        let rig = ServiceRig()
        // The relay's answer has no Date header: the date is read against the host's wall clock, the rig's, which
        // reads 1_718_000_000 at the start; the system's clock would put the date years in the past (a 1 s wait).
        let date = "Mon, 10 Jun 2024 06:14:50 GMT"
        #expect(RetryAfter.httpDate(date) == rig.runtime.unixSeconds() + 90)
        rig.relay.state.withLock { $0.triggers = [.status(429, retryAfter: date)] }
        rig.start()
        rig.advance(seconds: 89.9)
        #expect(rig.triggerTimes == [.zero])
        rig.advance(seconds: 0.1)
        #expect(rig.triggerTimes == [.zero, .seconds(90)])
        #expect(rig.logged(.triggerRateLimited).first?.fields.contains(.delay(.seconds(90))) == true)
        #expect(rig.reasons == [.announce])
    }

    @Test("a Retry-After date is read against the wall clock of its answer: a clock stepped 30 s on waits 60 s")
    func rateLimitedUntilADateAfterAStep() {
        let rig = ServiceRig()
        rig.runtime.stepWallClock(by: .seconds(30))
        rig.relay.state.withLock { $0.triggers = [.status(429, retryAfter: "Mon, 10 Jun 2024 06:14:50 GMT")] }
        rig.start()
        rig.advance(seconds: 100)
        #expect(rig.triggerTimes == [.zero, .seconds(60)])
    }

    @Test(
        "400–403 (no active subscription): the service keeps running, re-checks every 60 s, and resumes when it is back",
        arguments: [400, 401, 402, 403])
    func noSubscriptionRechecksEveryMinute(status: Int) {
        let rig = ServiceRig()
        rig.relay.state.withLock { $0.triggers = [.status(status), .status(status)] }
        rig.start()
        rig.advance(seconds: 600)
        #expect(rig.triggerTimes == [.zero, .seconds(60), .seconds(120)])
        #expect(rig.logged(.triggerSubscriptionInactive).count == 2)
        #expect(rig.reasons == [.announce])
        #expect(rig.exits.withLock { $0 }.isEmpty)
        // Resumed: a change wakes as usual (it arrives at 602, after the long-poll's 2 s).
        rig.answer([(1, "LocalIndexUpdated")])
        rig.advance(seconds: 10)
        #expect(rig.triggerTimes.last == .seconds(607))
        #expect(rig.reasons == [.announce, .change])
    }

    @Test("relay unreachable, then 5xx: backoff with full jitter (1 s doubling), one delivery once it answers")
    func unreachableRelayBacksOffWithJitter() {
        let rig = ServiceRig()
        rig.jitter.withLock { $0 = 0.25 }
        rig.relay.state.withLock { $0.triggers = [.failure(.connect), .status(503), .status(502)] }
        rig.start()
        rig.advance(seconds: 600)
        // Delays are jitter × ceiling: 0.25 × 1 s, 0.25 × 2 s, 0.25 × 4 s.
        #expect(rig.triggerTimes == [.zero, Self.at(0.25), Self.at(0.75), Self.at(1.75)])
        #expect(rig.logged(.triggerFailed).count == 3)
        #expect(rig.reasons == [.announce])
        #expect(rig.exits.withLock { $0 }.isEmpty)
    }

    @Test("a relay 404 after its health check answered is an outage: backed off like a 5xx, the wake-up kept, no exit")
    func notFoundAfterHealthyStartIsAnOutage() {
        let rig = ServiceRig()
        rig.relay.state.withLock { $0.triggers = [.status(404), .status(404)] }
        rig.start()
        rig.advance(seconds: 600)
        // 0.5 × 1 s, then 0.5 × 2 s.
        #expect(rig.triggerTimes == [.zero, Self.at(0.5), Self.at(1.5)])
        #expect(rig.logged(.relayEndpointMissingOutage).count == 2)
        #expect(rig.logged(.relayEndpointMissing).isEmpty)
        #expect(rig.reasons == [.announce])
        #expect(rig.exits.withLock { $0 }.isEmpty)
    }

    @Test("a relay 404 to the first trigger when the health check did not answer ok: a wrong RELAY_URL, exit 78")
    func notFoundBeforeTheRelayAnsweredExits78() {
        let rig = ServiceRig()
        rig.relay.state.withLock {
            $0.health = 503
            $0.triggers = [.status(404)]
        }
        rig.start()
        #expect(rig.logged(.relayUnhealthy).count == 1)
        #expect(rig.triggerTimes == [.zero])
        #expect(rig.exits.withLock { $0 } == [NotifyCore.ExitStatus.configuration])
        #expect(rig.exits.withLock { $0 }.first?.rawValue == 78)
        #expect(rig.records.filter { $0.level == .error }.map(\.message) == [.relayEndpointMissing])
        rig.advance(seconds: 10)
        #expect(rig.triggers == 1)
        #expect(
            rig.fatalLines.withLock { $0 } == [App.fatalText(RelayClient.notFoundMessage, fix: RelayClient.notFoundFix)]
        )
    }

    @Test("a stop during the debounce sends the wake-up at once, with what is left of the grace, then exits 0")
    func stopFlushesWithinGrace() {
        let rig = ServiceRig(announce: false)
        rig.start()
        // The change arrives at 2 (the long-poll's 2 s); the stop comes at 3, in its debounce.
        rig.answer([(1, "LocalIndexUpdated")])
        rig.advance(seconds: 1)
        rig.stop()
        #expect(rig.logged(.shutdownFlushing).count == 1)
        #expect(rig.triggerTimes == [.seconds(3)])
        // The grace (5 s) less the exit margin (0.5 s).
        #expect(rig.relay.state.withLock { $0.triggerTimeouts } == [.milliseconds(4500)])
        #expect(rig.reasons == [.change])
        #expect(rig.exits.withLock { $0 } == [NotifyCore.ExitStatus.ok])
        #expect(rig.logged(.stopped).map(\.level) == [.info])
    }

    @Test("a stop whose flush fails exits 0 at once and says a wake-up was left pending")
    func stopWithFailedFlushSaysPending() {
        let rig = ServiceRig(announce: false)
        rig.relay.state.withLock { $0.triggers = [.status(503)] }
        rig.start()
        rig.answer([(1, "LocalIndexUpdated")])
        rig.stop()
        #expect(rig.triggerTimes == [.seconds(2)])
        #expect(rig.exits.withLock { $0 } == [NotifyCore.ExitStatus.ok])
        #expect(rig.logged(.stopped).first?.fields == [LogField(.pending, .bool(true))])
    }

    @Test("a stop while the relay's Retry-After runs past the grace exits 0 at once, the wake-up left pending")
    func stopDuringLongRetryAfterExitsAtOnce() {
        let rig = ServiceRig()
        rig.relay.state.withLock { $0.triggers = [.status(429, retryAfter: "120")] }
        rig.start()
        rig.advance(seconds: 10)
        rig.stop()
        #expect(rig.triggerTimes == [.zero])
        #expect(rig.exits.withLock { $0 } == [NotifyCore.ExitStatus.ok])
        #expect(rig.logged(.stopped).first?.fields == [LogField(.pending, .bool(true))])
    }

    @Test("a stop with nothing pending, while a long-poll is held, cuts it and exits 0 at once")
    func idleStopExitsAtOnce() {
        let rig = ServiceRig()
        rig.start()
        rig.advance(seconds: 30)
        rig.stop()
        #expect(rig.exits.withLock { $0 } == [NotifyCore.ExitStatus.ok])
        #expect(rig.stopRecords == Engine.idleStopRecords)
        #expect(rig.triggerTimes == [.zero])
    }

    @Test("a stop while Syncthing is unreachable exits 0 with the usual records")
    func stopWhileSyncthingUnreachable() {
        let rig = ServiceRig(announce: false)
        rig.start()
        rig.takeSyncthingDown()
        rig.advance(seconds: 20)
        #expect(rig.logged(.syncthingUnavailable).filter { $0.level == .warn }.count == 1)
        rig.stop()
        #expect(rig.exits.withLock { $0 } == [NotifyCore.ExitStatus.ok])
        #expect(rig.stopRecords == Engine.idleStopRecords)
    }

    @Test("the service's watchdog pings on virtual time while Syncthing answers, and stops when the loop goes quiet")
    func watchdogOnVirtualTime() throws {
        let receiver = try DatagramReceiver(abstract: "vsn-swd-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        let rig = ServiceRig(announce: false, notifySocket: receiver.notifySocket, watchdog: .seconds(15))
        rig.start()
        #expect(receiver.receive() == "STATUS=connecting to Syncthing")
        #expect(receiver.receive() == "READY=1\nSTATUS=watching Syncthing events")
        rig.advance(seconds: 0)  // the first tick, due at the start
        #expect(receiver.receive() == "WATCHDOG=1")
        for _ in 0..<4 {
            // The long-poll answers 10 s after the tick (its answer takes 2 s); the next tick 3 s later pings.
            rig.advance(seconds: 10)
            rig.answer("[]")
            rig.advance(seconds: 3)
            #expect(receiver.receive() == "WATCHDOG=1")
        }
        // A held long-poll is no step in flight on the rig: 18 s without one, and the tick says nothing.
        rig.advance(seconds: 15)
        #expect(receiver.receive(timeout: .milliseconds(200)) == nil)
    }

    @Test("systemd and the state file: connecting, READY after the first poll, the relay's state, STOPPING")
    func serviceManagerProtocol() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let receiver = try DatagramReceiver(abstract: "vsn-svc-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        let stateFile = StateFile(path: dir.file("state"))
        let rig = ServiceRig(announce: false, notifySocket: receiver.notifySocket, stateFile: stateFile)
        rig.relay.state.withLock { $0.triggers = [.status(402)] }
        rig.start()
        #expect(receiver.receive() == "STATUS=connecting to Syncthing")
        // The head read is the first successful event poll.
        #expect(receiver.receive() == "READY=1\nSTATUS=watching Syncthing events")
        #expect(stateFile.read().state?.healthcheckFields == ServiceState(lastPoll: 1_718_000_000, relay: .none))
        // A change at 2 s goes out at 7 s and finds no subscription.
        rig.answer([(1, "LocalIndexUpdated")])
        rig.advance(seconds: 6)
        #expect(receiver.receive() == "STATUS=watching; no active relay subscription for this server yet")
        // The new category is written with the answer, at once (the last poll still the one at 2 s).
        #expect(stateFile.read().state?.healthcheckFields == ServiceState(lastPoll: 1_718_000_002, relay: .inactive))
        #expect(stateFile.read().state?.relayState == .waiting(.inactiveRecheck, until: 1_718_000_067))
        // The next poll (at 8 s, answered at 10 s) brings nothing new within 10 s of that write: throttled.
        rig.answer("[]")
        #expect(stateFile.read().state?.lastPoll == 1_718_000_002)
        rig.stop()
        #expect(receiver.receive() == "STOPPING=1\nSTATUS=stopping")
        #expect(rig.exits.withLock { $0 } == [NotifyCore.ExitStatus.ok])
    }
}
