/// Where Syncthing's config.xml may be, in the order the helper looks for it: a pure rule over the environment,
/// the home directory and the platform. `ConfigLocator` (NotifyRuntime) probes the paths it gives.
package enum ConfigSearchOrder {
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
    ///   - home: the home directory, or nil when unknown (home-relative candidates are then skipped; so is a
    ///     relative one).
    ///   - isMacOS: whether to look in `~/Library/Application Support/Syncthing`.
    /// - Returns: absolute paths (only SYNCTHING_CONFIG is taken as given), each ending in `config.xml` except
    ///   SYNCTHING_CONFIG's; never empty.
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

    /// `directory` and `name` joined by one `/`: trailing slashes of `directory` dropped, `/` kept as the root.
    package static func join(_ directory: String, _ name: String) -> String {
        var dir = Substring(directory)
        while dir.count > 1 && dir.hasSuffix("/") { dir = dir.dropLast() }
        return dir == "/" ? "/" + name : "\(dir)/\(name)"
    }
}
