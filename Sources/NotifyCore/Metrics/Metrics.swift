/// The service's counters and timestamps for METRICS_FILE, derived from the engine's actions alone.
///
/// Pure: `observe(_:unixMilliseconds:)` is fed every `Engine.Action` before the service performs it (so before the
/// logger filters by LOG_LEVEL: a debug record counts at every level), together with the wall-clock time the caller
/// read. Every label is a closed enum (`WakeReason`, `RelayOutcomeCategory`, `ErrorCode`, `DecisionCause`); nothing
/// here can hold a Device ID, folder ID, path, URL or key. `MetricsExposition` renders it; `MetricsWriteThrottle` says when.
package struct Metrics: Sendable, Equatable {
    /// One wake-up's reason and the relay's answer to it.
    package struct WakeUp: Sendable, Hashable {
        package var reason: WakeReason
        package var outcome: RelayOutcomeCategory

        package init(_ reason: WakeReason, _ outcome: RelayOutcomeCategory) {
            self.reason = reason
            self.outcome = outcome
        }
    }

    /// False once the service has stopped (the last write at exit).
    package var up = true
    /// Triggers the relay answered (or that failed in transport), by reason and outcome.
    package var wakeUps: [WakeUp: Int] = [:]
    /// Syncthing events read past the cursor (`eventsReceived` records' `count`).
    package var eventsRead = 0
    /// The poll loop's failed requests to Syncthing, by error code: event polls and head reads
    /// (`eventPollFailed`), status reads while Syncthing is unreachable (`syncthingUnavailable`), a rejected API key
    /// (`syncthingAuthFailed`). One per failed round of the loop, whatever LOG_LEVEL lets through of them.
    package var pollFailures: [ErrorCode: Int] = [:]
    /// Wake-ups held until the relay's push window ended (`triggerHeldForWindow` records).
    package var windowDeferrals = 0
    /// The engine's decisions, by the rule that applied (`Engine.Action.decided`).
    package var decisions: [DecisionCause: Int] = [:]
    /// When the last event poll succeeded, in milliseconds since the Unix epoch; nil before the first.
    package var lastPollSuccess: Int64?
    /// When the relay last accepted a wake-up (2xx), in milliseconds since the Unix epoch; nil before the first.
    package var lastWakeUpDelivered: Int64?
    /// Goes up by one at every change, so that a writer can tell whether there is anything new to write.
    package private(set) var revision = 0
    /// The release this binary is (`--version`'s), for `vaultsync_notify_build_info`.
    package var version = ""
    /// When the process started, in milliseconds since the Unix epoch; nil when unknown (written as 0).
    package var processStart: Int64?

    /// The reason of the trigger in flight (from its `triggerSending` record): the relay's answer is counted under it.
    private var inFlight: WakeReason?

    package init() {}

    /// Fresh metrics of the binary `version`, started at `processStart` (milliseconds since the Unix epoch).
    package init(version: String, processStart: Int64?) {
        self.version = version
        self.processStart = processStart
    }

    /// Updates the metrics from one engine action.
    /// - Parameters:
    ///   - action: any action; those that carry nothing countable change nothing (and leave `revision` alone).
    ///   - unixMilliseconds: the wall-clock time of the action, milliseconds since the Unix epoch (the timestamps).
    package mutating func observe(_ action: Engine.Action, unixMilliseconds: Int64) {
        let before = self
        switch action {
        case .log(let record):
            observe(record)
        case .decided(let cause):
            decisions[cause, default: 0] += 1
        case .monitor(.pollSucceeded):
            lastPollSuccess = unixMilliseconds
        case .monitor(.relayOutcome(let outcome)):
            // One trigger is in flight at a time (WakePolicy), and its outcome comes before the next send.
            if let reason = inFlight {
                wakeUps[WakeUp(reason, RelayOutcomeCategory(outcome)), default: 0] += 1
                inFlight = nil
            }
            if case .delivered = outcome { lastWakeUpDelivered = unixMilliseconds }
        case .exit(let how):
            if how.farewell.contains(.metricsDown) { up = false }
        default:
            break
        }
        if !sameValues(before) { revision += 1 }
    }

    /// Whether the values a reader sees are those of `other` (the trigger in flight is not one of them).
    private func sameValues(_ other: Metrics) -> Bool {
        var mine = self
        var theirs = other
        mine.inFlight = nil
        theirs.inFlight = nil
        theirs.revision = mine.revision
        return mine == theirs
    }

    private mutating func observe(_ record: LogRecord) {
        switch record.message {
        case .triggerSending:
            inFlight = record.reason
        case .eventsReceived:
            eventsRead += record.int(.count) ?? 0
        case .eventPollFailed, .syncthingUnavailable, .syncthingAuthFailed:
            // The early-empty-answer record carries no code: Syncthing answered, nothing failed.
            if let code = record.code { pollFailures[code, default: 0] += 1 }
        case .triggerHeldForWindow:
            windowDeferrals += 1
        default:
            break
        }
    }
}

extension LogRecord {
    fileprivate var reason: WakeReason? {
        for field in fields { if case .reason(let reason) = field.value { return reason } }
        return nil
    }

    fileprivate var code: ErrorCode? {
        for field in fields { if case .error(let code) = field.value, field.key == .code { return code } }
        return nil
    }

    fileprivate func int(_ key: LogKey) -> Int? {
        for field in fields { if case .int(let value) = field.value, field.key == key { return value } }
        return nil
    }
}
