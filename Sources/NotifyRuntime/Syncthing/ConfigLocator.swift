import NotifyCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Finds Syncthing's config.xml.
///
/// `ConfigSearchOrder.candidates(environment:home:isMacOS:)` (NotifyCore) is the search order;
/// `probe(_:fileSystem:)` checks it once; `locate(…)` repeats the probe until config.xml appears or the first-boot
/// wait (SYNCTHING_CONFIG_WAIT_SECONDS) runs out.
package enum ConfigLocator {
    /// Syncthing's default listen address when `<gui><address>` is absent (`SyncthingAccessRule.defaultGUIAddress`).
    package static let defaultGUIAddress = SyncthingAccessRule.defaultGUIAddress

    /// SYNCTHING_CONFIG when set (non-empty): `ConfigSearchOrder.explicitPath(environment:)`.
    package static func explicitPath(environment: [String: String]) -> String? {
        ConfigSearchOrder.explicitPath(environment: environment)
    }

    /// Paths to try, in order: `ConfigSearchOrder.candidates(environment:home:isMacOS:)`, the rule in NotifyCore.
    package static func candidates(environment: [String: String], home: String?, isMacOS: Bool) -> [String] {
        ConfigSearchOrder.candidates(environment: environment, home: home, isMacOS: isMacOS)
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

    static func join(_ directory: String, _ name: String) -> String { ConfigSearchOrder.join(directory, name) }

    static func parent(of path: String) -> String {
        ConfigFileLocation(path: path).directory
    }
}
