/// An invalid environment variable: which one, what is wrong, and what it accepts. Never carries the value.
///
/// The process exits with `exitStatus` (78, `EX_CONFIG` from sysexits.h) on this error.
package struct ConfigurationError: Error, Sendable, Equatable {
    /// What is wrong with a value, as a fixed phrase that never includes the value.
    package enum Problem: String, Error, Sendable, Equatable, CaseIterable {
        case missing = "is not set"
        case whitespace = "contains whitespace or control characters"
        case notAURL = "is not an absolute URL"
        case unsupportedScheme = "has an unsupported scheme"
        case insecureScheme = "uses http:// for a host that is not loopback"
        case userInfo = "contains a user name or password"
        case query = "contains a query"
        case fragment = "contains a fragment"
        case noHost = "has no host"
        case hasPath = "has a path"
        case badSocketPath = "is not a usable unix-socket path"
        case notAbsolutePath = "is not an absolute path"
        case unknownValue = "is not one of the accepted words"
        case notANumber = "is not a number"
        case notAWholeNumber = "is not a whole number"
        case surroundingSpace = "has spaces, tabs or line breaks around its value"
        case empty = "is set but empty"
        case outOfRange = "is out of range"
        case belowDebounce = "is below DEBOUNCE_SECONDS"
        case notAnAddress = "is not a Syncthing GUI address"
        // METRICS_FILE's place (`MetricsFilePlace`), found on the file system at start.
        case isADirectory = "names a directory, not a file"
        case notARegularFile = "names something that is not a regular file (a device, a pipe, a socket or a link)"
        case directoryMissing = "names a file in a directory that does not exist"
        case directoryNotADirectory = "names a file below something that is not a directory"
        case directoryNotWritable = "names a file in a directory this user cannot write"
        case readOnlyFileSystem = "names a file on a file system that is read-only here"
    }

    /// Exit status for a configuration error: 78 (`EX_CONFIG`).
    package static let exitStatus: Int32 = 78

    /// The variable at fault.
    package var variable: ConfigVariable
    /// What is wrong.
    package var problem: Problem
    /// Fixed text describing what the variable accepts (`accepts(_:)`).
    package var accepts: String

    package init(_ variable: ConfigVariable, _ problem: Problem) {
        self.variable = variable
        self.problem = problem
        self.accepts = Self.accepts(variable)
    }

    /// Log-safe code: always `config.invalid`.
    package var code: ErrorCode { .configInvalid }

    /// One line for stderr: `RELAY_URL: <what is wrong>; expected <accepts>`. Never contains the value.
    package var message: String { "\(variable.rawValue): \(problem.rawValue); expected \(accepts)" }

    /// What to do about it, one sentence naming the variable (never the value).
    package var fix: String {
        switch (variable, problem) {
        case (.relayURL, _):
            "Set RELAY_URL to the relay's base URL, e.g. RELAY_URL=https://relay.vaultsync.eu (http:// only for a "
                + "relay on loopback)."
        case (.debounceMaxSeconds, .belowDebounce):
            "Set DEBOUNCE_MAX_SECONDS to at least DEBOUNCE_SECONDS, or unset it."
        case (_, .surroundingSpace):
            "Remove the spaces around \(variable.rawValue)'s value (an env file and docker --env-file keep them)."
        case (.metricsFile, .isADirectory):
            "Add a file name ending in .prom to METRICS_FILE, e.g. vaultsync-notify.prom after the directory."
        case (.metricsFile, .notARegularFile):
            "Point METRICS_FILE at a new or regular file ending in .prom in node_exporter's textfile directory: the "
                + "service replaces the file at that path with its own."
        case (.metricsFile, .directoryMissing), (.metricsFile, .directoryNotADirectory):
            "Create METRICS_FILE's directory, writable by the service's user (install -d -o USER -m 0755 DIR), or "
                + "point METRICS_FILE into an existing one."
        case (.metricsFile, .directoryNotWritable):
            "Let the service's user write in METRICS_FILE's directory (chown USER DIR), or point METRICS_FILE into "
                + "a directory it can write."
        case (.metricsFile, .readOnlyFileSystem):
            "Under systemd (ProtectSystem=strict) name METRICS_FILE's directory in ReadWritePaths= of a drop-in "
                + "(systemctl edit vaultsync-notify: [Service] ReadWritePaths=DIR); in a container with a read-only "
                + "root, mount a volume on that directory."
        case (.metricsFile, _):
            "Set METRICS_FILE to an absolute path in node_exporter's textfile directory, or unset it to write no "
                + "metrics."
        case (.syncthingAPIKey, .empty):
            "Set SYNCTHING_API_KEY to Syncthing's API key, or remove the line to read the key from config.xml."
        default:
            "Set \(variable.rawValue) to \(accepts), or unset it for its default."
        }
    }

    /// What each variable accepts, in words.
    package static func accepts(_ variable: ConfigVariable) -> String {
        switch variable {
        case .relayURL:
            "an https:// URL with a host, optional port and path, e.g. https://relay.vaultsync.eu "
                + "(http:// only for 127.0.0.0/8, ::1 or localhost), without user name, query or fragment"
        case .syncthingAPIKey, .stGUIAPIKey:
            "Syncthing's API key (Settings > GUI > API Key): non-empty, without whitespace or control characters"
        case .syncthingAPIURL:
            "the Syncthing GUI URL, http:// or https:// with a host and optional port and no path, user name, query "
                + "or fragment (e.g. http://syncthing:8384), or an absolute unix-socket path "
                + "(/..., unix:///..., unixs:///...)"
        case .syncthingConfig:
            "an absolute path to Syncthing's config.xml or to the directory holding it"
        case .startupAnnounce:
            "true or false (also 1/0, yes/no, on/off)"
        case .configWaitSeconds:
            "a whole number of seconds from 0 to 86400"
        case .debounceSeconds:
            "seconds from 0 to 3600, decimals allowed (e.g. 0.5)"
        case .debounceMaxSeconds:
            "seconds from DEBOUNCE_SECONDS up to 86400, decimals allowed"
        case .watchedFolders:
            "comma-separated Syncthing folder IDs without control characters, or empty for all folders"
        case .staleRetriggerSeconds:
            "0 to disable, or a whole number of seconds from 10 to 31536000"
        case .relayWindowSeconds:
            "0 to disable, or a whole number of seconds from 1 to 3600"
        case .logLevel:
            "error, warn, info or debug"
        case .logFormat:
            "text or json"
        case .metricsFile:
            "an absolute path of a file in an existing directory this user can write (node_exporter's textfile "
                + "collector reads only files whose names end in .prom)"
        case .stGUIAddress:
            "a Syncthing GUI address as Syncthing reads it: host:port, http://host:port, https://host:port, "
                + "unix:///path or unixs:///path"
        }
    }
}
