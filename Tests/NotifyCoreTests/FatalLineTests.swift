import Testing

@testable import NotifyCore

/// The lines a process ends on, in text and under LOG_FORMAT=json.
@Suite("Fatal lines: text in the doctor's shape, one JSON object each under LOG_FORMAT=json")
struct FatalLineTests {
    static let problem = FatalLine(
        "RELAY_URL: is not set; expected an \"https://\" URL", fix: "Set RELAY_URL.", status: .configuration)

    @Test("text: the message, then the fix with the pointer to --doctor; a usage error: message, usage, --help")
    func text() {
        #expect(
            Self.problem.text
                == "vaultsync-notify: RELAY_URL: is not set; expected an \"https://\" URL\n"
                + "  fix: Set RELAY_URL; run `vaultsync-notify --doctor` for details")
        #expect(
            FatalLine.usage("unknown option '--x'", usageLine: "usage: vaultsync-notify [--help]").text
                == "vaultsync-notify: unknown option '--x'\nusage: vaultsync-notify [--help]\n"
                + "Try 'vaultsync-notify --help' for more.")
    }

    @Test("JSON: one object per problem, the same texts escaped, the level and the exit status bare")
    func json() {
        #expect(
            Self.problem.jsonLine(time: "2026-12-06T10:00:00.000Z")
                == #"{"time":"2026-12-06T10:00:00.000Z","level":"error","msg":"RELAY_URL: is not set; expected an \"https://\" URL","fix":"Set RELAY_URL; run `vaultsync-notify --doctor` for details","exit_status":78}"#
        )
        #expect(
            FatalLine.usage("two modes", usageLine: "usage: u").jsonLine()
                == #"{"level":"error","msg":"two modes","usage":"usage: u","fix":"Try 'vaultsync-notify --help' for more.","exit_status":64}"#
        )
        let temporary = FatalLine("config.xml is not there (yet)", fix: "Wait", status: .temporary)
        #expect(temporary.jsonLine().hasPrefix(#"{"level":"warn","#))
        let two = FatalLine.render([Self.problem, temporary], format: .json, journald: false, time: nil)
        #expect(two.split(separator: "\n").count == 2)
        #expect(two.split(separator: "\n").allSatisfy { $0.hasPrefix("{") && $0.hasSuffix("}") })
    }

    @Test(
        "LOG_FORMAT read alone, before anything else: honoured when valid, else text",
        arguments: [
            ([:], LogFormat.text), (["LOG_FORMAT": "json"], .json), (["LOG_FORMAT": "JSON"], .json),
            (["LOG_FORMAT": "text"], .text), (["LOG_FORMAT": ""], .text), (["LOG_FORMAT": "yaml"], .text),
            (["LOG_FORMAT": " json"], .text), (["LOG_FORMAT": "json", "RELAY_URL": "ftp://x"], .json),
        ])
    func logFormatAlone(environment: [String: String], format: LogFormat) {
        #expect(Configuration.logFormat(environment: environment) == format)
        var valid = environment
        valid["RELAY_URL"] = "https://relay.vaultsync.eu"
        if case .success(let configuration) = Configuration.parse(environment: valid) {
            #expect(configuration.logFormat == format, "the same rule as the configuration's")
        }
    }
}
