import NotifyCore
import NotifyTestSupport
import Testing

@testable import NotifyRuntime

/// Everything a service run may print goes to its log (journald, `docker logs`, a launchd or OpenRC log file), and
/// the privacy rule says a log names no Device ID, folder ID, path, URL, API key or body. This scans every fatal text
/// the service can print, and every log message, for those shapes and for planted values.
@Suite struct ServiceOutputPrivacyTests {
    static let plantedPath = "/srv/zzprivate/syncthing/config.xml"
    static let plantedKey = "ZZKEYZZ123"
    static let plantedURL = "https://zzprivate.example:8443"

    /// Our own documentation examples, which fix texts may quote; anything else shaped like a URL or a path is a leak.
    static let documentedExamples = [
        "https://relay.vaultsync.eu", "http://syncthing:8384", "http://127.0.0.1:8384", "unix:///...",
        "unixs:///...", "unix:///path", "unixs:///path", "(/...,", "/api/v1", "127.0.0.0/8", "http://host:port",
        "https://host:port",
    ]

    /// Why `text` looks like it carries an identifier, or nil.
    static func leak(in text: String) -> String? {
        for planted in [plantedPath, "zzprivate", plantedKey, plantedURL] where text.contains(planted) {
            return "the planted value \(planted)"
        }
        var rest = text
        for example in documentedExamples { rest = rest.replacing(example, with: "") }
        // A URL: a scheme's :// followed by a host (a bare "http://" names a scheme, as in "uses http:// for").
        var scan = rest[...]
        while let range = scan.range(of: "://") {
            if let next = scan[range.upperBound...].first, !" ,)".contains(next) { return "a URL" }
            scan = scan[range.upperBound...]
        }
        // A path: a token that starts with /, ~/ or ./ (not "yes/no" or "1/0", whose / follows a word).
        let tokens = rest.split(whereSeparator: { " \n\t(=\"'`".contains($0) })
        if let path = tokens.first(where: { $0.hasPrefix("/") || $0.hasPrefix("~/") || $0.hasPrefix("./") }) {
            return "a path (\(path))"
        }
        // A Device ID: eight groups of seven base-32 characters joined by dashes.
        let groups = rest.split(whereSeparator: { !($0.isASCII && ($0.isUppercase || $0.isNumber || $0 == "-")) })
        for word in groups {
            let parts = word.split(separator: "-", omittingEmptySubsequences: false)
            if parts.count == 8 && parts.allSatisfy({ $0.count == 7 }) { return "a Device ID" }
        }
        return nil
    }

    @Test("the scan finds what it looks for")
    func scanFindsLeaks() {
        #expect(Self.leak(in: "at \(Self.plantedPath)") != nil)
        #expect(Self.leak(in: "at /var/lib/syncthing/config.xml") != nil)
        #expect(Self.leak(in: "see ~/.config/syncthing") != nil)
        #expect(Self.leak(in: "GUI at http://10.0.0.2:8384") != nil)
        #expect(Self.leak(in: "device P56IOI7-MZJNU2Y-IQGDREY-DM2MGTI-MGL3BXN-PQ6W5BM-TBBZ4TJ-XZWICQ2 is") != nil)
        #expect(Self.leak(in: "true or false (also 1/0, yes/no, on/off), e.g. https://relay.vaultsync.eu") == nil)
    }

    /// Every `SyncthingAccessError` the start-up can end with, SYNCTHING_CONFIG naming `plantedPath`.
    static let accessErrors: [SyncthingAccessError] = {
        let fileErrors: [ConfigFileError] =
            [
                .notFound, .notRegularFile, .tooLarge(limitBytes: 1 << 20), .noGUIElement,
                .unreadable(permissions: 0o600, ownerUID: 1000, ownerGID: 100),
                .unreadable(permissions: nil, ownerUID: 1000, ownerGID: 100, directory: true),
                .unreadable(permissions: nil, ownerUID: nil, ownerGID: nil),
            ]
            + [.notThereYet, .directoryWithoutConfig, .noParentDirectory, .notAFile].map {
                .explicitPath(plantedPath, $0)
            }
            + [.notXML, .doctype, .encoding, .notSyncthingConfig, .invalidBoolean].map { .malformed($0) }
        return fileErrors.map { .configFile($0) } + [.guiDisabled, .invalidAddress, .noAPIKey]
    }()

    @Test("a service's start-up errors name no path; by hand (a terminal) the path SYNCTHING_CONFIG gave is shown")
    func startupFatalTexts() {
        for error in Self.accessErrors {
            let text = App.serviceFatalText(error, showingPath: false)
            #expect(Self.leak(in: text) == nil, "\(Self.leak(in: text) ?? ""): \(text)")
        }
        let byHand = App.serviceFatalText(.configFile(.explicitPath(Self.plantedPath, .notThereYet)), showingPath: true)
        #expect(byHand.contains(Self.plantedPath))
    }

    @Test("every invalid variable's lines, whatever the value, and a CA variable's, carry no value")
    func environmentFatalTexts() {
        var problems: [(message: String, fix: String)] = []
        for variable in ConfigVariable.allCases {
            for problem in ConfigurationError.Problem.allCases {
                let error = ConfigurationError(variable, problem)
                problems.append((error.message, error.fix))
            }
        }
        problems += CAVariable.allCases.map { ($0.unusableMessage, $0.unusableFix) }
        let text = App.EnvironmentProblems(problems: problems).text
        #expect(Self.leak(in: text) == nil, "\(Self.leak(in: text) ?? "")")

        let env = [
            "RELAY_URL": Self.plantedURL.replacing("https", with: "ftp"), "SYNCTHING_API_KEY": Self.plantedKey + " x",
            "SYNCTHING_CONFIG": "zzprivate/config.xml", "SYNCTHING_API_URL": Self.plantedURL + "/zzprivate",
            "SSL_CERT_FILE": Self.plantedPath, "WATCHED_FOLDERS": "zzprivate\u{1}",
        ]
        guard case .failure(let found) = App.checkEnvironment(env, fileSystem: FakeTrustFileSystem()) else {
            Issue.record("the environment was accepted")
            return
        }
        #expect(found.problems.count == 6)
        #expect(Self.leak(in: found.text) == nil, "\(Self.leak(in: found.text) ?? ""): \(found.text)")
    }

    @Test("the fatal exits of a running service, and every log message, carry no identifier")
    func runningFatalTextsAndLogMessages() {
        var texts = [App.fatalText(RelayClient.notFoundMessage, fix: RelayClient.notFoundFix)]
        for source in [SyncthingAccess.KeySource.apiKeyVariable, .stGUIAPIKey, .configFile] {
            texts.append(App.fatalText(source.rejectedMessage, fix: source.rejectedFix))
        }
        texts += LogMessage.allCases.map(\.rawValue)
        for text in texts {
            #expect(Self.leak(in: text) == nil, "\(Self.leak(in: text) ?? ""): \(text)")
        }
    }

    @Test("a usage error never echoes what was typed after the option name")
    func usageTexts() {
        for argument in ["--relay=\(Self.plantedURL)", "--api-key=\(Self.plantedKey)", Self.plantedPath] {
            guard case .usage(let problem) = Mode.parse(["vaultsync-notify", argument]) else {
                Issue.record("\(argument) was accepted")
                continue
            }
            #expect(Self.leak(in: problem) == nil, "\(problem)")
        }
    }
}
