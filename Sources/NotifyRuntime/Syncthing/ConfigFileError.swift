import NotifyCore

/// Why config.xml could not be used. Texts never include the API key or any file content, and name a path only for
/// `.explicitPath`, the path the operator gave in SYNCTHING_CONFIG (printed once to stderr before the service starts,
/// by `--check-config` and by the doctor; never logged: log records carry `code` only).
package enum ConfigFileError: Error, Sendable, Equatable {
    /// Why the path SYNCTHING_CONFIG names is not (or not yet) a config.xml, once the first-boot wait is over
    /// (`MissingConfig.explain` decides).
    package typealias ExplicitPathProblem = MissingConfig.Problem

    /// Why a file is not a usable config.xml.
    package enum MalformedReason: String, Sendable, Equatable, CaseIterable {
        /// libxml2 rejected it: not well-formed, or cut short.
        case notXML = "is not well-formed XML or is cut short"
        /// A DOCTYPE or entity declaration; refused before parsing so that no entity is expanded and no external file
        /// or URL is read (XXE, billion laughs). Syncthing never writes one.
        case doctype = "contains a DOCTYPE or entity declaration, which Syncthing never writes"
        /// Contains NUL bytes or does not start with `<`: not the UTF-8 text Syncthing writes.
        case encoding = "is not UTF-8 XML text"
        /// The root element is not `<configuration>`.
        case notSyncthingConfig = "has no <configuration> root element"
        /// `<gui tls>` or `<gui enabled>` is not a Go boolean (`1 t T TRUE true True 0 f F FALSE false False`).
        case invalidBoolean = "has a <gui> tls or enabled attribute that is not a boolean"
    }

    /// No file at the path (ENOENT, ENOTDIR); from a search (SYNCTHING_CONFIG unset), nothing at any candidate.
    case notFound
    /// SYNCTHING_CONFIG names a path that is no config.xml once the wait is over (`ExplicitPathProblem`).
    case explicitPath(String, ExplicitPathProblem)
    /// The file exists but cannot be opened (EACCES/EPERM or another error). Owner and permission bits are those of
    /// the file, or, with `directory` true, of the directory on the way that cannot be searched; nil when even that
    /// cannot be seen.
    case unreadable(permissions: UInt32?, ownerUID: UInt32?, ownerGID: UInt32?, directory: Bool = false)
    /// The path names a directory, FIFO, socket or device.
    case notRegularFile
    /// Larger than `SyncthingConfigFile.maxBytes`.
    case tooLarge(limitBytes: Int)
    /// Not a config.xml the sidecar will read.
    case malformed(MalformedReason)
    /// `<configuration>` has no `<gui>` child.
    case noGUIElement

    /// Stable, log-safe code.
    package var code: ErrorCode {
        switch self {
        case .notFound: .configNotFound
        case .explicitPath(_, .notAFile): .configUnreadable
        case .explicitPath: .configNotFound
        case .unreadable, .notRegularFile, .tooLarge: .configUnreadable
        case .malformed, .noGUIElement: .configMalformed
        }
    }

    /// True when waiting may fix it, so a service manager should start the process again (exit 75): config.xml
    /// was not found by the search, or SYNCTHING_CONFIG names a path whose problem may still go away
    /// (`MissingConfig.Problem.mayStillAppear`: a late mount, a Syncthing slow on first boot). Everything else is a
    /// configuration error (78).
    package var isTemporary: Bool {
        switch self {
        case .notFound: true
        case .explicitPath(_, let problem): problem.mayStillAppear
        default: false
        }
    }

    /// What is wrong, one line, naming the path SYNCTHING_CONFIG gave (for a person: `--check-config`, `--doctor`,
    /// a service started from a terminal); `message(showingPath: false)` for a service's log.
    package var message: String { message(showingPath: true) }

    /// What is wrong, one line. With `showingPath` false no path appears, as the privacy rule asks of everything
    /// that reaches a service's log (journald, `docker logs`, a launchd or OpenRC log file).
    package func message(showingPath: Bool) -> String {
        switch self {
        case .notFound: "Syncthing's config.xml was not found"
        case .explicitPath(let path, let problem) where showingPath:
            switch problem {
            case .notThereYet:
                "Syncthing's config.xml is not there (yet) at \(path), the path SYNCTHING_CONFIG names"
            case .directoryWithoutConfig:
                "SYNCTHING_CONFIG names the directory \(path), which holds no config.xml"
            case .noParentDirectory:
                "SYNCTHING_CONFIG names \(path), but its directory \(ConfigLocator.parent(of: path)) does not exist"
            case .notAFile:
                "SYNCTHING_CONFIG names \(path), which is not a regular file"
            }
        case .explicitPath(_, let problem):
            switch problem {
            case .notThereYet: "Syncthing's config.xml is not there (yet) at the path SYNCTHING_CONFIG names"
            case .directoryWithoutConfig: "SYNCTHING_CONFIG names a directory that holds no config.xml"
            case .noParentDirectory: "SYNCTHING_CONFIG names a path whose directory does not exist"
            case .notAFile: "SYNCTHING_CONFIG names something that is not a regular file"
            }
        case .unreadable(let mode, let uid, let gid, let directory):
            if let uid, let gid {
                (directory
                    ? "Syncthing's config.xml cannot be reached by this process: a directory on its path cannot be "
                        + "searched"
                    : "Syncthing's config.xml cannot be read by this process")
                    + " (\(directory ? "directory " : "")owner uid:gid \(uid):\(gid)"
                    + (mode.map { ", mode " + octal($0) } ?? "") + ")"
            } else {
                "Syncthing's config.xml cannot be read by this process"
            }
        case .notRegularFile: "the config.xml path is not a regular file"
        case .tooLarge(let limit): "config.xml is larger than \(limit / (1 << 20)) MiB"
        case .malformed(let reason): "config.xml " + reason.rawValue
        case .noGUIElement: "config.xml has no <gui> element"
        }
    }

    /// What to do about it, one or two sentences.
    package var fix: String {
        switch self {
        case .notFound:
            Self.notFoundFix(inContainer: Container.current)
        case .explicitPath(_, .notThereYet):
            "Nothing to change if Syncthing, or the volume that holds its config, is still starting: the service "
                + "manager starts vaultsync-notify again (exit 75). Otherwise start Syncthing once so that it writes "
                + "config.xml, or correct SYNCTHING_CONFIG (`syncthing serve --paths` prints the path)."
        case .explicitPath(_, .directoryWithoutConfig):
            "Point SYNCTHING_CONFIG at Syncthing's config directory or at its config.xml (`syncthing serve --paths` "
                + "prints it)."
        case .explicitPath(_, .noParentDirectory):
            "Correct SYNCTHING_CONFIG (`syncthing serve --paths` prints Syncthing's config path), or mount Syncthing's "
                + "config directory there; on a volume that mounts late, start vaultsync-notify after the mount "
                + "(systemd `RequiresMountsFor=`)."
        case .explicitPath(_, .notAFile):
            "Point SYNCTHING_CONFIG at config.xml itself or at the directory that holds it."
        case .unreadable(_, let uid?, let gid?, _):
            Self.runAsOwnerFix(uid: uid, gid: gid)
        case .unreadable:
            "Run vaultsync-notify as the user Syncthing runs as, or set SYNCTHING_API_KEY and SYNCTHING_API_URL so "
                + "config.xml need not be read."
        case .notRegularFile:
            "Point SYNCTHING_CONFIG at config.xml itself or at the directory that holds it."
        case .tooLarge:
            "Syncthing never writes a config.xml this large; check that SYNCTHING_CONFIG names Syncthing's config.xml."
        case .malformed:
            "Check that the file is Syncthing's own, complete config.xml (Syncthing rewrites it when it starts), "
                + "or set "
                + "SYNCTHING_API_KEY and SYNCTHING_API_URL."
        case .noGUIElement:
            "Start Syncthing once so that it writes its <gui> settings, or set SYNCTHING_API_KEY and SYNCTHING_API_URL."
        }
    }

    /// The fix for `.notFound`: in a container the config directory is most likely not mounted; on a plain host the
    /// search looked in another user's home than Syncthing's, or Syncthing runs with a non-default `--home`.
    package static func notFoundFix(inContainer: Bool) -> String {
        inContainer
            ? "Set SYNCTHING_CONFIG to Syncthing's config.xml or its directory (`syncthing serve --paths` prints it), "
                + "or mount Syncthing's config directory into this container."
            : "Set SYNCTHING_CONFIG to Syncthing's config.xml or its directory (`syncthing serve --paths`, run as "
                + "Syncthing's user, prints it), or run vaultsync-notify as the user Syncthing runs as: the search "
                + "looks in this user's home."
    }

    /// "Run as X:Y" advice for Docker, systemd and a root shell; `userName` (from `/etc/passwd`) is named when known.
    /// The root-shell command is util-linux's (`runuser`, `setpriv`), present on every Linux distribution, where sudo
    /// often is not; `setpriv` also takes a uid without a passwd entry (a Docker volume's owner).
    package static func runAsOwnerFix(uid: UInt32, gid: UInt32, userName: String? = nil) -> String {
        let systemd =
            userName.map { "systemd `User=\($0)` and `Group=` of gid \(gid)" }
            ?? "systemd `User=` and `Group=` of uid \(uid) and gid \(gid)"
        let shell =
            userName.map { "`runuser -u \($0) -- vaultsync-notify --doctor`" }
            ?? "`setpriv --reuid=\(uid) --regid=\(gid) --clear-groups vaultsync-notify --doctor`"
        return "Run vaultsync-notify as the owner of Syncthing's config: `docker run --user \(uid):\(gid)` "
            + "(compose `user: \"\(uid):\(gid)\"`), \(systemd), "
            + "or as root \(shell); or set SYNCTHING_API_KEY and SYNCTHING_API_URL so config.xml need not be read."
    }
}
