import NotifyCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Finds Syncthing's config.xml.
///
/// `candidates(environment:home:isMacOS:)` is the pure search order; `probe(_:fileSystem:)` checks it once;
/// `locate(…)` repeats the probe until config.xml appears or the first-boot wait (SYNCTHING_CONFIG_WAIT_SECONDS)
/// runs out.
package enum ConfigLocator {
    /// Syncthing's default listen address when `<gui><address>` is absent (`lib/config` default tag).
    package static let defaultGUIAddress = "127.0.0.1:8384"

    /// SYNCTHING_CONFIG when set (non-empty): then the only candidate, and every outcome concerns this path.
    package static func explicitPath(environment: [String: String]) -> String? {
        guard let path = environment["SYNCTHING_CONFIG"], !path.isEmpty else { return nil }
        return path
    }

    /// Paths to try, in order; each names config.xml or a directory that holds it.
    ///
    /// 1. `SYNCTHING_CONFIG` (file or directory). When set, it is the only candidate: an explicit path that is wrong
    ///    must fail, not silently pick up another instance's config.
    /// 2. Syncthing's own `STCONFDIR`, then `STHOMEDIR` (Syncthing's `--config`/`--home`; the official Docker
    ///    image sets the latter).
    /// 3. Syncthing 1.0–1.26 default: `$XDG_CONFIG_HOME/syncthing`, `~/.config/syncthing` (docs/syncthing-versions.md,
    ///    rows 15–16).
    /// 4. Syncthing 1.27+ default for new installs: `$XDG_STATE_HOME/syncthing`, `~/.local/state/syncthing`.
    /// 5. macOS only: `~/Library/Application Support/Syncthing`.
    /// 6. Containers: official image `/var/syncthing/config` (`syncthing/syncthing`, also TrueNAS SCALE's app);
    ///    linuxserver.io `/config`.
    /// 7. NAS packages: Synology SynoCommunity (`--home=$SYNOPKG_PKGVAR`: DSM 7 `/var/packages/syncthing/var`,
    ///    which is `/volume1/@appdata/syncthing`; DSM 6 `/var/packages/syncthing/target/var`); QNAP QPKG
    ///    `/share/CACHEDEV1_DATA/.qpkg/Syncthing/.config/syncthing` (unverified); Unraid appdata
    ///    `/mnt/user/appdata/syncthing` (linuxserver template) and `…/syncthing/config` (official image template);
    ///    TrueNAS SCALE 24.10+ app volume `/mnt/.ix-apps/app_mounts/syncthing/config/config` (derived from the
    ///    truenas/apps template: `/var/syncthing` volume, image home `/var/syncthing/config`).
    ///
    /// Relative directory values are ignored (XDG rule; Syncthing would resolve them against its own working
    /// directory, which is unknown here); a leading `~/` is expanded with `home`. Duplicates are removed.
    /// install/notify.sh searches in this order too (InstallerConfigOrderTests compares the two).
    /// - Parameters:
    ///   - environment: the process environment (`SYNCTHING_CONFIG`, `STCONFDIR`, `STHOMEDIR`, `XDG_CONFIG_HOME`,
    ///     `XDG_STATE_HOME`); empty values count as unset.
    ///   - home: the home directory, or nil when unknown (home-relative candidates are then skipped).
    package static func candidates(environment: [String: String], home: String?, isMacOS: Bool) -> [String] {
        func value(_ name: String) -> String? {
            guard let v = environment[name], !v.isEmpty else { return nil }
            if v.hasPrefix("~/"), let home, home.hasPrefix("/") { return join(home, String(v.dropFirst(2))) }
            return v.hasPrefix("/") ? v : nil
        }
        if let explicit = explicitPath(environment: environment) {
            return [explicit]
        }
        var dirs: [String] = []
        if let v = value("STCONFDIR") { dirs.append(v) }
        if let v = value("STHOMEDIR") { dirs.append(v) }
        let home = home.flatMap { $0.hasPrefix("/") ? $0 : nil }
        if let v = value("XDG_CONFIG_HOME") { dirs.append(join(v, "syncthing")) }
        if let home { dirs.append(join(home, ".config/syncthing")) }
        if let v = value("XDG_STATE_HOME") { dirs.append(join(v, "syncthing")) }
        if let home { dirs.append(join(home, ".local/state/syncthing")) }
        if isMacOS, let home { dirs.append(join(home, "Library/Application Support/Syncthing")) }
        dirs += [
            "/var/syncthing/config",
            "/config",
            "/var/packages/syncthing/var",
            "/volume1/@appdata/syncthing",
            "/var/packages/syncthing/target/var",
            "/share/CACHEDEV1_DATA/.qpkg/Syncthing/.config/syncthing",
            "/mnt/user/appdata/syncthing",
            "/mnt/user/appdata/syncthing/config",
            "/mnt/.ix-apps/app_mounts/syncthing/config/config",
        ]
        var seen: Set<String> = []
        return dirs.map { join($0, "config.xml") }.filter { seen.insert($0).inserted }
    }

    /// Checks each candidate once, in order.
    ///
    /// A candidate that is a directory stands for `<dir>/config.xml`. The first readable regular file wins. Probing
    /// goes on past one that exists but is unreadable; those are remembered. A config.xml hidden behind its own config
    /// directory (which exists but cannot be searched, e.g. mode 0700 for another uid) is remembered as that
    /// directory; one hidden further up is not (most likely unrelated, e.g. another user's home), unless `explicit`
    /// (the candidate is SYNCTHING_CONFIG, so whatever blocks it is the operator's concern).
    /// - Returns: `.found`, else `.unreadable` with the first blocked file (or blocked directory when there is no
    ///   file), else `.notFound`.
    package static func probe(
        _ candidates: [String], fileSystem: some ConfigFileSystem, explicit: Bool = false
    ) -> ConfigLocation {
        var blockedFiles: [BlockedConfig] = []
        var blockedDirectories: [BlockedConfig] = []
        for candidate in candidates {
            var path = candidate
            var status = fileSystem.status(of: path)
            if case .directory = status {
                path = join(path, "config.xml")
                status = fileSystem.status(of: path)
            }
            switch status {
            case .missing, .directory, .other:
                continue
            case .file(let info):
                if fileSystem.isReadable(path) { return .found(ConfigFileLocation(path: path)) }
                blockedFiles.append(
                    BlockedConfig(
                        path: path, isDirectory: false, info: info, ownerName: fileSystem.userName(uid: info.ownerUID)))
            case .hidden:
                let ownDirectories = [parent(of: path), parent(of: candidate)]
                var current = path
                while current != "/" {
                    current = parent(of: current)
                    switch fileSystem.status(of: current) {
                    case .hidden, .missing: continue
                    case .directory(let info) where explicit || ownDirectories.contains(current):
                        blockedDirectories.append(
                            BlockedConfig(
                                path: current, isDirectory: true, info: info,
                                ownerName: fileSystem.userName(uid: info.ownerUID)))
                    default: break
                    }
                    break
                }
            }
        }
        if let blocked = blockedFiles.first ?? blockedDirectories.first { return .unreadable(blocked) }
        return .notFound(searched: candidates)
    }

    /// Probes until config.xml is found or `wait` has passed (first boot of a Syncthing + sidecar pair: Syncthing
    /// writes config.xml a moment after both containers start).
    ///
    /// Returns at once on `.found` and on `.unreadable`, a file or a directory that this process may not read
    /// (EACCES: waiting does not change permissions). A missing file is probed again every
    /// `pollInterval` until `wait` is over; then the last probe's result is returned. `wait == .zero` probes
    /// exactly once.
    /// - Parameters:
    ///   - explicit: the one candidate is SYNCTHING_CONFIG (see `probe(_:fileSystem:explicit:)`).
    ///   - wait: SYNCTHING_CONFIG_WAIT_SECONDS.
    ///   - pollInterval: time between probes (default `ConfigWait.defaultPollInterval`, 1 s).
    ///   - clock: the process's clocks (`SystemClock`); the wait sleeps on the monotonic one.
    ///   - logger: gets one `configWaiting` record (with the wait as `duration`) when the first probe misses.
    package static func locate(
        candidates: [String], fileSystem: some ConfigFileSystem, explicit: Bool = false, wait: Duration,
        pollInterval: Duration = ConfigWait.defaultPollInterval, clock: some HostClock, logger: Logger? = nil
    ) -> ConfigLocation {
        // When to look again and when to give up: `ConfigWait`.
        var decision = ConfigWait(wait: wait, pollInterval: pollInterval, start: clock.now())
        while true {
            let result = probe(candidates, fileSystem: fileSystem, explicit: explicit)
            let look: ConfigWait.Look =
                switch result {
                case .found: .found
                case .unreadable: .blocked
                case .notFound: .missing
                }
            switch decision.next(after: look, now: clock.now()) {
            case .stop:
                return result
            case .lookAgain(let at, let announce):
                if announce { logger?.log(.info, .configWaiting, .duration(wait)) }
                clock.sleep(until: at)
            }
        }
    }

    /// Why SYNCTHING_CONFIG's `path` gave no config.xml, once the wait is over: a path that does not
    /// exist *yet* is temporary, one that cannot be a config.xml is a configuration error. Looks at the path, its
    /// `config.xml`, its parent and the ancestors above as `MissingConfig.explain` asks (which states the rule); a
    /// path this process may not look at counts as a file (reported as `.unreadable` by the probe; the next start
    /// reads it).
    /// - Returns: `.explicitPath` naming `path` (`path/config.xml` when `path` is a directory whose config.xml is
    ///   not there yet or not a file).
    package static func explainMissing(_ path: String, fileSystem: some ConfigFileSystem) -> ConfigFileError {
        // The file-system facts are gathered here; which problem they make is `MissingConfig.explain`.
        func entry(_ path: String) -> MissingConfig.Entry {
            switch fileSystem.status(of: path) {
            case .missing: .missing
            case .file, .hidden: .file
            case .directory: .directory
            case .other: .other
            }
        }
        let inner = join(path, "config.xml")
        let parentPath = parent(of: path)
        let above = sequence(first: parentPath) { $0 == "/" ? nil : parent(of: $0) }.dropFirst().lazy.map { ancestor in
            (entry: entry(ancestor), emptyDirectory: { fileSystem.isEmptyDirectory(ancestor) })
        }
        let found = MissingConfig.explain(
            path: entry(path), inner: { entry(inner) }, isEmpty: { fileSystem.isEmptyDirectory(path) },
            parent: { entry(parentPath) }, above: above)
        return .explicitPath(found.atInner ? inner : path, found.problem)
    }

    /// `$HOME` when set and absolute, else the home directory of the effective uid's line in `/etc/passwd` (read
    /// directly, never through NSS: see `PasswdFile`), else nil.
    /// - Parameter passwdEntry: looks a uid up (default `PasswdFile.entry(uid:path:)`); injectable for tests.
    package static func homeDirectory(
        environment: [String: String], uid: UInt32 = UInt32(geteuid()),
        passwdEntry: (UInt32) -> PasswdFile.Entry? = { PasswdFile.entry(uid: $0) }
    ) -> String? {
        if let home = environment["HOME"], home.hasPrefix("/") { return home }
        return passwdEntry(uid)?.home
    }

    /// True on macOS builds.
    package static var isMacOS: Bool {
        #if os(macOS)
            true
        #else
            false
        #endif
    }

    static func join(_ directory: String, _ name: String) -> String {
        var dir = Substring(directory)
        while dir.count > 1 && dir.hasSuffix("/") { dir = dir.dropLast() }
        return dir == "/" ? "/" + name : "\(dir)/\(name)"
    }

    static func parent(of path: String) -> String {
        ConfigFileLocation(path: path).directory
    }
}
