/// What `vaultsync-notify --status` prints: the running service's state file (`ServiceState`) and the health check's
/// verdict (`HealthVerdict`) at one wall-clock second, as a few lines of text or one JSON object. Pure: the state,
/// the verdict and `now` go in, text comes out. Holds and prints no identifier: times, counts and categories only.
///
/// Times are UTC RFC 3339 (`2026-12-03T15:04:05Z`), in the text followed by how far they are from `now`
/// (`in 12 s`, `3 min ago`, `1 h 5 min ago`).
///
/// The JSON object (`json()`), for scripts; every key is always there, `null` when unknown or not applicable:
/// - `schema`: 2 (2 added `recent`). A later version may add keys; it changes this number only when a key changes
///   its meaning.
/// - `running` (bool): the service that writes the state file runs (`ServiceLiveness`: its lock held or its process
///   alive; for a file from an older writer without `pid`, written within the last 120 s).
/// - `healthy` (bool), `health`: `HealthVerdict`'s raw value (`healthy`, `configuration`, `no-state`,
///   `unreadable-state`, `not-running`, `stale`, `no-access`, `syncthing-down`, `timed-out`), `exit_status` (0 or 1),
///   `message`: the text form's first line.
/// - `now`, `started`: times (strings, RFC 3339 UTC).
/// - `syncthing`: `reachable` (bool: the service's last Syncthing request succeeded), `last_poll` (time),
///   `version` (Syncthing's release, e.g. `v1.29.5`, asked by `--status` itself when the health check reached
///   Syncthing; null otherwise, and always without the service's environment: `syncthingAsked`).
/// - `shared`: `folders` (watched folders shared with at least one remote device), `devices` (distinct remote
///   devices they are shared with).
/// - `last_wake`: `at` (time the relay answered), `reason` (`announce`, `change`, `resync`, `stale-peer`),
///   `relay_answer` (`delivered`, `inactive`, `rate-limited`, `transient`); null before the first answer.
/// - `relay`: `state` (`open`, `inactive`: no active subscription, re-checking; `backoff`; `rate-limited`; `window`:
///   the push window after an accepted trigger), `until` (time; null when open).
/// - `pending`: `reason`, `state` (`scheduled` or `sending`), `at` (time it goes out; null while sending); null when
///   nothing is pending.
/// - `next_sweep`: `state` (`scheduled`, `off`, `not-scheduled`), `at` (time; null unless scheduled).
/// - `recent`: the last decisions (at most 20), newest first; null when no service is running. Each: `at` (time),
///   `decision` (`DecisionCause`: the rule that applied, e.g. `change`, `change-unshared`, `sweep-offline`,
///   `wake-answered`), `news` (bool: it wakes), `devices` (count or null), `reason` (the answered trigger's
///   `WakeReason`, else null), `outcome` (`not-woken`, `scheduled`, `held`, `after-in-flight`, `sent`,
///   `already-woken`, `deferred`, `answered`), `until` (the time the outcome names: when it goes out, a hold ends,
///   a retry comes; else null), `relay` (what holds it: `window`, `inactive`, `backoff`, `rate-limited`; or the
///   relay's answer; else null), `count` (consecutive identical decisions folded into it), `text` (the line the
///   text form shows, times in RFC 3339).
///
/// `--status` without the service's environment (`StatusOverview`) prints this object alone when it finds one running
/// instance, and one per instance inside `{"instances": […], …}` when it finds several.
package struct StatusReport: Sendable, Equatable {
    /// The state file's contents; nil when there is none (or it was not read: an invalid environment).
    package var state: ServiceState?
    package var health: HealthVerdict
    /// Wall-clock seconds since the Unix epoch.
    package var now: Int64
    /// Syncthing's release (`ServerVersion.displayable`), when `--status` could ask for it.
    package var syncthingVersion: String?
    /// Whether the state file's writer runs; nil decides by the file's age alone (`ServiceState.isRunning`).
    package var liveness: ServiceLiveness?
    /// False when `--status` ran without the service's environment: Syncthing was not asked, and the verdict comes
    /// from the state file alone (`HealthVerdict.fromStateFile`).
    package var syncthingAsked: Bool

    package init(
        state: ServiceState?, health: HealthVerdict, now: Int64, syncthingVersion: String? = nil,
        liveness: ServiceLiveness? = nil, syncthingAsked: Bool = true
    ) {
        self.state = state
        self.health = health
        self.now = now
        self.syncthingVersion = syncthingVersion
        self.liveness = liveness
        self.syncthingAsked = syncthingAsked
    }

    /// The JSON object's `schema`.
    package static let schema = 2

    /// 0 when healthy, 1 otherwise: `--healthcheck`'s statuses.
    package var exitStatus: ExitStatus { health.exitStatus }

    /// True when a service runs for this state file (`liveness`, else `ServiceState.isRunning`).
    package var running: Bool {
        guard ![.configuration, .notRunning, .unreadable].contains(health), let state else { return false }
        return liveness.map { $0 == .running } ?? state.isRunning(now: now)
    }

    /// The headline of a state file whose writer ended without removing it.
    package static let stoppedWithoutFarewell = "vaultsync-notify: not running (the service stopped without a farewell)"

    /// The headline of a state file that cannot be read.
    package static let unreadableStateFile =
        "vaultsync-notify: unreadable state file (not a state file this version reads, larger than "
        + "\(ServiceState.maxBytes) bytes, or not its directory's owner's); the service writes it anew when it starts"

    /// The one line that says why no running instance was found: the state file is keyed by the environment.
    package static let noInstanceFix =
        "the state file is kept per Syncthing instance, keyed by SYNCTHING_API_URL, STGUIADDRESS, SYNCTHING_CONFIG, "
        + "STCONFDIR and STHOMEDIR: run --status as the service's user with the service's environment"

    /// The first line of the text, also the JSON's `message`.
    package var headline: String {
        if health == .configuration {
            return "vaultsync-notify: the environment is not valid; `vaultsync-notify --check-config` names the problem"
        }
        if health == .notRunning { return Self.stoppedWithoutFarewell }
        if health == .unreadable { return Self.unreadableStateFile }
        guard running, let state else {
            let why =
                state?.updated.map { "its state file was last written \(Self.relative($0, now: now))" }
                ?? state.map { _ in "its state file is out of date" } ?? "no state file"
            // Found by looking around, not by the environment: the environment is no reason.
            if !syncthingAsked { return "vaultsync-notify: not running (\(why))" }
            return "vaultsync-notify: no running instance found for this environment (\(why)); \(Self.noInstanceFix)"
        }
        switch health {
        case .healthy: return "vaultsync-notify: healthy"
        case .stale:
            guard let poll = state.lastPoll else {
                if let until = state.configWaitUntil {
                    return "vaultsync-notify: unhealthy: waiting for Syncthing's config.xml (the wait ends "
                        + "\(Self.relative(until, now: now)); then exit 75, and the service manager starts it again)"
                }
                return "vaultsync-notify: unhealthy: no successful Syncthing event poll yet"
            }
            return
                "vaultsync-notify: unhealthy: the last successful Syncthing event poll was "
                + Self.relative(poll, now: now)
        case .noState, .unreadable: return "vaultsync-notify: unhealthy: the state file could not be read"
        case .notRunning: return Self.stoppedWithoutFarewell  // handled above
        case .noAccess:
            return "vaultsync-notify: unhealthy: config.xml and the environment give no usable Syncthing access"
        case .syncthingDown: return "vaultsync-notify: unhealthy: Syncthing did not answer the status request just now"
        case .timedOut: return "vaultsync-notify: unhealthy: the check did not finish within 2 s"
        case .configuration: return ""  // handled above
        }
    }

    // MARK: - Text

    /// The text form: the headline, then (for a running service) one indented line per item. Ends without a newline.
    package func text() -> String {
        guard running, let state else { return headline }
        let known = state.relayState != nil  // written by a service that records its progress
        var lines = [headline]
        func line(_ label: String, _ value: String) {
            lines.append("  " + label + String(repeating: " ", count: max(1, 18 - label.count)) + value)
        }
        line("running since", state.started.map { at($0) } ?? "unknown")
        var syncthing =
            switch state.syncthingReachable {
            case true?: "reachable"
            case false?: "not reachable"
            case nil: "reachability unknown"
            }
        syncthing +=
            syncthingAsked
            ? " (\(syncthingVersion.map { "Syncthing \($0)" } ?? "version unknown")); "
            : " at the service's last request (not asked now: without the service's environment); "
        syncthing += state.lastPoll.map { "last event poll " + at($0) } ?? "no successful event poll yet"
        line("Syncthing", syncthing)
        line("shared", shared(state))
        line("last wake-up", lastWake(state, known: known))
        line("relay", relay(state))
        line("pending wake-up", known ? pending(state.pending) : "unknown")
        line("stale-peer sweep", sweep(state.sweep))
        let recent = state.recent.reversed().map { "\(clock($0.at))  \(Self.describe($0, clock: clock))" }
        line("recent", recent.first ?? (known ? "nothing decided yet" : "unknown"))
        for entry in recent.dropFirst() { line("", entry) }
        return lines.joined(separator: "\n")
    }

    private func shared(_ state: ServiceState) -> String {
        guard let folders = state.sharedFolders, let devices = state.sharedDevices else {
            return "not known yet (Syncthing's config not read)"
        }
        if folders == 0 { return "no watched folder is shared with a remote device (nothing to wake for)" }
        return "\(Self.count(folders, "watched folder")) shared with \(Self.count(devices, "device"))"
    }

    private func lastWake(_ state: ServiceState, known: Bool) -> String {
        guard let wake = state.lastWake else {
            if state.relay != .none { return "time unknown; relay answer \(Self.answer(state.relay))" }
            return known ? "none yet" : "unknown"
        }
        return "\(at(wake.at)), reason \(wake.reason.rawValue); relay answer \(Self.answer(state.relay))"
    }

    /// The relay's state as of `now`: a push window whose end has passed is over, whether or not the service has
    /// written its file since (the window's end is no event of its own).
    private var relayState: RelayGate<Int64>? {
        if case .window(let until)? = state?.relayState, until <= now { return .open }
        return state?.relayState
    }

    private func relay(_ state: ServiceState) -> String {
        switch relayState {
        case nil: return "unknown"
        case .open: return "healthy"
        case .window(let until): return "healthy; push window open until \(at(until))"
        case .waiting(.inactiveRecheck, let until):
            return "no active subscription for this server; re-checking at \(at(until))"
        case .waiting(.backoff, let until): return "failing; backing off until \(at(until))"
        case .waiting(.rateLimited, let until): return "rate-limited; waiting until \(at(until))"
        }
    }

    private func pending(_ pending: PendingWake<Int64>?) -> String {
        switch pending {
        case nil: return "none"
        case .scheduled(let reason, let goes):
            return goes > now ? "\(reason.rawValue), goes out at \(at(goes))" : "\(reason.rawValue), going out now"
        case .sending(let reason): return "\(reason.rawValue), posted; waiting for the relay's answer"
        }
    }

    private func sweep(_ sweep: SweepSchedule<Int64>?) -> String {
        switch sweep {
        case nil: return "unknown"
        case .off: return "off (STALE_RETRIGGER_SECONDS=0)"
        case .notScheduled: return "not scheduled"
        case .at(let next): return "next at \(at(next))"
        }
    }

    private static func answer(_ category: RelayOutcomeCategory) -> String {
        switch category {
        case .none: "none"
        case .delivered: "delivered"
        case .inactive: "inactive (no active subscription)"
        case .rateLimited: "rate-limited"
        case .transient: "transient (failed; retried)"
        }
    }

    private static func count(_ n: Int, _ noun: String) -> String { n == 1 ? "1 \(noun)" : "\(n) \(noun)s" }

    /// A time of the `recent` list: `HH:MM:SS` (UTC) within a day of `now`, else `YYYY-MM-DD HH:MM:SS`.
    private func clock(_ seconds: Int64) -> String {
        let stamp = Self.rfc3339(seconds).dropLast()
        let time = stamp.split(separator: "T")
        return (seconds - now).magnitude < 86_400 ? String(time[1]) : time.joined(separator: " ")
    }

    /// One `recent` entry without its time: what was read, `→`, what came of it. Times in it are written with
    /// `clock`.
    package static func describe(_ entry: Decision<Int64>, clock: (Int64) -> String) -> String {
        let times = entry.count > 1 ? " (\(entry.count) times)" : ""
        return "\(cause(entry)) → \(outcome(entry, clock: clock))\(times)"
    }

    private static func cause(_ entry: Decision<Int64>) -> String {
        let devices = entry.devices ?? 0
        switch entry.cause {
        case .announce: return "startup announce"
        case .change:
            return entry.devices.map { "change in a watched folder shared with \(count($0, "device"))" }
                ?? "change in a watched folder"
        case .changeSharingUnknown: return "change in a watched folder (its sharing not known: wakes to be safe)"
        case .changeUnwatched: return "change in a folder not in WATCHED_FOLDERS"
        case .changeUnshared: return "change in a folder shared with no device (or only paused ones)"
        case .changeDeclined: return "change in a folder no device has accepted (or each paused it)"
        case .peerNeedsData: return "a peer started needing data"
        case .peerProgress: return "a peer's progress report (nothing new)"
        case .peerDeclined: return "a peer has not accepted a shared folder (or paused it)"
        case .eventsLost: return "events lost (gap)"
        case .syncthingRestarted: return "Syncthing restarted"
        case .syncthingBack: return "Syncthing answers again after a re-sync"
        case .sweepOffline: return "\(count(devices, "peer")) offline with data to fetch (sweep)"
        case .sweepConnected: return "\(count(devices, "peer")) with data to fetch already connected at the sweep"
        case .sweepInSync: return "every peer in sync at the sweep"
        case .relayAnswer:
            switch entry.reason {
            case .announce?: return "startup announce"
            case .change?: return "wake-up for news"
            case .resync?: return "wake-up after a re-sync"
            case .stalePeer?: return "wake-up for an offline peer (sweep)"
            case nil: return "wake-up"
            }
        }
    }

    private static func outcome(_ entry: Decision<Int64>, clock: (Int64) -> String) -> String {
        switch entry.outcome {
        case .notWoken: return entry.cause == .sweepConnected ? "not woken (it is syncing)" : "not woken"
        case .scheduled(let at): return "wake-up goes out at \(clock(at)) (debounce)"
        case .held(.window(let until)): return "held: the relay's push window is open until \(clock(until))"
        case .held(.waiting(.inactiveRecheck, let until)):
            return "held: no active subscription; re-checking at \(clock(until))"
        case .held(.waiting(.backoff, let until)): return "held: the relay is failing; retrying at \(clock(until))"
        case .held(.waiting(.rateLimited, let until)): return "held: rate-limited by the relay until \(clock(until))"
        case .held(.open): return "held"
        case .afterInFlight: return "joins the next wake-up (one is being sent)"
        case .sent: return "sent to the relay"
        case .alreadyWoken: return "not woken again (a wake-up went out after it)"
        case .deferred: return "re-synced; wakes once Syncthing answers again"
        case .answered(let answer, let retryAt):
            let retry = retryAt.map { " at \(clock($0))" } ?? ""
            switch answer {
            case .delivered: return "woke the relay (delivered)"
            case .inactive: return "relay: no active subscription → wake-up kept; re-checking\(retry)"
            case .rateLimited: return "relay: rate-limited → wake-up kept; retrying\(retry)"
            case .transient: return "relay failed → wake-up kept; retrying\(retry)"
            case .none: return "no answer"
            }
        }
    }

    /// `2026-12-03T15:04:05Z (in 12 s)`.
    private func at(_ seconds: Int64) -> String { "\(Self.rfc3339(seconds)) (\(Self.relative(seconds, now: now)))" }

    // MARK: - Times

    /// `seconds` relative to `now`: `now`, `in 12 s`, `3 min ago`, `1 h 5 min ago`, `in 2 d 3 h`. Whole units,
    /// rounded down.
    package static func relative(_ seconds: Int64, now: Int64) -> String {
        let delta = seconds - now
        guard delta != 0 else { return "now" }
        let d = delta.magnitude
        let amount: String
        switch d {
        case ..<60: amount = "\(d) s"
        case ..<3600: amount = "\(d / 60) min"
        case ..<86_400: amount = d % 3600 / 60 == 0 ? "\(d / 3600) h" : "\(d / 3600) h \(d % 3600 / 60) min"
        default: amount = d % 86_400 / 3600 == 0 ? "\(d / 86_400) d" : "\(d / 86_400) d \(d % 86_400 / 3600) h"
        }
        return delta > 0 ? "in \(amount)" : "\(amount) ago"
    }

    /// Unix seconds as UTC RFC 3339, `YYYY-MM-DDTHH:MM:SSZ` (proleptic Gregorian).
    package static func rfc3339(_ seconds: Int64) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let rest = seconds - days * 86_400
        let (year, month, day) = RetryAfter.civilFromDays(days)
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let yyyy = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return "\(yyyy)-\(two(month))-\(two(day))T\(two(rest / 3600)):\(two(rest % 3600 / 60)):\(two(rest % 60))Z"
    }

    // MARK: - JSON

    /// The JSON form (see the type's documentation), pretty-printed with sorted keys, without a trailing newline.
    package func json() -> String { jsonDocument().rendered() }

    /// The JSON object, to print or to place in a larger document (`StatusOverview`).
    package func jsonDocument() -> PrettyJSON {
        let state = running ? state : nil
        func time(_ seconds: Int64?) -> PrettyJSON { seconds.map { .string(Self.rfc3339($0)) } ?? .null }
        func int(_ n: Int?) -> PrettyJSON { n.map { .int($0) } ?? .null }
        let known = state?.relayState != nil
        var relayState: PrettyJSON = .null
        var relayUntil: PrettyJSON = .null
        switch state == nil ? nil : self.relayState {
        case nil: break
        case .open: relayState = .string("open")
        case .window(let until): (relayState, relayUntil) = (.string("window"), time(until))
        case .waiting(let kind, let until): (relayState, relayUntil) = (.string(kind.rawValue), time(until))
        }
        var lastWake: PrettyJSON = .null
        if let state, state.lastWake != nil || state.relay != .none {
            lastWake = .object([
                ("at", time(state.lastWake?.at)),
                ("reason", state.lastWake.map { .string($0.reason.rawValue) } ?? .null),
                ("relay_answer", .string(state.relay.rawValue)),
            ])
        }
        var pending: PrettyJSON = .null
        switch state?.pending {
        case nil: break
        case .scheduled(let reason, let at):
            pending = .object([("reason", .string(reason.rawValue)), ("state", .string("scheduled")), ("at", time(at))])
        case .sending(let reason):
            pending = .object([("reason", .string(reason.rawValue)), ("state", .string("sending")), ("at", .null)])
        }
        var sweep: PrettyJSON = .null
        switch state?.sweep {
        case nil: break
        case .off: sweep = .object([("state", .string("off")), ("at", .null)])
        case .notScheduled: sweep = .object([("state", .string("not-scheduled")), ("at", .null)])
        case .at(let at): sweep = .object([("state", .string("scheduled")), ("at", time(at))])
        }
        let document = PrettyJSON.object([
            ("schema", .int(Self.schema)),
            ("running", .bool(running)),
            ("healthy", .bool(health == .healthy)),
            ("health", .string(health.rawValue)),
            ("exit_status", .int(Int(exitStatus.rawValue))),
            ("message", .string(headline)),
            ("now", time(now)),
            ("started", time(state?.started)),
            (
                "syncthing",
                .object([
                    ("reachable", state?.syncthingReachable.map { .bool($0) } ?? .null),
                    ("last_poll", time(state?.lastPoll)), ("version", syncthingVersion.map { .string($0) } ?? .null),
                ])
            ),
            ("shared", .object([("folders", int(state?.sharedFolders)), ("devices", int(state?.sharedDevices))])),
            ("last_wake", lastWake),
            ("relay", .object([("state", relayState), ("until", relayUntil)])),
            ("pending", known ? pending : .null),
            ("next_sweep", sweep),
            ("recent", state.map { .array($0.recent.reversed().map(recentJSON)) } ?? .null),
        ])
        return document
    }

    /// One entry of `recent` in the JSON (see the type's documentation).
    private func recentJSON(_ entry: Decision<Int64>) -> PrettyJSON {
        var relay: PrettyJSON = .null
        switch entry.outcome {
        case .held(.window): relay = .string("window")
        case .held(.waiting(let wait, _)): relay = .string(wait.rawValue)
        case .answered(let answer, _): relay = .string(answer.rawValue)
        default: break
        }
        return .object([
            ("at", .string(Self.rfc3339(entry.at))),
            ("decision", .string(entry.cause.rawValue)),
            ("news", .bool(entry.cause.isNews)),
            ("devices", entry.devices.map { .int($0) } ?? .null),
            ("reason", entry.reason.map { .string($0.rawValue) } ?? .null),
            ("outcome", .string(entry.outcome.kind)),
            ("until", entry.outcome.time.map { .string(Self.rfc3339($0)) } ?? .null),
            ("relay", relay),
            ("count", .int(entry.count)),
            ("text", .string(Self.describe(entry) { Self.rfc3339($0) })),
        ])
    }
}
