extension Engine.Settings {
    /// The engine's tunables as the service runs with them: the policy's from the parsed environment
    /// (DEBOUNCE_SECONDS, DEBOUNCE_MAX_SECONDS, STARTUP_ANNOUNCE, STALE_RETRIGGER_SECONDS, RELAY_WINDOW_SECONDS),
    /// WATCHED_FOLDERS, and the defaults for everything no variable sets.
    /// - Parameters:
    ///   - configuration: the parsed and validated environment (`Configuration.parse(environment:)`).
    ///   - relayTimeout: the relay POST's whole-request limit while running (the relay client's own limit).
    package init(configuration: Configuration, relayTimeout: Duration) {
        self.init(
            policy: WakePolicy.Settings(
                debounce: configuration.debounce, debounceMax: configuration.debounceMax,
                startupAnnounce: configuration.startupAnnounce, staleRetrigger: configuration.staleRetrigger,
                relayWindow: configuration.relayWindow),
            watchedFolders: configuration.watchedFolders, relayTimeout: relayTimeout)
    }
}
