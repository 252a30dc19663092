import NotifyCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `--status` without the service's environment: finds every state file on the host that this user may read and
/// judges each from the file alone (`HealthVerdict.fromStateFile`: its writer alive, its last successful poll within
/// `ServiceState.maxPollAge`); Syncthing is not asked, since its address and key are the service's. Carries out I/O
/// only; `StatusOverview` decides what is shown.
///
/// Where each install mode's service keeps its file (`StateFile.locate`), and so where this looks:
/// - `<run>/vaultsync-notify`: the installer's systemd unit (`RuntimeDirectory=`) and OpenRC service, and any
///   service run as root without RUNTIME_DIRECTORY; `<run>/vaultsync-notify-*`: a copy of the unit for a second
///   Syncthing instance, with its own `RuntimeDirectory=vaultsync-notify-<name>`;
/// - `$XDG_RUNTIME_DIR/vaultsync-notify`, and as root every `<run>/user/<uid>/vaultsync-notify`: the unit run as a
///   per-user unit (`systemctl --user`; its `RuntimeDirectory=` is below the user's runtime directory);
/// - `<tmp>/vaultsync-notify-<uid>`, as root every `<tmp>/vaultsync-notify-*`: launchd on macOS, a binary run by hand
///   by a user other than root;
/// - `$RUNTIME_DIRECTORY`, when set.
/// A Docker container's file is inside the container: `docker exec <container> vaultsync-notify --status`.
///
/// Safety as root, reading directories of other users: a directory is read only when it is a real directory (not a
/// symlink) closed to writes by group and others; a file only when it is a regular file (opened without following a
/// symlink, without blocking) owned by the directory's owner, and at most `ServiceState.maxBytes` + 1 bytes of it.
/// What is shown comes from the parsed state (times, counts, categories), never the file's bytes.
package struct StatusDiscovery: Sendable {
    /// The run directory (`/run`); a test gives a temporary one.
    package var run = "/run"
    /// The temporary directory (`/tmp`); a test gives a temporary one.
    package var tmp = "/tmp"
    /// The effective user id.
    package var uid: uid_t = geteuid()
    /// The caller's environment: XDG_RUNTIME_DIR and RUNTIME_DIRECTORY are read.
    package var environment: [String: String] = [:]

    package init(environment: [String: String]) {
        self.environment = environment
    }

    var root: Bool { uid == 0 }

    /// The places to look in, as shown in the none line: a directory, or a directory pattern ending in `*`.
    var places: [String] {
        var places: [String] = []
        if let runtime = environment["RUNTIME_DIRECTORY"]?.split(separator: ":").first, runtime.hasPrefix("/") {
            places.append(String(runtime))
        }
        places.append(run + "/vaultsync-notify")
        // A second unit for another Syncthing instance, with its own RuntimeDirectory=vaultsync-notify-<name>.
        places.append(run + "/vaultsync-notify-*")
        if let xdg = environment["XDG_RUNTIME_DIR"], xdg.hasPrefix("/") { places.append(xdg + "/vaultsync-notify") }
        if root { places.append(run + "/user/*/vaultsync-notify") }
        places.append(root ? tmp + "/vaultsync-notify-*" : tmp + "/vaultsync-notify-\(uid)")
        var seen = Set<String>()
        return places.filter { seen.insert($0).inserted }
    }

    /// The directories `places` names that exist now, patterns expanded, each once, sorted within a pattern.
    func directories() -> [String] {
        var found: [String] = []
        for place in places {
            guard let star = place.firstIndex(of: "*") else {
                found.append(place)
                continue
            }
            let slash = place[..<star].lastIndex(of: "/") ?? place.startIndex
            let parent = String(place[..<slash])
            let prefix = String(place[place.index(after: slash)..<star])
            let suffix = String(place[place.index(after: star)...])
            for name in Self.names(in: parent) where name.hasPrefix(prefix) && name.count > prefix.count {
                found.append(parent + "/" + name + suffix)
            }
        }
        var seen = Set<String>()
        return found.filter { seen.insert($0).inserted }
    }

    /// The overview at `now` (wall-clock seconds since the Unix epoch).
    package func overview(now: Int64 = SystemClock().unixSeconds()) -> StatusOverview {
        var reports: [StatusReport] = []
        for directory in directories() {
            guard let owner = Self.safeDirectoryOwner(directory) else { continue }
            for name in Self.names(in: directory) where Self.isStateFileName(name) {
                let file = StateFile(path: directory + "/" + name)
                // Another user's file that this user may not read is not this user's to report.
                guard access(file.path, R_OK) == 0 else { continue }
                let read = file.read(uid: owner)
                if read == .missing { continue }  // removed by a clean stop since the listing
                let probe = read.state.map { file.probeWriter(of: $0, owner: owner) } ?? .unknown
                reports.append(
                    StatusReport(
                        state: read.state, health: HealthVerdict.fromStateFile(read, probe: probe, now: now), now: now,
                        liveness: read.state?.liveness(probe, now: now), syncthingAsked: false))
            }
        }
        return StatusOverview(reports: reports, searched: places, root: root)
    }

    /// `state-` and 16 lower-case hex digits (`StateFile.fileName`); not its `.lock`, not a temporary file.
    static func isStateFileName(_ name: String) -> Bool {
        let key = name.utf8.dropFirst(6)
        return name.hasPrefix("state-") && key.count == 16
            && key.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }

    /// The owner of `path` when it is a real directory that neither group nor others may write to.
    static func safeDirectoryOwner(_ path: String) -> uid_t? {
        var st = stat()
        guard lstat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR, (st.st_mode & 0o022) == 0 else { return nil }
        return st.st_uid
    }

    /// The entries of a directory, sorted; none when it cannot be read.
    static func names(in directory: String) -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }
}
