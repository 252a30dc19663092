import Testing

@testable import NotifyCore

@Suite("--status: the report, text and JSON")
struct StatusReportTests {
    static let now: Int64 = 1_718_000_010

    static func running(_ change: (inout ServiceState) -> Void = { _ in }) -> ServiceState {
        var state = ServiceProgressTests.full
        change(&state)
        return state
    }

    @Test(
        "UTC RFC 3339",
        arguments: [
            (Int64(0), "1970-01-01T00:00:00Z"), (1_718_000_000, "2024-06-10T06:13:20Z"),
            (951_782_400, "2000-02-29T00:00:00Z"), (4_107_542_399, "2100-02-28T23:59:59Z"),
            (-1, "1969-12-31T23:59:59Z"),
        ])
    func rfc3339(seconds: Int64, text: String) {
        #expect(StatusReport.rfc3339(seconds) == text)
    }

    static let relatives: [(Int64, String)] = [
        (0, "now"), (12, "in 12 s"), (-12, "12 s ago"), (-59, "59 s ago"), (-180, "3 min ago"),
        (-3599, "59 min ago"), (3600, "in 1 h"), (-3900, "1 h 5 min ago"), (21_360, "in 5 h 56 min"),
        (-86_400, "1 d ago"), (183_659, "in 2 d 3 h"),
    ]

    @Test("relative times", arguments: relatives)
    func relative(delta: Int64, text: String) {
        #expect(StatusReport.relative(100_000 + delta, now: 100_000) == text)
    }

    @Test("healthy: every line, each time absolute and relative")
    func healthy() {
        let report = StatusReport(state: Self.running(), health: .healthy, now: Self.now)
        #expect(report.exitStatus == .ok)
        #expect(
            report.text() == """
                vaultsync-notify: healthy
                  running since     2024-06-10T03:26:40Z (2 h 46 min ago)
                  Syncthing         reachable (version unknown); last event poll 2024-06-10T06:13:20Z (10 s ago)
                  shared            2 watched folders shared with 1 device
                  last wake-up      2024-06-10T06:13:10Z (20 s ago), reason change; relay answer delivered
                  relay             healthy; push window open until 2024-06-10T06:13:40Z (in 10 s)
                  pending wake-up   change, goes out at 2024-06-10T06:13:40Z (in 10 s)
                  stale-peer sweep  next at 2024-06-10T09:26:40Z (in 3 h 13 min)
                  recent            nothing decided yet
                """)
    }

    @Test(
        "each relay state has its line",
        arguments: [
            (RelayGate<Int64>.open, "healthy"),
            (
                .waiting(.inactiveRecheck, until: now + 45),
                "no active subscription for this server; re-checking at 2024-06-10T06:14:15Z (in 45 s)"
            ),
            (.waiting(.backoff, until: now + 8), "failing; backing off until 2024-06-10T06:13:38Z (in 8 s)"),
            (.waiting(.rateLimited, until: now + 90), "rate-limited; waiting until 2024-06-10T06:15:00Z (in 1 min)"),
            (.window(until: now + 12), "healthy; push window open until 2024-06-10T06:13:42Z (in 12 s)"),
        ])
    func relayStates(relay: RelayGate<Int64>, line: String) {
        let text = StatusReport(state: Self.running { $0.relayState = relay }, health: .healthy, now: Self.now).text()
        #expect(text.contains("\n  relay             \(line)\n"), "\(text)")
    }

    @Test(
        "pending or not: none, scheduled, overdue (the file is up to a poll old), posted",
        arguments: [
            (PendingWake<Int64>?.none, "none"),
            (.scheduled(.stalePeer, at: now + 3), "stale-peer, goes out at 2024-06-10T06:13:33Z (in 3 s)"),
            (.scheduled(.change, at: now - 3), "change, going out now"),
            (.sending(.announce), "announce, posted; waiting for the relay's answer"),
        ])
    func pending(pending: PendingWake<Int64>?, line: String) {
        let text = StatusReport(state: Self.running { $0.pending = pending }, health: .healthy, now: Self.now).text()
        #expect(text.contains("\n  pending wake-up   \(line)\n"), "\(text)")
    }

    @Test("never polled: a running service whose Syncthing never answered is unhealthy and says so")
    func neverPolled() {
        let state = ServiceState(
            relay: .none, started: Self.now - 30, updated: Self.now - 2, syncthingReachable: false,
            relayState: .open, sweep: .notScheduled)
        let report = StatusReport(state: state, health: .stale, now: Self.now)
        #expect(report.exitStatus == .checkFailed)
        #expect(report.running)
        #expect(
            report.text() == """
                vaultsync-notify: unhealthy: no successful Syncthing event poll yet
                  running since     2024-06-10T06:13:00Z (30 s ago)
                  Syncthing         not reachable (version unknown); no successful event poll yet
                  shared            not known yet (Syncthing's config not read)
                  last wake-up      none yet
                  relay             healthy
                  pending wake-up   none
                  stale-peer sweep  not scheduled
                  recent            nothing decided yet
                """)
    }

    @Test("a running service whose polls stopped, and Syncthing down or out of reach: unhealthy, with the state")
    func unhealthyRunning() {
        let state = Self.running { $0.lastPoll = Self.now - 300 }
        #expect(
            StatusReport(state: state, health: .stale, now: Self.now).headline
                == "vaultsync-notify: unhealthy: the last successful Syncthing event poll was 5 min ago")
        let down = StatusReport(state: Self.running(), health: .syncthingDown, now: Self.now)
        #expect(down.text().hasPrefix("vaultsync-notify: unhealthy: Syncthing did not answer"))
        #expect(down.exitStatus == .checkFailed)
    }

    @Test("no state file, or one no service keeps up to date: one line saying so and why files are per environment")
    func noInstance() {
        let stale = Self.running { $0.updated = Self.now - 600 }
        for (state, why) in [(nil, "no state file"), (stale, "its state file was last written 10 min ago")] {
            for health in [HealthVerdict.noState, .stale] {
                let report = StatusReport(state: state, health: health, now: Self.now)
                #expect(!report.running)
                #expect(report.exitStatus == .checkFailed)
                let text = report.text()
                #expect(!text.contains("\n"))
                #expect(text.hasPrefix("vaultsync-notify: no running instance found for this environment (\(why))"))
                #expect(text.contains("keyed by SYNCTHING_API_URL, STGUIADDRESS, SYNCTHING_CONFIG"))
                #expect(text.contains("run --status as the service's user with the service's environment"))
            }
        }
        let invalid = StatusReport(state: nil, health: .configuration, now: Self.now)
        #expect(invalid.text().contains("--check-config"))
        #expect(invalid.exitStatus == .checkFailed)
    }

    @Test("an old writer's file: what it has, the rest unknown")
    func oldWriter() {
        let report = StatusReport(
            state: ServiceState(lastPoll: Self.now - 5, relay: .inactive), health: .healthy, now: Self.now)
        #expect(
            report.text() == """
                vaultsync-notify: healthy
                  running since     unknown
                  Syncthing         reachability unknown (version unknown); last event poll 2024-06-10T06:13:25Z (5 s ago)
                  shared            not known yet (Syncthing's config not read)
                  last wake-up      time unknown; relay answer inactive (no active subscription)
                  relay             unknown
                  pending wake-up   unknown
                  stale-peer sweep  unknown
                  recent            unknown
                """)
    }

    @Test("JSON: the documented keys, always all of them; times as RFC 3339 strings")
    func json() {
        let healthy = StatusReport(state: Self.running(), health: .healthy, now: Self.now).json()
        #expect(
            healthy == """
                {
                  "exit_status" : 0,
                  "health" : "healthy",
                  "healthy" : true,
                  "last_wake" : {
                    "at" : "2024-06-10T06:13:10Z",
                    "reason" : "change",
                    "relay_answer" : "delivered"
                  },
                  "message" : "vaultsync-notify: healthy",
                  "next_sweep" : {
                    "at" : "2024-06-10T09:26:40Z",
                    "state" : "scheduled"
                  },
                  "now" : "2024-06-10T06:13:30Z",
                  "pending" : {
                    "at" : "2024-06-10T06:13:40Z",
                    "reason" : "change",
                    "state" : "scheduled"
                  },
                  "recent" : [

                  ],
                  "relay" : {
                    "state" : "window",
                    "until" : "2024-06-10T06:13:40Z"
                  },
                  "running" : true,
                  "schema" : 2,
                  "shared" : {
                    "devices" : 1,
                    "folders" : 2
                  },
                  "started" : "2024-06-10T03:26:40Z",
                  "syncthing" : {
                    "last_poll" : "2024-06-10T06:13:20Z",
                    "reachable" : true,
                    "version" : null
                  }
                }
                """)
        let none = StatusReport(state: nil, health: .noState, now: Self.now).json()
        for key in [
            "exit_status", "health", "healthy", "last_wake", "message", "next_sweep", "now", "pending", "recent",
            "relay",
            "running", "schema", "shared", "started", "syncthing",
        ] {
            #expect(none.contains("\n  \"\(key)\" : "), "\(key) missing")
        }
        #expect(none.contains(#""running" : false"#) && none.contains(#""exit_status" : 1"#))
        #expect(none.contains(#""health" : "no-state""#))
    }

    @Test("every shape carries times, counts and categories only: no identifier's shape")
    func noIdentifiers() {
        var outputs: [String] = []
        let states: [ServiceState?] = [nil, Self.running(), ServiceState(lastPoll: 1), Self.running { $0.updated = 0 }]
        for state in states {
            for health in HealthVerdict.allCases {
                let report = StatusReport(state: state, health: health, now: Self.now)
                outputs += [report.text(), report.json()]
            }
        }
        for output in outputs {
            // A Device ID (seven groups of seven), a URL, a path.
            #expect(output.firstMatch(of: /[A-Z2-7]{7}-[A-Z2-7]{7}/) == nil)
            #expect(!output.contains("://"))
            #expect(output.firstMatch(of: /(^|\s)\/[a-z]/) == nil, "\(output)")
        }
    }
}

@Suite("Syncthing's version in --status")
struct SyncthingVersionTests {
    @Test("read from /rest/system/version's JSON, other fields ignored")
    func decode() {
        let body = #"{"arch":"amd64","longVersion":"syncthing v1.29.5 \"Gold Grasshopper\"","version":"v1.29.5"}"#
        #expect(decodeJSON(SystemVersion.self, from: Array(body.utf8)) == SystemVersion(version: "v1.29.5"))
        #expect(decodeJSON(SystemVersion.self, from: Array(#"{"version":7}"#.utf8)) == SystemVersion(version: nil))
        #expect(decodeJSON(SystemVersion.self, from: Array(#"{"version":"x y"}"#.utf8))?.version == nil)
        #expect(decodeJSON(SystemVersion.self, from: Array("[]".utf8)) == nil)
    }

    @Test("the text and the JSON show the version when there is one")
    func shown() {
        let state = ServiceState(lastPoll: 1_000, syncthingReachable: true)
        let report = StatusReport(state: state, health: .healthy, now: 1_010, syncthingVersion: "v1.19.2")
        #expect(report.text().contains("reachable (Syncthing v1.19.2); last event poll"))
        #expect(report.json().contains(#""version" : "v1.19.2""#))
        let unknown = StatusReport(state: state, health: .healthy, now: 1_010)
        #expect(unknown.text().contains("reachable (version unknown)"))
    }
}

@Suite("--status after the relay's push window")
struct StatusWindowEndTests {
    @Test("a push window whose end has passed reads as healthy, in the text and the JSON")
    func windowOver() {
        let state = ServiceState(lastPoll: 1_000, started: 900, updated: 1_000, relayState: .window(until: 1_030))
        let during = StatusReport(state: state, health: .healthy, now: 1_010)
        #expect(during.text().contains("relay             healthy; push window open until"))
        #expect(during.json().contains(#""state" : "window""#))
        let after = StatusReport(state: state, health: .healthy, now: 1_040)
        #expect(after.text().contains("relay             healthy\n"), "\(after.text())")
        #expect(after.json().contains(#""state" : "open""#) && !after.json().contains(#""state" : "window""#))
    }
}

@Suite("--status while config.xml is awaited")
struct StatusConfigWaitTests {
    @Test("the file written at the wait's start round-trips, and counts as running until the wait ends")
    func waitingIsRunning() throws {
        let state = ServiceState(started: 1_000, updated: 1_000, configWaitUntil: 1_600)
        #expect(ServiceState.decode(state.encoded()) == state)
        #expect(state.encoded().contains("config_wait_until=1600\n"))
        #expect(state.isRunning(now: 1_500))  // past updated + 120 s, inside the wait
        #expect(state.isRunning(now: 1_700))  // the exit 75 and the restart
        #expect(!state.isRunning(now: 1_800))
        #expect(!state.isFresh(now: 1_010), "--healthcheck: not healthy while waiting")
    }

    @Test("the headline says it waits for config.xml, not that no instance runs")
    func headline() {
        let state = ServiceState(started: 1_000, updated: 1_000, configWaitUntil: 1_060)
        let report = StatusReport(state: state, health: .stale, now: 1_030)
        #expect(report.exitStatus == .checkFailed)
        #expect(
            report.headline
                == "vaultsync-notify: unhealthy: waiting for Syncthing's config.xml (the wait ends in 30 s; then exit "
                + "75, and the service manager starts it again)")
        #expect(report.json().contains(#""running" : true"#))
    }
}
