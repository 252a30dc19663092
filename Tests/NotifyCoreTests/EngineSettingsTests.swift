import Testing

@testable import NotifyCore

@Suite("The engine's settings from the environment")
struct EngineSettingsTests {
    @Test("each variable lands in its setting; the rest keep the engine's defaults")
    func fromEnvironment() throws {
        let configuration = try Configuration.parse(environment: [
            "RELAY_URL": "https://relay.example", "DEBOUNCE_SECONDS": "1.5", "DEBOUNCE_MAX_SECONDS": "40",
            "STARTUP_ANNOUNCE": "no", "STALE_RETRIGGER_SECONDS": "600", "RELAY_WINDOW_SECONDS": "45",
            "WATCHED_FOLDERS": "vault, notes",
        ]).get()
        let settings = Engine.Settings(configuration: configuration, relayTimeout: .seconds(7))
        #expect(
            settings
                == Engine.Settings(
                    policy: WakePolicy.Settings(
                        debounce: .milliseconds(1500), debounceMax: .seconds(40), startupAnnounce: false,
                        staleRetrigger: .seconds(600), relayWindow: .seconds(45)),
                    watchedFolders: ["vault", "notes"], relayTimeout: .seconds(7)))
    }

    @Test("0 switches the sweep and the relay window off; unset variables give the documented defaults")
    func defaultsAndOff() throws {
        let off = try Configuration.parse(environment: [
            "RELAY_URL": "https://relay.example", "STALE_RETRIGGER_SECONDS": "0", "RELAY_WINDOW_SECONDS": "0",
        ]).get()
        #expect(Engine.Settings(configuration: off, relayTimeout: .seconds(20)).policy.staleRetrigger == nil)
        #expect(Engine.Settings(configuration: off, relayTimeout: .seconds(20)).policy.relayWindow == nil)
        let unset = try Configuration.parse(environment: ["RELAY_URL": "https://relay.example"]).get()
        let settings = Engine.Settings(configuration: unset, relayTimeout: .seconds(20))
        #expect(settings.policy.debounce == .seconds(5) && settings.policy.debounceMax == .seconds(30))
        #expect(settings.policy.startupAnnounce && settings.policy.staleRetrigger == .seconds(21_600))
        #expect(settings.policy.relayWindow == .seconds(30) && settings.watchedFolders.isEmpty)
    }
}
