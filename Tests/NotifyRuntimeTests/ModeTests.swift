import Foundation
import NotifyCore
import NotifyTestSupport
import Testing

@testable import NotifyRuntime

@Suite("Command line")
struct ModeTests {
    @Test(
        "modes",
        arguments: [
            ([], Mode.run), (["--version"], .version), (["-V"], .version), (["--help"], .help), (["-h"], .help),
            (["--doctor"], .doctor(json: false, trigger: true)),
            (["--doctor", "--json"], .doctor(json: true, trigger: true)),
            (["--no-trigger", "--doctor"], .doctor(json: false, trigger: false)),
            (["--doctor", "--json", "--no-trigger"], .doctor(json: true, trigger: false)),
            (["--healthcheck"], .healthcheck),
            (["--status"], .status(json: false)), (["--status", "--json"], .status(json: true)),
            (["--json", "--status"], .status(json: true)),
        ])
    func parse(args: [String], mode: Mode) {
        #expect(Mode.parse(["vaultsync-notify"] + args) == mode)
    }

    @Test(
        "usage errors",
        arguments: [
            (["--bogus"], "unknown option '--bogus'"),
            (["--api-key=SECRET"], "unknown option '--api-key'"),
            (["--x=1", "--doctor"], "unknown option '--x'"),
            (["-\u{1B}[31m"], "unknown option (not shown)"),
            (["RELAY_URL=x"], "unexpected argument; configuration comes from the environment, not the command line"),
            (["--help", "--version"], "modes cannot be combined: --help and --version"),
            (["--doctor", "--healthcheck"], "modes cannot be combined: --doctor and --healthcheck"),
            (["--doctor", "--doctor"], "--doctor given twice"),
            (["-h", "--help"], "--help given twice"),
            (["--json"], "--json is only valid with --doctor or --status"),
            (["--healthcheck", "--no-trigger"], "--no-trigger is only valid with --doctor"),
            (["--version", "--json"], "--json is only valid with --doctor or --status"),
            (["--healthcheck", "--json"], "--json is only valid with --doctor or --status"),
            (["--status", "--no-trigger"], "--no-trigger is only valid with --doctor"),
            (["--status", "--healthcheck"], "modes cannot be combined: --status and --healthcheck"),
            (["--status", "--json", "--json"], "--json given twice"),
        ])
    func usage(args: [String], message: String) {
        #expect(Mode.parse(["vaultsync-notify"] + args) == .usage(message))
    }

    @Test("the process's environment as read from environ matches getenv")
    func processEnvironment() throws {
        let environment = App.processEnvironment()
        let path = try #require(getenv("PATH"))
        #expect(environment["PATH"] == String(cString: path))
        #expect(environment.count == ProcessInfo.processInfo.environment.count)
    }

    @Test("a secret typed as an argument is never echoed")
    func noEcho() {
        guard case .usage(let message) = Mode.parse(["vaultsync-notify", "--key=hunter2hunter2"]) else {
            Issue.record("not a usage error")
            return
        }
        #expect(!message.contains("hunter2"))
    }

    @Test("--help names every mode")
    func helpListsModes() {
        for name in [
            "--check-config", "--doctor", "--json", "--no-trigger", "--healthcheck", "--status", "--version", "--help",
        ] {
            #expect(Mode.helpText.contains(name), "\(name) missing from --help")
        }
    }

    /// Every variable name the program reads: the code's lists (`ConfigVariable`, `CAVariable`, the state file's
    /// instance variables) and every literal name read in the sources (`environment["…"]`, `getenv("…")`,
    /// ConfigLocator's `value("…")`), so that a variable added anywhere must be added to --help too.
    static func variablesRead() throws -> Set<String> {
        var names = Set(ConfigVariable.allCases.map(\.rawValue) + CAVariable.allCases.map(\.rawValue))
        names.formUnion(StateFile.instanceVariables)
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources")
        let pattern = try Regex(#"(?:environment\[|getenv\(|value\()"([A-Za-z_][A-Za-z0-9_]*)""#)
        for module in ["NotifyCore", "NotifyRuntime", "vaultsync-notify"] {
            let dir = sources.appendingPathComponent(module)
            // Recursive: the sources sit in folders by concern.
            let files = FileManager.default.enumerator(atPath: dir.path)?.compactMap { $0 as? String } ?? []
            for file in files where file.hasSuffix(".swift") {
                let text = try String(contentsOf: dir.appendingPathComponent(file), encoding: .utf8)
                for match in text.matches(of: pattern) {
                    if let name = match.output[1].substring { names.insert(String(name)) }
                }
            }
        }
        return names
    }

    @Test("--help names every environment variable the program reads")
    func helpListsVariables() throws {
        let names = try Self.variablesRead()
        // The scan must see the literal reads, or it proves nothing.
        #expect(names.isSuperset(of: ["RUNTIME_DIRECTORY", "NO_COLOR", "HOME", "XDG_CONFIG_HOME", "NOTIFY_SOCKET"]))
        for name in names.sorted() {
            #expect(Mode.helpText.contains(name), "\(name) missing from --help")
        }
    }
}
