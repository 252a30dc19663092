import Foundation
import Testing

@testable import NotifyCore

@Suite("Supervision: state, liveness, LOG_FORMAT")
struct SupervisionCoreTests {
    // MARK: State file contents

    @Test("the state round-trips through its text and carries nothing but two values")
    func stateRoundTrip() {
        let state = ServiceState(lastPoll: 1_718_000_000, relay: .rateLimited)
        #expect(state.encoded() == "vaultsync-notify-state 1\nlast_poll=1718000000\nrelay=rate-limited\n")
        #expect(ServiceState.decode(state.encoded()) == state)
        #expect(ServiceState.decode(ServiceState().encoded()) == ServiceState())
        for category in RelayOutcomeCategory.allCases {
            #expect(ServiceState.decode(ServiceState(lastPoll: 5, relay: category).encoded())?.relay == category)
        }
    }

    @Test(
        "a wrong header, a malformed value or an oversized file is no state",
        arguments: [
            "", "vaultsync-notify-state 2\nlast_poll=1\n", "vaultsync-notify-state 1\nlast_poll=-1\n",
            "vaultsync-notify-state 1\nlast_poll=12x\n", "vaultsync-notify-state 1\nrelay=maybe\n",
            "vaultsync-notify-state 1\ngarbage\n",
            "vaultsync-notify-state 1\nlast_poll=1\n" + String(repeating: "x=y\n", count: 1100),
        ])
    func malformedState(text: String) {
        #expect(ServiceState.decode(text) == nil)
    }

    @Test("unknown keys from a newer writer are skipped")
    func unknownKeys() {
        #expect(
            ServiceState.decode("vaultsync-notify-state 1\nlast_poll=7\nfuture=1\nrelay=inactive\n")
                == ServiceState(lastPoll: 7, relay: .inactive))
    }

    @Test(
        "fresh within 120 s of the last poll; a clock stepped back by up to 120 s still counts",
        arguments: [
            (Int64(0), true), (60, true), (120, true), (121, false), (3600, false), (-60, true), (-120, true),
            (-121, false),
        ])
    func freshness(age: Int64, fresh: Bool) {
        let now: Int64 = 1_718_000_000
        #expect(ServiceState(lastPoll: now - age, relay: .none).isFresh(now: now) == fresh)
    }

    @Test("no poll yet is never fresh; the relay category never matters")
    func freshnessIgnoresRelay() {
        #expect(!ServiceState(lastPoll: nil, relay: .delivered).isFresh(now: 100))
        for category in RelayOutcomeCategory.allCases {
            #expect(ServiceState(lastPoll: 100, relay: category).isFresh(now: 150))
        }
    }

    @Test("relay outcomes map to categories; a 404 (an outage when the service keeps running) to transient")
    func categories() {
        #expect(RelayOutcomeCategory(.delivered(status: 202)) == .delivered)
        #expect(RelayOutcomeCategory(.subscriptionInactive(status: 402)) == .inactive)
        #expect(RelayOutcomeCategory(.rateLimited(retryAfter: .seconds(30))) == .rateLimited)
        #expect(RelayOutcomeCategory(.transient(status: 503, error: nil)) == .transient)
        #expect(RelayOutcomeCategory(.transient(status: nil, error: .transportDNS)) == .transient)
        #expect(RelayOutcomeCategory(.endpointMissing) == .transient)
        #expect(
            ServiceStatusText.running(connected: true, relay: RelayOutcomeCategory(.endpointMissing)) == .relayFailing)
    }

    @Test("writes: the first at once, then at most one per 10 s, but a new relay category at once")
    func throttle() {
        var throttle = StateWriteThrottle()
        var state = ServiceState(lastPoll: 1, relay: .none)
        func write(at seconds: Double) -> Bool { throttle.shouldWrite(state, now: .seconds(seconds)) }
        #expect(write(at: 0))
        #expect(!write(at: 1))
        #expect(!write(at: 9.9))
        #expect(write(at: 10))
        state.relay = .delivered
        #expect(write(at: 11))
        #expect(!write(at: 12))
        // An idle stream (a poll every 50 s) writes every poll.
        #expect(write(at: 61))
        #expect(write(at: 111))
        throttle.reset()
        #expect(write(at: 112))
    }

    /// An idle service: a significant change (the relay's answer) written just before a poll must not hold that
    /// poll back until the next one, 50 s later: the file's last poll would lag by up to two long-polls.
    @Test("a successful poll is written at once when the file's last poll is 10 s or more behind")
    func pollNeverHeldBack() {
        var throttle = StateWriteThrottle()
        var state = ServiceState(lastPoll: 1_000, relay: .none)
        func write(at seconds: Double) -> Bool { throttle.shouldWrite(state, now: .seconds(seconds)) }
        #expect(write(at: 0))
        state.relay = .delivered  // significant, at 45 s
        #expect(write(at: 45))
        state.lastPoll = 1_050  // the next poll, 5 s later: not due, not significant, but 50 s newer
        #expect(write(at: 50))
        state.lastPoll = 1_055  // a busy stream: polls 5 s apart stay within the 10 s rate
        #expect(!write(at: 55))
        state.lastPoll = 1_060
        #expect(write(at: 60))
    }

    // MARK: Watchdog liveness

    @Test("alive inside a step until its bound plus grace; dead past it (a wedged long-poll)")
    func livenessInsideStep() {
        var l = WatchdogLiveness(now: .zero, grace: .seconds(5), idleLimit: .seconds(10))
        l.stepStarted(now: .seconds(1), bound: .seconds(65))
        #expect(l.isAlive(now: .seconds(30)))
        #expect(l.isAlive(now: .seconds(71)))
        #expect(!l.isAlive(now: .seconds(71.1)))
        #expect(!l.isAlive(now: .seconds(500)))
        // It comes back: progress again.
        l.stepFinished(now: .seconds(600))
        #expect(l.isAlive(now: .seconds(601)))
    }

    @Test("between steps it may be busy for 10 s; a thread that never starts another step is dead")
    func livenessBetweenSteps() {
        var l = WatchdogLiveness(now: .zero, grace: .seconds(5), idleLimit: .seconds(10))
        #expect(l.isAlive(now: .seconds(10)))
        #expect(!l.isAlive(now: .seconds(10.5)))
        l.stepStarted(now: .seconds(11), bound: .seconds(2))
        l.stepFinished(now: .seconds(12))
        #expect(l.isAlive(now: .seconds(22)))
        #expect(!l.isAlive(now: .seconds(23)))
    }

    @Test("a steady poll loop stays alive at every tick; after shutdown the pings go on until exit")
    func livenessSteadyLoop() {
        var l = WatchdogLiveness(now: .zero)
        var t = Instant.zero
        for _ in 0..<20 {
            l.stepStarted(now: t, bound: .seconds(65))
            for tick in stride(from: 0.0, through: 50, by: 7.5) {
                #expect(l.isAlive(now: t + .milliseconds(Int64(tick * 1000))))
            }
            t = t + .seconds(50)
            l.stepFinished(now: t)
            l.stepStarted(now: t, bound: .seconds(15))
            t = t + .milliseconds(3)
            l.stepFinished(now: t)
        }
        l.stepStarted(now: t, bound: .seconds(1))
        l.stopped()
        #expect(l.isAlive(now: t + .seconds(3600)))
    }

    @Test("STATUS texts: Syncthing first, then the relay; fixed and free of identifiers")
    func statusTexts() {
        #expect(ServiceStatusText.running(connected: false, relay: .delivered) == .syncthingUnavailable)
        #expect(ServiceStatusText.running(connected: true, relay: .none) == .watching)
        #expect(ServiceStatusText.running(connected: true, relay: .delivered) == .watching)
        #expect(ServiceStatusText.running(connected: true, relay: .inactive) == .relayInactive)
        #expect(ServiceStatusText.running(connected: true, relay: .rateLimited) == .relayRateLimited)
        #expect(ServiceStatusText.running(connected: true, relay: .transient) == .relayFailing)
        for text in ServiceStatusText.allCases {
            #expect(!text.rawValue.contains("\n") && !text.rawValue.contains("/") && text.rawValue.utf8.count < 80)
        }
    }

    // MARK: LOG_FORMAT

    @Test("LOG_FORMAT: text or json, case-insensitive; default text; anything else names the variable")
    func logFormat() throws {
        func parse(_ value: String?) -> Result<Configuration, ConfigurationError> {
            var env = ["RELAY_URL": "https://relay.vaultsync.eu"]
            env["LOG_FORMAT"] = value
            return Configuration.parse(environment: env)
        }
        #expect(try parse(nil).get().logFormat == .text)
        #expect(try parse("").get().logFormat == .text)
        #expect(try parse("json").get().logFormat == .json)
        #expect(try parse("JSON").get().logFormat == .json)
        #expect(parse(" json") == .failure(ConfigurationError(.logFormat, .surroundingSpace)))
        #expect(try parse("Text").get().logFormat == .text)
        guard case .failure(let error) = parse("yaml") else {
            Issue.record("yaml accepted")
            return
        }
        #expect(error.variable == .logFormat)
        #expect(error.message == "LOG_FORMAT: is not one of the accepted words; expected text or json")
        #expect(!error.message.contains("yaml"))
    }

    @Test("a JSON line is one object with the typed fields: numbers bare, the rest strings")
    func jsonLine() throws {
        let record = LogRecord(
            .warn, .triggerFailed,
            [
                .status(503), .attempt(2), .delay(.milliseconds(1500)), .code(.relayTransient), .reason(.stalePeer),
                LogField(.pending, .bool(true)), .variable(.logFormat),
            ])
        let line = record.jsonLine()
        #expect(
            line
                == #"{"level":"warn","msg":"wake-up failed; backing off","status":503,"attempt":2,"delay":1.500,"#
                + #""code":"relay.transient","reason":"stale-peer","pending":true,"variable":"LOG_FORMAT"}"#)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["level"] as? String == "warn")
        #expect(object["msg"] as? String == "wake-up failed; backing off")
        #expect(object["status"] as? Int == 503)
        #expect(object["delay"] as? Double == 1.5)
        #expect(object["pending"] as? Bool == true)
        #expect(object["code"] as? String == "relay.transient")
    }

    @Test("every message and field renders as valid JSON; journald gets the <N> prefix and no time")
    func jsonEveryMessage() throws {
        for message in LogMessage.allCases {
            let line = LogRecord(.info, message, [.duration(.milliseconds(-12)), .count(0)]).jsonLine(time: "T")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["msg"] as? String == message.rawValue)
            #expect(object["time"] as? String == "T")
            #expect(object["duration"] as? Double == -0.012)
        }
        let journald = LogRecord(.error, .stopped).jsonLine(journald: true)
        #expect(journald == #"<3>{"level":"error","msg":"stopped"}"#)
        #expect(LogRecord.jsonString("a\"b\\c\n\u{1}") == #""a\"b\\c\n\u0001""#)
    }
}

/// The text of README.md's `## heading` section, up to the next `## ` heading.
private func readmeSection(_ heading: String) throws -> String {
    let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("README.md")
    let text = try String(contentsOf: readme, encoding: .utf8)
    let section = try #require(text.components(separatedBy: "\n## \(heading)\n").dropFirst().first)
    return section.components(separatedBy: "\n## ").first ?? ""
}

@Suite("Exit statuses")
struct ExitStatusTableTests {
    /// README.md's "Exit statuses" table: status → (meaning, restart) columns.
    static func readmeRows() throws -> [Int32: (meaning: String, restart: String)] {
        let section = try readmeSection("Exit statuses")
        var rows: [Int32: (meaning: String, restart: String)] = [:]
        for line in section.split(separator: "\n") where line.hasPrefix("| ") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            if cells.count == 3, let status = Int32(cells[0]) { rows[status] = (cells[1], cells[2]) }
        }
        return rows
    }

    @Test("the README table lists exactly the code's statuses, with the same meaning and restart advice")
    func readmeMatchesCode() throws {
        let rows = try Self.readmeRows().mapValues(\.restart)
        #expect(Set(rows.keys) == Set(ExitStatus.allCases.map(\.rawValue)))
        for status in ExitStatus.allCases {
            switch status {
            case .usage, .configuration:
                #expect(status.preventsRestart && rows[status.rawValue] == "no")
            case .temporary:
                #expect(!status.preventsRestart && rows[status.rawValue] == "yes")
            case .ok, .checkFailed:
                #expect(!status.preventsRestart && rows[status.rawValue] == "—")
            }
        }
    }

    @Test("each README meaning is ExitStatus.meaning, word for word")
    func meanings() throws {
        let rows = try Self.readmeRows()
        for status in ExitStatus.allCases {
            #expect(rows[status.rawValue]?.meaning == status.meaning, "README row \(status.rawValue) differs")
        }
    }
}

@Suite("Signals")
struct SignalPolicyTests {
    /// README.md's "Signals" table: the signal names of each row, and its first words.
    static func readmeRows() throws -> [(names: [String], action: String)] {
        let section = try readmeSection("Signals")
        return section.split(separator: "\n").compactMap { line in
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard line.hasPrefix("| SIG"), cells.count == 2 else { return nil }
            return (cells[0].components(separatedBy: ", "), String(cells[1].prefix { $0 != ":" }))
        }
    }

    @Test("the README table names exactly the policy's signals, each with its action")
    func readmeMatchesPolicy() throws {
        let words: [SignalPolicy.Action: String] = [
            .stop: "stop", .reread: "re-read config.xml and the Syncthing access (\"Reload\" below)",
            .ignore: "ignored",
        ]
        var fromReadme: [String: String] = [:]
        for row in try Self.readmeRows() { for name in row.names { fromReadme[name] = row.action } }
        #expect(Set(fromReadme.keys) == Set(SignalPolicy.table.map(\.name)))
        for (name, action) in SignalPolicy.table { #expect(fromReadme[name] == words[action], "\(name)") }
    }

    @Test("stop and re-read are the only signals the service acts on, and a name appears once")
    func shape() {
        #expect(SignalPolicy.names(.stop) == ["SIGTERM", "SIGINT", "SIGQUIT"])
        #expect(SignalPolicy.names(.reread) == ["SIGHUP"])
        #expect(Set(SignalPolicy.table.map(\.name)).count == SignalPolicy.table.count)
    }
}
