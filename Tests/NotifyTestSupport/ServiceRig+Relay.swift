import NotifyCore
import NotifyRuntime

extension ServiceRig {
    /// Every trigger's answer comes `latency` after it was sent, on the virtual clock; timers fire meanwhile.
    func relayAnswers(after latency: Duration) {
        let runtime = runtime
        relay.state.withLock {
            $0.latency = latency
            $0.holdAnswer = { runtime.deferNextEngineWork(by: $0) }
        }
    }

    /// The relay swallows a trigger within `window` of its last push.
    func relayPushWindow(_ window: Duration, receivesFailures: Bool = false) {
        relay.state.withLock {
            $0.pushWindow = window
            $0.receivesFailures = receivesFailures
        }
    }

    /// The time since the rig's start.
    var elapsed: Duration { runtime.now() - Self.t0 }

    /// Advances the virtual clock to `seconds` from the rig's start.
    func advance(to seconds: Double) { runtime.advance(by: .milliseconds(Int64(seconds * 1000)) - elapsed) }

    /// Syncthing answers the held long-poll with one local change of id `id` (ids follow on from the last).
    func change(_ id: Int) { answer([(id, "LocalIndexUpdated")]) }

    /// A change of each id in `ids`, one every `seconds`, the first now; the clock ends `seconds` after the last.
    func changes(_ ids: ClosedRange<Int>, every seconds: Double) {
        for id in ids {
            change(id)
            advance(seconds: seconds)
        }
    }

    /// The phone is offline and needs data: every stale-peer sweep finds it so.
    func phoneOfflineNeedingData() {
        syncthing.state.withLock {
            $0.phoneConnected = false
            $0.phoneNeedBytes = 4096
        }
    }

    /// Syncthing answers the held long-poll with an event past a gap after `last` (events were lost): a re-sync.
    func gap(after last: Int) { answer([(last + 2, "Ping")]) }

    /// Exit statuses so far.
    var exitStatuses: [NotifyCore.ExitStatus] { exits.withLock { $0 } }
}
