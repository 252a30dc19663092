/// The command line. `vaultsync-notify` runs the service; `--doctor [--json] [--no-trigger]`, `--status [--json]`,
/// `--check-config`, `--healthcheck`, `--version` and `--help` are the other modes, and modes cannot be combined.
/// `--version` and `--help` need no configuration. Nothing secret is ever accepted as an argument (it would show in
/// `ps`): configuration comes from the environment only.
package enum Mode: Sendable, Equatable {
    case run
    /// `--doctor`: run every check and print a checklist (`json`: one JSON document instead). `trigger` is false
    /// with `--no-trigger` (no real wake-up is sent).
    case doctor(json: Bool, trigger: Bool)
    /// `--healthcheck`: silent; exit 0 or 1 (Docker HEALTHCHECK).
    case healthcheck
    /// `--status`: what the running service is doing, from its state file, in a few lines (`json`: one JSON
    /// object); exit 0 when healthy, 1 otherwise, as `--healthcheck`.
    case status(json: Bool)
    /// `--check-config`: check the environment and config.xml with the service's rules, without waiting and
    /// without a network call; exit 0 (one line on stdout), 78 (configuration error) or 75 (config.xml not there
    /// yet). The installer runs it before it changes anything.
    case checkConfig
    case version
    case help
    /// A usage error, with the message to print before the usage line (exit 64).
    case usage(String)

    /// Parses `arguments` (including the program name at index 0).
    ///
    /// - Returns: the mode, or `.usage` with one line: an unknown option (named only when it is a short, plain
    ///   `--word`; anything after `=` is never echoed), a positional argument, two modes, a repeated flag, or
    ///   `--json` without `--doctor` or `--status`, `--no-trigger` without `--doctor`.
    package static func parse(_ arguments: [String]) -> Mode {
        let args = Array(arguments.dropFirst())
        var modes: [String] = []
        var json = false
        var noTrigger = false
        var seen: Set<String> = []
        for arg in args {
            let canonical =
                switch arg {
                case "-V": "--version"
                case "-h": "--help"
                default: arg
                }
            switch canonical {
            case "--doctor", "--status", "--check-config", "--healthcheck", "--version", "--help":
                modes.append(canonical)
            case "--json": json = true
            case "--no-trigger": noTrigger = true
            default:
                guard arg.hasPrefix("-") else {
                    return .usage("unexpected argument; configuration comes from the environment, not the command line")
                }
                return .usage("unknown option \(describe(arg))")
            }
            guard seen.insert(canonical).inserted else { return .usage("\(canonical) given twice") }
        }
        if modes.count > 1 {
            return .usage("modes cannot be combined: \(modes.joined(separator: " and "))")
        }
        let mode = modes.first
        if json && mode != "--doctor" && mode != "--status" {
            return .usage("--json is only valid with --doctor or --status")
        }
        if noTrigger && mode != "--doctor" { return .usage("--no-trigger is only valid with --doctor") }
        switch mode {
        case nil: return .run
        case "--doctor": return .doctor(json: json, trigger: !noTrigger)
        case "--check-config": return .checkConfig
        case "--healthcheck": return .healthcheck
        case "--status": return .status(json: json)
        case "--version": return .version
        default: return .help
        }
    }

    /// `'--name'` for an option made of `-`, letters and digits (up to 40 characters; the part after `=` dropped),
    /// else a generic phrase, so that a secret typed as an argument is never printed back.
    private static func describe(_ arg: String) -> String {
        let name = arg.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let plain = name.utf8.allSatisfy { b in
            b == 0x2D || (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
        }
        return plain && name.utf8.count <= 40 ? "'\(name)'" : "(not shown)"
    }

    package static let usageLine =
        "usage: vaultsync-notify [--doctor [--json] [--no-trigger] | --status [--json] | --check-config | --healthcheck"
        + " | --version | --help]"

    /// What `--version` prints: `vaultsync-notify <version>`.
    package static var versionText: String { "vaultsync-notify \(Version.current)" }

    package static var helpText: String {
        """
        vaultsync-notify \(Version.current): wakes the VaultSync Cloud Relay when this Syncthing server has changes.

        \(usageLine)

        Modes (one at a time):
          (none)             run the service: watch Syncthing's event stream and post a wake-up carrying only
                             this server's Device ID to RELAY_URL
          --doctor           check config.xml, Syncthing, the relay and the peers; print a checklist with a fix
                             for each failure; sends one real wake-up to the relay (exit 0 ok, 1 failed)
            --json           print the same results as one JSON document
            --no-trigger     do not send the wake-up
          --status           what the running service is doing: Syncthing, the last wake-up, the relay, a
                             pending wake-up, the next sweep (from its state file; without RELAY_URL it shows
                             every instance on this host it may read: run it as root; exit 0 healthy, 1 not)
            --json           print the same as one JSON object
          --check-config     check the environment and config.xml as the service would, without waiting and
                             without a network call (exit 0 ok, 78 configuration error, 75 config.xml not
                             there yet)
          --healthcheck      silent health check for Docker HEALTHCHECK (exit 0 healthy, 1 not)
          --version, -V      print the version
          --help, -h         print this help

        Configuration comes from the environment only:

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
          RELAY_WINDOW_SECONDS           the relay's push window, 0 disables (default 30)
          LOG_LEVEL                      error, warn, info or debug (default info)
          LOG_FORMAT                     text or json, one object per line (default text)
          METRICS_FILE                   write Prometheus metrics to this file, for node_exporter's textfile
                                         collector (default: none)
          SSL_CERT_FILE, SSL_CERT_DIR    CA certificates for an https relay: a PEM bundle, OpenSSL hashed
                                         directories (default: the system's usual locations)
          RUNTIME_DIRECTORY              where the state file for --healthcheck and --status goes (default
                                         /run/vaultsync-notify, else /tmp/vaultsync-notify-UID)
          NO_COLOR                       set to anything non-empty: no colour in --doctor output

        Also read, as Syncthing, libcurl, OpenSSL and systemd define them:

          STCONFDIR, STHOMEDIR, XDG_CONFIG_HOME, XDG_STATE_HOME, HOME
                                         where config.xml is searched when SYNCTHING_CONFIG is unset
          http_proxy, HTTPS_PROXY, https_proxy, ALL_PROXY, NO_PROXY
                                         a proxy for the relay, as libcurl reads them (never for Syncthing)
          OPENSSL_CONF                   OpenSSL's configuration file (default /etc/ssl/openssl.cnf)
          NOTIFY_SOCKET, WATCHDOG_USEC, WATCHDOG_PID, JOURNAL_STREAM
                                         set by systemd: readiness, watchdog, journal log lines
          XDG_RUNTIME_DIR                --status without RELAY_URL also looks in its vaultsync-notify

        Exit statuses: 0 ok, 1 --doctor, --healthcheck or --status found a failure, 64 usage, 75 temporary
        failure (e.g. config.xml not there yet), 78 configuration error (a service manager should not restart
        on 64 or 78).
        A fatal error prints one line, then its fix; `vaultsync-notify --doctor` explains it in full.
        """
    }
}
