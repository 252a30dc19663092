/// The command line: `vaultsync-notify` runs the service; `--version` and `--help` need no configuration.
/// Nothing secret is ever accepted as an argument (it would show in `ps`): configuration is environment only.
public enum Mode: Sendable, Equatable {
    case run
    case version
    case help
    /// A usage error, with the message to print before the usage line (exit 64).
    case usage(String)

    public static func parse(_ arguments: [String]) -> Mode {
        let args = Array(arguments.dropFirst())
        guard let first = args.first else { return .run }
        if args.count > 1 { return .usage("too many arguments; modes cannot be combined") }
        switch first {
        case "--version", "-V": return .version
        case "--help", "-h": return .help
        default: return .usage("unknown argument")
        }
    }

    public static let usageLine = "usage: vaultsync-notify [--help | --version]"

    public static var helpText: String {
        """
        vaultsync-notify \(Version.current): wakes the VaultSync Cloud Relay when this Syncthing server has changes.

        \(usageLine)

        Runs as a service: watches Syncthing's event stream and posts a wake-up carrying only this server's
        Device ID to RELAY_URL. Configuration comes from the environment only:

          RELAY_URL                      (required) relay base URL; https, or http for a loopback host
          SYNCTHING_API_KEY              API key; default: read from config.xml
          SYNCTHING_API_URL              http(s) URL or unix-socket path; default: read from config.xml
          SYNCTHING_CONFIG               path of config.xml or its directory; default: searched
          STGUIADDRESS, STGUIAPIKEY      Syncthing's own overrides, honoured as Syncthing does
          STARTUP_ANNOUNCE               send one wake-up at start (default true)
          SYNCTHING_CONFIG_WAIT_SECONDS  wait for config.xml to appear (default 60)
          DEBOUNCE_SECONDS               quiet time before a wake-up (default 5)
          DEBOUNCE_MAX_SECONDS           longest a stream of changes may delay it (default 30)
          WATCHED_FOLDERS                comma-separated folder IDs (default: all)
          STALE_RETRIGGER_SECONDS        stale-peer sweep cadence, 0 disables (default 21600)
          LOG_LEVEL                      error, warn, info or debug (default info)

        Exit statuses: 0 stopped, 64 usage, 75 temporary failure, 78 configuration error
        (a service manager should not restart on 64 or 78).
        """
    }
}
