/// Environment variables this program reads. Used in log fields and error messages instead of free text.
package enum ConfigVariable: String, Sendable, CaseIterable {
    case relayURL = "RELAY_URL"
    case syncthingAPIKey = "SYNCTHING_API_KEY"
    case syncthingAPIURL = "SYNCTHING_API_URL"
    case syncthingConfig = "SYNCTHING_CONFIG"
    case startupAnnounce = "STARTUP_ANNOUNCE"
    case configWaitSeconds = "SYNCTHING_CONFIG_WAIT_SECONDS"
    case debounceSeconds = "DEBOUNCE_SECONDS"
    case debounceMaxSeconds = "DEBOUNCE_MAX_SECONDS"
    case watchedFolders = "WATCHED_FOLDERS"
    case staleRetriggerSeconds = "STALE_RETRIGGER_SECONDS"
    case relayWindowSeconds = "RELAY_WINDOW_SECONDS"
    case logLevel = "LOG_LEVEL"
    case logFormat = "LOG_FORMAT"
    case metricsFile = "METRICS_FILE"
    case stGUIAddress = "STGUIADDRESS"
    case stGUIAPIKey = "STGUIAPIKEY"
}
