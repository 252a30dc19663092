import NotifyCore
import Testing

private func configuration(_ env: [String: String]) throws -> Configuration {
    var full = ["RELAY_URL": "https://relay.vaultsync.eu"]
    full.merge(env) { _, new in new }
    return try Configuration.parse(environment: full).get()
}

private func gui(_ address: String?, _ key: String?, tls: Bool = false, enabled: Bool = true) -> SyncthingGUIConfig {
    SyncthingGUIConfig(address: address, apiKey: key, tls: tls, enabled: enabled)
}

@Suite("Which source gives Syncthing's address and key")
struct SyncthingAccessRuleTests {
    @Test(
        "the address: SYNCTHING_API_URL, else STGUIADDRESS, else config.xml, else Syncthing's default",
        arguments: [
            (
                ["SYNCTHING_API_URL": "http://syncthing:8384", "STGUIADDRESS": "127.0.0.1:9999"],
                gui("127.0.0.1:7777", "k"), "http://syncthing:8384", SyncthingAccessRule.AddressSource.apiURLVariable
            ),
            (["STGUIADDRESS": "127.0.0.1:9999"], gui("127.0.0.1:7777", "k"), "http://127.0.0.1:9999", .stGUIAddress),
            ([:], gui("127.0.0.1:7777", "k"), "http://127.0.0.1:7777", .configFile),
            ([:], gui(nil, "k"), "http://127.0.0.1:8384", .configFile),
        ] as [([String: String], SyncthingGUIConfig, String, SyncthingAccessRule.AddressSource)])
    func address(
        env: [String: String], file: SyncthingGUIConfig, url: String, source: SyncthingAccessRule.AddressSource
    )
        throws
    {
        let choice = try SyncthingAccessRule.choose(configuration: configuration(env), gui: file).get()
        #expect(choice.endpoint.baseURLs.first == url)
        #expect(choice.source == source)
    }

    @Test(
        "the key: SYNCTHING_API_KEY, else STGUIAPIKEY, else config.xml",
        arguments: [
            (["SYNCTHING_API_KEY": "a", "STGUIAPIKEY": "b"], "a", SyncthingAccessRule.KeySource.apiKeyVariable),
            (["STGUIAPIKEY": "b"], "b", .stGUIAPIKey), ([:], "c", .configFile),
        ] as [([String: String], String, SyncthingAccessRule.KeySource)])
    func key(env: [String: String], key: String, source: SyncthingAccessRule.KeySource) throws {
        let choice = try SyncthingAccessRule.choose(configuration: configuration(env), gui: gui(nil, "c")).get()
        #expect(choice.apiKey == key && choice.keySource == source)
    }

    @Test(
        "what is missing, in the order it is checked",
        arguments: [
            ([:], nil, SyncthingAccessRule.Refusal.configFileNeeded),
            (["SYNCTHING_API_URL": "http://syncthing:8384"], nil, .configFileNeeded),
            ([:], gui("garbage", nil, enabled: false), .invalidAddress),
            ([:], gui(nil, nil, enabled: false), .guiDisabled),
            (["STGUIADDRESS": "127.0.0.1:8384"], gui(nil, "k", enabled: false), .guiDisabled),
            ([:], gui(nil, nil), .noAPIKey),
            (["SYNCTHING_API_URL": "http://syncthing:8384"], gui(nil, nil), .noAPIKey),
        ] as [([String: String], SyncthingGUIConfig?, SyncthingAccessRule.Refusal)])
    func refusals(env: [String: String], file: SyncthingGUIConfig?, refusal: SyncthingAccessRule.Refusal) throws {
        #expect(SyncthingAccessRule.choose(configuration: try configuration(env), gui: file) == .failure(refusal))
    }

    @Test("a disabled GUI does not matter when SYNCTHING_API_URL names the endpoint")
    func disabledGUIWithAnExplicitURL() throws {
        let env = ["SYNCTHING_API_URL": "http://syncthing:8384"]
        let choice = try SyncthingAccessRule.choose(
            configuration: configuration(env), gui: gui(nil, "k", enabled: false)
        )
        .get()
        #expect(choice.source == .apiURLVariable && choice.keySource == .configFile)
    }

    @Test("the certificate is pinned exactly when the chosen endpoint uses TLS")
    func pinsCertificate() throws {
        let tls = try SyncthingAccessRule.choose(configuration: configuration([:]), gui: gui(nil, "k", tls: true)).get()
        let plain = try SyncthingAccessRule.choose(configuration: configuration([:]), gui: gui(nil, "k")).get()
        #expect(tls.pinsCertificate && !plain.pinsCertificate)
    }

    @Test(
        "config.xml is needed without an address or a key in the environment; read without either need only for TLS",
        arguments: [
            ([:], true, true), (["SYNCTHING_API_URL": "http://syncthing:8384"], true, true),
            (["SYNCTHING_API_KEY": "k"], true, true),
            (["STGUIADDRESS": "127.0.0.1:8384", "STGUIAPIKEY": "k"], false, false),
            (["SYNCTHING_API_URL": "http://syncthing:8384", "SYNCTHING_API_KEY": "k"], false, false),
            (["SYNCTHING_API_URL": "https://syncthing:8384", "SYNCTHING_API_KEY": "k"], false, true),
            (["STGUIADDRESS": "https://127.0.0.1:8384", "STGUIAPIKEY": "k"], false, true),
        ] as [([String: String], Bool, Bool)])
    func configFileNeed(env: [String: String], needed: Bool, read: Bool) throws {
        let configuration = try configuration(env)
        #expect(SyncthingAccessRule.needsConfigFile(configuration) == needed)
        #expect(SyncthingAccessRule.readsConfigFile(configuration) == read)
    }
}

@Suite("The order config.xml is looked for in")
struct ConfigSearchOrderTests {
    private let fixedTail = [
        "/var/syncthing/config", "/config", "/var/packages/syncthing/var", "/volume1/@appdata/syncthing",
        "/var/packages/syncthing/target/var", "/share/CACHEDEV1_DATA/.qpkg/Syncthing/.config/syncthing",
        "/mnt/user/appdata/syncthing", "/mnt/user/appdata/syncthing/config",
        "/mnt/.ix-apps/app_mounts/syncthing/config/config",
    ].map { $0 + "/config.xml" }

    @Test("SYNCTHING_CONFIG, when set, is the only candidate, as given")
    func explicit() {
        let env = ["SYNCTHING_CONFIG": "data/st", "STCONFDIR": "/etc/st"]
        #expect(ConfigSearchOrder.candidates(environment: env, home: "/home/u", isMacOS: true) == ["data/st"])
        #expect(ConfigSearchOrder.explicitPath(environment: env) == "data/st")
        #expect(ConfigSearchOrder.explicitPath(environment: ["SYNCTHING_CONFIG": ""]) == nil)
    }

    @Test("Syncthing's variables, then the XDG and home defaults (1.26 before 1.27), macOS's, then the fixed places")
    func order() {
        let env = [
            "STCONFDIR": "/c", "STHOMEDIR": "~/h", "XDG_CONFIG_HOME": "/xc", "XDG_STATE_HOME": "/xs", "HOME": "/other",
        ]
        #expect(
            ConfigSearchOrder.candidates(environment: env, home: "/home/u", isMacOS: true)
                == [
                    "/c", "/home/u/h", "/xc/syncthing", "/home/u/.config/syncthing", "/xs/syncthing",
                    "/home/u/.local/state/syncthing", "/home/u/Library/Application Support/Syncthing",
                ].map { $0 + "/config.xml" } + fixedTail)
    }

    @Test("relative and empty values, and a relative or unknown home, are skipped; duplicates are dropped")
    func skipped() {
        let env = ["STCONFDIR": "rel", "STHOMEDIR": "", "XDG_CONFIG_HOME": "x", "XDG_STATE_HOME": "~/s"]
        #expect(ConfigSearchOrder.candidates(environment: env, home: nil, isMacOS: true) == fixedTail)
        #expect(ConfigSearchOrder.candidates(environment: [:], home: "relative", isMacOS: false) == fixedTail)
        let twice = ["STCONFDIR": "/config/", "STHOMEDIR": "/var/syncthing/config"]
        let list = ConfigSearchOrder.candidates(environment: twice, home: nil, isMacOS: false)
        #expect(list.prefix(2) == ["/config/config.xml", "/var/syncthing/config/config.xml"])
        #expect(list.count == fixedTail.count && Set(list) == Set(fixedTail))
    }

    @Test(
        "joining keeps one slash and the root",
        arguments: [("/a/", "b", "/a/b"), ("/", "b", "/b"), ("/a//", "b", "/a/b")])
    func join(directory: String, name: String, joined: String) {
        #expect(ConfigSearchOrder.join(directory, name) == joined)
    }
}
