import Testing

@testable import NotifyRuntime

@Suite("Command line")
struct ModeTests {
    @Test("modes", arguments: [
        ([], Mode.run), (["--version"], .version), (["-V"], .version), (["--help"], .help), (["-h"], .help),
        (["--doctor"], .doctor(json: false, trigger: true)), (["--doctor", "--json"], .doctor(json: true, trigger: true)),
        (["--no-trigger", "--doctor"], .doctor(json: false, trigger: false)),
        (["--doctor", "--json", "--no-trigger"], .doctor(json: true, trigger: false)),
        (["--healthcheck"], .healthcheck),
    ])
    func parse(args: [String], mode: Mode) {
        #expect(Mode.parse(["vaultsync-notify"] + args) == mode)
    }

    @Test("usage errors", arguments: [
        (["--bogus"], "unknown option '--bogus'"),
        (["--api-key=SECRET"], "unknown option '--api-key'"),
        (["--x=1", "--doctor"], "unknown option '--x'"),
        (["-\u{1B}[31m"], "unknown option (not shown)"),
        (["RELAY_URL=x"], "unexpected argument; configuration comes from the environment, not the command line"),
        (["--help", "--version"], "modes cannot be combined: --help and --version"),
        (["--doctor", "--healthcheck"], "modes cannot be combined: --doctor and --healthcheck"),
        (["--doctor", "--doctor"], "--doctor given twice"),
        (["-h", "--help"], "--help given twice"),
        (["--json"], "--json is only valid with --doctor"),
        (["--healthcheck", "--no-trigger"], "--no-trigger is only valid with --doctor"),
        (["--version", "--json"], "--json is only valid with --doctor"),
    ])
    func usage(args: [String], message: String) {
        #expect(Mode.parse(["vaultsync-notify"] + args) == .usage(message))
    }

    @Test("a secret typed as an argument is never echoed")
    func noEcho() {
        guard case .usage(let message) = Mode.parse(["vaultsync-notify", "--key=hunter2hunter2"]) else {
            Issue.record("not a usage error")
            return
        }
        #expect(!message.contains("hunter2"))
    }

    @Test("--help lists every environment variable the configuration reads, and every mode")
    func helpListsVariables() {
        for name in ["RELAY_URL", "SYNCTHING_API_KEY", "SYNCTHING_API_URL", "SYNCTHING_CONFIG", "STARTUP_ANNOUNCE",
                     "SYNCTHING_CONFIG_WAIT_SECONDS", "DEBOUNCE_SECONDS", "DEBOUNCE_MAX_SECONDS", "WATCHED_FOLDERS",
                     "STALE_RETRIGGER_SECONDS", "LOG_LEVEL", "LOG_FORMAT", "STGUIADDRESS", "STGUIAPIKEY", "NO_COLOR",
                     "--doctor", "--json", "--no-trigger", "--healthcheck", "--version", "--help"] {
            #expect(Mode.helpText.contains(name), "\(name) missing from --help")
        }
    }
}
