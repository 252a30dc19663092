/// The running service's progress as `--healthcheck` and `--status` read it from the state file (`StateFile`). Pure:
/// no clock reads, no I/O. Holds no identifier: times, counts and categories.

/// What the state file holds.
///
/// Text form (`encoded()`), UTF-8, one `key=value` per line after a version line; times are wall-clock seconds
/// since the Unix epoch (CLOCK_REALTIME: `--healthcheck` and `--status` are other processes, so the service's
/// monotonic clock means nothing to them):
/// ```
/// vaultsync-notify-state 1
/// last_poll=1718000000
/// relay=delivered
/// started=1717990000
/// updated=1718000004
/// syncthing=reachable
/// folders=2
/// devices=1
/// last_wake=1717999990
/// last_wake_reason=change
/// relay_state=window
/// relay_until=1718000020
/// pending=change
/// pending_at=1718000020
/// next_sweep=1718011600
/// recent=7 1717999990 1 change 1 - answered - delivered
/// recent=8 1718000004 2 change 1 - held 1718000020 window
/// ```
/// - `last_poll`: the last successful event poll; absent before the first. `relay`: the last relay answer's
///   category (`RelayOutcomeCategory`), also the answer to `last_wake`. These two are all that `--healthcheck`
///   reads, and all that the first writers wrote.
/// - `started`: when the service started. `updated`: when the file was written (the service writes it at least
///   every long-poll, also while Syncthing is unreachable, so an old `updated` means no service is running).
/// - `syncthing`: `reachable` or `unreachable` (the service's last Syncthing request).
/// - `folders`, `devices`: watched folders shared with at least one remote device, and how many distinct devices
///   that is; absent until the service has read Syncthing's config.
/// - `last_wake`, `last_wake_reason`: when the relay answered the last trigger, and why it was sent (`WakeReason`).
/// - `relay_state`: `open`, `inactive` (no active subscription; re-check at `relay_until`), `backoff`, `rate-limited`
///   or `window` (the push window after an accepted trigger), each but `open` with `relay_until`.
/// - `pending`: the reason of a wake-up not answered yet; `pending_at`: when it goes out (absent: posted, the answer
///   awaited).
/// - `next_sweep`: the next stale-peer sweep, `off` (STALE_RETRIGGER_SECONDS=0) or `none` (not armed).
/// - `recent`: one line per entry of the engine's last decisions (`Decision`, at most `DecisionLog.capacity`),
///   oldest first: serial, time, count, cause (`DecisionCause`), devices, the answered trigger's reason
///   (`WakeReason`), the outcome's kind (`DecisionOutcome.kind`), its time, and what held it or the relay's answer
///   (`RelayWait`, `window`, or `RelayOutcomeCategory`); `-` where a field has no value. A line that does not parse
///   is skipped.
/// - `config_wait_until`: written at start, before config.xml is found: when the wait for it ends (then exit 75 and
///   the service manager's restart). Gone once the service runs.
/// - `pid`, `pid_start`: the writing process and its start (`ServiceWriter`), written only by a service that holds
///   the lock file beside the state file (`state-<key>.lock`) for its whole life. A reader then knows at once
///   whether the writer still lives (`liveness`); a file without `pid` (an older writer) keeps the age rule.
///
/// The header stays `1`: every key after `relay` came later, and a reader skips keys it does not know, so an older
/// `--healthcheck` reads a newer file as before. A value of a later key that does not parse (a newer writer's new
/// category) leaves that field unknown instead of failing the file; `last_poll` and `relay` stay strict.
///
/// Syncthing's version is not here: the poll loop never asks for it; `--status` asks `/rest/system/version` itself.
package struct ServiceState: Sendable, Equatable {
    /// The first line of the file; a different version is not read.
    package static let header = "vaultsync-notify-state 1"
    /// Largest file `decode` accepts, in bytes.
    package static let maxBytes = 4096

    /// Unix seconds of the last successful event poll; nil before the first.
    package var lastPoll: Int64?
    /// The last relay answer.
    package var relay: RelayOutcomeCategory
    /// Unix seconds the service started; nil from a writer that did not record it.
    package var started: Int64?
    /// While the service waits for config.xml at start: when that wait ends (Unix seconds).
    package var configWaitUntil: Int64?
    /// Unix seconds of the write.
    package var updated: Int64?
    /// Whether the service's last Syncthing request succeeded.
    package var syncthingReachable: Bool?
    /// Watched folders shared with at least one remote device.
    package var sharedFolders: Int?
    /// Distinct remote devices those folders are shared with.
    package var sharedDevices: Int?
    /// The relay's state when the file was written.
    package var relayState: RelayGate<Int64>?
    /// A wake-up the relay has not answered yet.
    package var pending: PendingWake<Int64>?
    /// The last trigger the relay answered; its answer is written as `relay` (and read back from it).
    package var lastWake: LastWake<Int64>?
    package var sweep: SweepSchedule<Int64>?
    /// The engine's last decisions, oldest first, each stamped with the wall clock when the service first saw it.
    package var recent: [Decision<Int64>] = []
    /// The process that writes the file while holding its lock; nil from a writer without the lock.
    package var writer: ServiceWriter?

    package init(
        lastPoll: Int64? = nil, relay: RelayOutcomeCategory = .none, started: Int64? = nil, updated: Int64? = nil,
        syncthingReachable: Bool? = nil, sharedFolders: Int? = nil, sharedDevices: Int? = nil,
        relayState: RelayGate<Int64>? = nil, pending: PendingWake<Int64>? = nil, lastWake: LastWake<Int64>? = nil,
        sweep: SweepSchedule<Int64>? = nil, configWaitUntil: Int64? = nil, writer: ServiceWriter? = nil
    ) {
        self.writer = writer
        self.configWaitUntil = configWaitUntil
        self.lastPoll = lastPoll
        self.relay = relay
        self.started = started
        self.updated = updated
        self.syncthingReachable = syncthingReachable
        self.sharedFolders = sharedFolders
        self.sharedDevices = sharedDevices
        self.relayState = relayState
        self.pending = pending
        self.lastWake = lastWake
        self.sweep = sweep
    }

    /// Takes the engine's `progress` at monotonic `now`, when the wall clock reads `wallNow`: every instant becomes
    /// Unix seconds, rounded to the nearest second.
    package mutating func record(_ progress: Engine.Progress, now: Instant, wallNow: Int64) {
        func wall(_ instant: Instant) -> Int64 {
            let ms = (instant - now) / .milliseconds(1)
            return wallNow + Int64((ms / 1000).rounded())
        }
        sharedFolders = progress.sharedFolders
        sharedDevices = progress.sharedDevices
        relayState = progress.wake.relay.map(wall)
        pending = progress.wake.pending?.map(wall)
        lastWake = progress.wake.lastWake?.map(wall)
        sweep = progress.wake.sweep.map(wall)
        // An entry keeps the wall time it was first seen with (the service reports progress after every input, so
        // that is when it was decided), so a later suspend or clock step does not move what already happened.
        // Both lists are in serial order (the engine's ring drops the oldest first): one pass, no lookup table.
        var old = recent.startIndex
        var merged: [Decision<Int64>] = []
        merged.reserveCapacity(progress.recent.count)
        for entry in progress.recent {
            while old < recent.endIndex, recent[old].serial < entry.serial { old += 1 }
            if old < recent.endIndex, recent[old].serial == entry.serial, recent[old].count == entry.count {
                merged.append(recent[old])
            } else {
                merged.append(entry.map(wall))
            }
        }
        recent = merged
    }

    /// The state without what changes at every poll or batch (the poll and write times, a pending wake-up's moving
    /// debounce end): two states with the same `significant` differ in nothing an operator needs at once
    /// (`StateWriteThrottle`, which asks `isSignificantlyEqual(to:)`, the same comparison without the copy).
    package var significant: ServiceState {
        var copy = self.withoutMovingParts
        copy.recent = recent.map(Self.significant)
        return copy
    }

    /// Whether `self.significant == other.significant`, without building either (the throttle asks at every report).
    package func isSignificantlyEqual(to other: ServiceState) -> Bool {
        guard recent.count == other.recent.count else { return false }
        for (a, b) in zip(recent, other.recent) where Self.significant(a) != Self.significant(b) { return false }
        var mine = withoutMovingParts
        var theirs = other.withoutMovingParts
        mine.recent = []
        theirs.recent = []
        return mine == theirs
    }

    private var withoutMovingParts: ServiceState {
        var copy = self
        copy.lastPoll = nil
        copy.updated = nil
        if case .scheduled(let reason, _) = pending { copy.pending = .scheduled(reason, at: 0) }
        return copy
    }

    /// A new entry is significant; one folded into the last (a progress report repeated) waits for the next write.
    private static func significant(_ entry: Decision<Int64>) -> Decision<Int64> {
        var entry = entry.map { _ in Int64(0) }
        entry.count = 1
        return entry
    }

    /// The file's text (see the type's documentation), ending in a newline.
    package func encoded() -> String {
        var text = Self.header + "\n"
        if let lastPoll { text += "last_poll=\(lastPoll)\n" }
        text += "relay=\(relay.rawValue)\n"
        if let started { text += "started=\(started)\n" }
        if let configWaitUntil { text += "config_wait_until=\(configWaitUntil)\n" }
        if let updated { text += "updated=\(updated)\n" }
        if let syncthingReachable { text += "syncthing=\(syncthingReachable ? "reachable" : "unreachable")\n" }
        if let sharedFolders { text += "folders=\(sharedFolders)\n" }
        if let sharedDevices { text += "devices=\(sharedDevices)\n" }
        if let lastWake { text += "last_wake=\(lastWake.at)\nlast_wake_reason=\(lastWake.reason.rawValue)\n" }
        switch relayState {
        case nil: break
        case .open: text += "relay_state=open\n"
        case .waiting(let kind, let until): text += "relay_state=\(kind.rawValue)\nrelay_until=\(until)\n"
        case .window(let until): text += "relay_state=window\nrelay_until=\(until)\n"
        }
        switch pending {
        case nil: break
        case .scheduled(let reason, let at): text += "pending=\(reason.rawValue)\npending_at=\(at)\n"
        case .sending(let reason): text += "pending=\(reason.rawValue)\n"
        }
        switch sweep {
        case nil: break
        case .off: text += "next_sweep=off\n"
        case .notScheduled: text += "next_sweep=none\n"
        case .at(let at): text += "next_sweep=\(at)\n"
        }
        for entry in recent { text += "recent=" + Self.encode(entry) + "\n" }
        if let writer {
            text += "pid=\(writer.pid)\n"
            if let start = writer.start { text += "pid_start=\(start)\n" }
        }
        return text
    }

    /// Parses `encoded()` text. Unknown keys are skipped (a newer writer may add some); a wrong header, a
    /// malformed `last_poll` or `relay`, or more than `maxBytes` gives nil. A later key whose value does not parse
    /// leaves its field nil.
    package static func decode(_ text: String) -> ServiceState? {
        guard text.utf8.count <= maxBytes else { return nil }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true)
        guard lines.first == Substring(header) else { return nil }
        lines.removeFirst()
        var state = ServiceState()
        var values: [Substring: Substring] = [:]
        var recent: [Decision<Int64>] = []
        for line in lines {
            guard let eq = line.firstIndex(of: "=") else { return nil }
            let key = line[..<eq]
            let value = line[line.index(after: eq)...]
            switch key {
            case "last_poll":
                guard let seconds = unixSeconds(value) else { return nil }
                state.lastPoll = seconds
            case "relay":
                guard let category = RelayOutcomeCategory(rawValue: String(value)) else { return nil }
                state.relay = category
            case "recent":
                if recent.count < DecisionLog.capacity, let entry = decodeDecision(value) { recent.append(entry) }
            default:
                values[key] = value
            }
        }
        let seconds = { (key: Substring) in values[key].flatMap(unixSeconds) }
        let reason = { (key: Substring) in values[key].flatMap { WakeReason(rawValue: String($0)) } }
        state.started = seconds("started")
        state.configWaitUntil = seconds("config_wait_until")
        state.updated = seconds("updated")
        state.syncthingReachable = values["syncthing"].flatMap {
            $0 == "reachable" ? true : $0 == "unreachable" ? false : nil
        }
        state.sharedFolders = seconds("folders").flatMap { Int(exactly: $0) }
        state.sharedDevices = seconds("devices").flatMap { Int(exactly: $0) }
        if let at = seconds("last_wake"), let why = reason("last_wake_reason") {
            state.lastWake = LastWake(at: at, reason: why, answer: state.relay)
        }
        switch values["relay_state"] {
        case "open": state.relayState = .open
        case "window": state.relayState = seconds("relay_until").map { .window(until: $0) }
        case let kind?:
            if let wait = RelayWait(rawValue: String(kind)), let until = seconds("relay_until") {
                state.relayState = .waiting(wait, until: until)
            }
        case nil: break
        }
        if let why = reason("pending") {
            state.pending = seconds("pending_at").map { .scheduled(why, at: $0) } ?? .sending(why)
        }
        switch values["next_sweep"] {
        case "off": state.sweep = .off
        case "none": state.sweep = .notScheduled
        case let value?: state.sweep = unixSeconds(value).map { .at($0) }
        case nil: break
        }
        state.recent = recent
        if let pid = seconds("pid").flatMap({ Int32(exactly: $0) }), pid > 0 {
            state.writer = ServiceWriter(pid: pid, start: seconds("pid_start"))
        }
        return state
    }

    /// One `recent` line's value (see the type's documentation).
    private static func encode(_ entry: Decision<Int64>) -> String {
        let extra: String
        switch entry.outcome {
        case .held(.waiting(let wait, _)): extra = wait.rawValue
        case .held(.window): extra = "window"
        case .answered(let answer, _): extra = answer.rawValue
        default: extra = "-"
        }
        return [
            String(entry.serial), String(entry.at), String(entry.count), entry.cause.rawValue,
            entry.devices.map(String.init) ?? "-", entry.reason?.rawValue ?? "-", entry.outcome.kind,
            entry.outcome.time.map(String.init) ?? "-", extra,
        ].joined(separator: " ")
    }

    /// Parses one `recent` line's value; nil when any field is malformed.
    private static func decodeDecision(_ value: Substring) -> Decision<Int64>? {
        let f = value.split(separator: " ", omittingEmptySubsequences: false)
        guard f.count == 9, let serial = unixSeconds(f[0]).flatMap({ Int(exactly: $0) }), let at = unixSeconds(f[1]),
            let count = unixSeconds(f[2]).flatMap({ Int(exactly: $0) }), count >= 1,
            let cause = DecisionCause(rawValue: String(f[3]))
        else { return nil }
        let devices = f[4] == "-" ? nil : unixSeconds(f[4]).flatMap { Int(exactly: $0) }
        if f[4] != "-" && devices == nil { return nil }
        let reason = f[5] == "-" ? nil : WakeReason(rawValue: String(f[5]))
        if f[5] != "-" && reason == nil { return nil }
        let time = f[7] == "-" ? nil : unixSeconds(f[7])
        if f[7] != "-" && time == nil { return nil }
        let outcome: DecisionOutcome<Int64>
        switch (f[6], time) {
        case ("not-woken", nil): outcome = .notWoken
        case ("scheduled", let at?): outcome = .scheduled(at: at)
        case ("held", let until?):
            if f[8] == "window" {
                outcome = .held(.window(until: until))
            } else if let wait = RelayWait(rawValue: String(f[8])) {
                outcome = .held(.waiting(wait, until: until))
            } else {
                return nil
            }
        case ("after-in-flight", nil): outcome = .afterInFlight
        case ("sent", nil): outcome = .sent
        case ("already-woken", nil): outcome = .alreadyWoken
        case ("deferred", nil): outcome = .deferred
        case ("answered", let retryAt):
            guard let answer = RelayOutcomeCategory(rawValue: String(f[8])) else { return nil }
            outcome = .answered(answer, retryAt: retryAt)
        default: return nil
        }
        return Decision(
            serial: serial, at: at, cause: cause, devices: devices, reason: reason, outcome: outcome, count: count)
    }

    /// Decimal digits only, at most 19 of them, as a non-negative Int64.
    private static func unixSeconds(_ value: Substring) -> Int64? {
        guard !value.isEmpty, value.utf8.count <= 19, value.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
            return nil
        }
        return Int64(value)
    }

    /// Longest a healthy service goes without a successful poll, in seconds: a long-poll answers at least every
    /// 50 s (`timeout=50`) and writes are at most 10 s apart when due, so 120 s allows one slow or failed poll.
    package static let maxPollAge: Int64 = 120

    /// How far in the future `lastPoll` may lie (a wall clock stepped back) and still count, in seconds.
    package static let maxClockSkew: Int64 = 120

    /// True when the last successful poll lies within `maxAge` seconds before `now` (or at most `maxSkew` after
    /// it). A relay category never matters: an inactive subscription or an unreachable relay is not something a
    /// restart fixes.
    /// - Parameter now: wall-clock seconds since the Unix epoch.
    package func isFresh(
        now: Int64, maxAge: Int64 = ServiceState.maxPollAge, maxSkew: Int64 = ServiceState.maxClockSkew
    )
        -> Bool
    {
        guard let lastPoll else { return false }
        let age = now - lastPoll
        return age <= maxAge && age >= -maxSkew
    }

    /// True when a service is running for this file: it was written within `maxAge` seconds before `now` (or at
    /// most `maxSkew` after). A file from a writer without `updated` counts when its last poll does (`isFresh`).
    /// - Parameter now: wall-clock seconds since the Unix epoch.
    package func isRunning(
        now: Int64, maxAge: Int64 = ServiceState.maxPollAge, maxSkew: Int64 = ServiceState.maxClockSkew
    ) -> Bool {
        guard let updated else { return isFresh(now: now, maxAge: maxAge, maxSkew: maxSkew) }
        // Waiting for config.xml writes once; the process lives until the wait ends (and is restarted then).
        if let until = configWaitUntil, lastPoll == nil, now <= until + maxAge, now >= updated - maxSkew { return true }
        let age = now - updated
        return age <= maxAge && age >= -maxSkew
    }
}
