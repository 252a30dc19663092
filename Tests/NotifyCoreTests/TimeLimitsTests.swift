import Testing

@testable import NotifyCore

@Suite("Time limits agree with each other")
struct TimeLimitsTests {
    @Test("the poll loop's backoff cap stays under the watchdog's idle limit")
    func backoffUnderIdleLimit() {
        #expect(PollLoop.backoff.cap < WatchdogLiveness.defaultIdleLimit)
    }

    @Test("a poll thread idle through every backoff wait, however many failures, still earns its ping")
    func backoffWaitsKeepTheWatchdogFed() {
        let start = Instant.seconds(100)
        for failures in 1...40 {
            var liveness = WatchdogLiveness(now: .zero)
            liveness.stepStarted(now: .seconds(99), bound: SyncthingTimeouts.request)
            liveness.stepFinished(now: start)
            let wait = PollLoop.backoff.ceiling(afterFailures: failures)
            #expect(wait <= PollLoop.backoff.cap)
            #expect(liveness.isAlive(now: start + wait), "after \(failures) failures")
        }
    }

    @Test("every long-poll's limit outlasts the wait Syncthing may hold it for by a whole request's allowance")
    func pollOutlastsItsWait() {
        for wait in 0...SyncthingTimeouts.pollWaitSeconds {
            // Syncthing sends nothing until `timeout=wait` has passed; after that, answering is an ordinary request.
            let held = Duration.seconds(Int64(wait))
            #expect(SyncthingTimeouts.poll(waitSeconds: wait) >= held + SyncthingTimeouts.request, "wait \(wait) s")
        }
        #expect(
            SyncthingTimeouts.pollRequest
                >= .seconds(Int64(SyncthingTimeouts.pollWaitSeconds)) + SyncthingTimeouts.request)
    }

    @Test("a full long-poll that runs to its limit keeps the watchdog fed; one stuck past its bound does not")
    func fullPollUnderTheWatchdog() {
        for addresses in 1...3 {
            let start = Instant.seconds(100)
            var liveness = WatchdogLiveness(now: start)
            // The bound the service announces for a long-poll (ServiceIO's syncthingBound).
            let bound = SyncthingTimeouts.worstCase(SyncthingTimeouts.pollRequest, addresses: addresses)
            liveness.stepStarted(now: start, bound: bound)
            #expect(liveness.isAlive(now: start + SyncthingTimeouts.pollRequest), "\(addresses) addresses")
            #expect(liveness.isAlive(now: start + bound), "\(addresses) addresses")
            #expect(!liveness.isAlive(now: start + bound + liveness.grace + .seconds(1)), "\(addresses) addresses")
        }
    }

    @Test("the long-poll's wait stays inside the 60 s within which Syncthing wants the next event request")
    func pollWaitUnderSixty() {
        #expect(SyncthingTimeouts.pollWaitSeconds > 0)
        #expect(SyncthingTimeouts.pollWaitSeconds < 60)
    }
}
