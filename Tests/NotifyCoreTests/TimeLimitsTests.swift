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

    @Test("every long-poll's limit outlasts its wait by the request limit; a full one ends before 60 s + that")
    func pollTimeout() {
        for wait in 0...SyncthingTimeouts.pollWaitSeconds {
            // Syncthing holds the request for up to `wait` without a byte: the client may not cut it sooner, and
            // once the wait is over it allows what any other request gets.
            let limit = SyncthingTimeouts.poll(waitSeconds: wait)
            #expect(limit - .seconds(Int64(wait)) == SyncthingTimeouts.request, "wait \(wait) s")
        }
        #expect(
            SyncthingTimeouts.pollRequest - .seconds(Int64(SyncthingTimeouts.pollWaitSeconds))
                == SyncthingTimeouts.request)
        // A full long-poll, limit included, is over before Syncthing's 60 s plus one request's allowance.
        #expect(SyncthingTimeouts.pollRequest < .seconds(60) + SyncthingTimeouts.request)
    }

    @Test("the long-poll's wait stays inside the 60 s within which Syncthing wants the next event request")
    func pollWaitUnderSixty() {
        #expect(SyncthingTimeouts.pollWaitSeconds > 0)
        #expect(SyncthingTimeouts.pollWaitSeconds < 60)
    }
}
