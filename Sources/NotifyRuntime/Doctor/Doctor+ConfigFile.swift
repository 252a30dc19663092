import NotifyCore

extension Doctor {
    /// `config.file`: config.xml probed once, without the first-boot wait, with the service's own locator.
    /// - Parameter needed: whether the address or the key must come from config.xml.
    /// - Returns: the check, and the lookup the Syncthing access is resolved from.
    static func configFile(needed: Bool, _ env: [String: String], _ deps: Dependencies)
        -> (check: DoctorCheck, lookup: SyncthingAccess.ConfigFileLookup)
    {
        let candidates = ConfigLocator.candidates(environment: env, home: deps.home, isMacOS: deps.isMacOS)
        let explicit = ConfigLocator.explicitPath(environment: env)
        let location = ConfigLocator.probe(candidates, fileSystem: deps.fileSystem, explicit: explicit != nil)
        var lookup = SyncthingAccess.lookup(location, load: deps.loadConfig)
        if case .notFound = location, let explicit {
            // The service's own verdict on SYNCTHING_CONFIG: not there yet, or not a possible config.xml.
            lookup.result = .failure(ConfigLocator.explainMissing(explicit, fileSystem: deps.fileSystem))
        }
        return (configFileCheck(location, lookup, candidates, needed: needed, env: env, deps), lookup)
    }

    private static func configFileCheck(
        _ location: ConfigLocation, _ lookup: SyncthingAccess.ConfigFileLookup, _ candidates: [String],
        needed: Bool, env: [String: String], _ deps: Dependencies
    ) -> DoctorCheck {
        let notNeeded = "not needed: the address and the key come from the environment"
        switch location {
        case .found(let file):
            let index =
                (candidates.firstIndex { $0 == file.path || ConfigLocator.join($0, "config.xml") == file.path }
                    ?? 0) + 1
            let origin =
                (env["SYNCTHING_CONFIG"] ?? "").isEmpty
                ? "candidate \(index) of \(candidates.count) in the search order" : "from SYNCTHING_CONFIG"
            var owner = ""
            if case .file(let info) = deps.fileSystem.status(of: file.path) {
                owner = ", owner uid:gid \(info.ownerUID):\(info.ownerGID)"
            }
            switch lookup.result {
            case .success:
                return .init(
                    .configFile, DoctorVerdict.configFile(.read, needed: needed),
                    "\(file.path) (\(origin))\(owner), readable by this process" + (needed ? "" : "; \(notNeeded)"))
            case .failure(let error):
                return .init(
                    .configFile, DoctorVerdict.configFile(.readFailed, needed: needed),
                    "\(file.path) (\(origin)): \(error.message)", fix: error.fix)
            }
        case .unreadable(let blocked):
            return .init(
                .configFile, DoctorVerdict.configFile(.blocked, needed: needed), "\(blocked.message): \(blocked.path)",
                fix: blocked.fix)
        case .notFound(let searched):
            // The service's verdict on SYNCTHING_CONFIG replaced the lookup's result (see `configFile`).
            let explicit: ConfigFileError? =
                if case .failure(let error) = lookup.result, case .explicitPath = error { error } else { nil }
            let verdict = DoctorVerdict.configFile(explicit == nil ? .notFound : .explicitPathWrong, needed: needed)
            let probed = "probed \(searched.joined(separator: ", "))"
            guard verdict != .skip else { return .init(.configFile, verdict, "\(notNeeded); none found (\(probed))") }
            if let explicit { return .init(.configFile, verdict, explicit.message, fix: explicit.fix) }
            return .init(
                .configFile, verdict, "Syncthing's config.xml was not found; \(probed)",
                fix: ConfigFileError.notFound.fix)
        }
    }
}
