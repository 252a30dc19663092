import Testing

@testable import NotifyRuntime

@Suite("Command line")
struct ModeTests {
    @Test("modes", arguments: [
        ([], Mode.run), (["--version"], .version), (["-V"], .version), (["--help"], .help), (["-h"], .help),
        (["--bogus"], .usage("unknown argument")), (["RELAY_URL=x"], .usage("unknown argument")),
        (["--help", "--version"], .usage("too many arguments; modes cannot be combined")),
    ])
    func parse(args: [String], mode: Mode) {
        #expect(Mode.parse(["vaultsync-notify"] + args) == mode)
    }

    @Test("--help lists every environment variable the configuration reads")
    func helpListsVariables() {
        for name in ["RELAY_URL", "SYNCTHING_API_KEY", "SYNCTHING_API_URL", "SYNCTHING_CONFIG", "STARTUP_ANNOUNCE",
                     "SYNCTHING_CONFIG_WAIT_SECONDS", "DEBOUNCE_SECONDS", "DEBOUNCE_MAX_SECONDS", "WATCHED_FOLDERS",
                     "STALE_RETRIGGER_SECONDS", "LOG_LEVEL", "STGUIADDRESS", "STGUIAPIKEY"] {
            #expect(Mode.helpText.contains(name), "\(name) missing from --help")
        }
    }
}
