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

    @Test("the long-poll's client timeout is its wait plus the request timeout")
    func pollTimeout() {
        let wait = Duration.seconds(Int64(SyncthingTimeouts.pollWaitSeconds))
        #expect(SyncthingTimeouts.pollRequest == wait + SyncthingTimeouts.request)
        #expect(SyncthingTimeouts.poll(waitSeconds: 0) == SyncthingTimeouts.request)
        #expect(SyncthingTimeouts.poll(waitSeconds: 7) == .seconds(7) + SyncthingTimeouts.request)
    }

    @Test("the long-poll's wait stays inside the 60 s within which Syncthing wants the next event request")
    func pollWaitUnderSixty() {
        #expect(SyncthingTimeouts.pollWaitSeconds > 0)
        #expect(SyncthingTimeouts.pollWaitSeconds < 60)
    }
}
