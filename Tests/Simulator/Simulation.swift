import NotifyCore

/// Running seeds: one to replay, many to search, and the planted defects to prove the checker bites.
package enum Simulation {
    /// What to run one seed with.
    package struct Run: Sendable {
        package var seed: UInt64
        /// Replaces the drawn fault kinds (shrinking, `--faults`).
        package var faults: [String]?
        package var plant: String?
        package var length: Duration?

        package init(seed: UInt64, faults: [String]? = nil, plant: String? = nil, length: Duration? = nil) {
            self.seed = seed
            self.faults = faults
            self.plant = plant
            self.length = length
        }

        /// The command that replays this run.
        package var replay: String {
            var line = "scripts/simulate --seed \(seed)"
            if let faults { line += " --faults \(faults.isEmpty ? "none" : faults.joined(separator: ","))" }
            if let plant { line += " --plant \(plant)" }
            if let length { line += " --length \(length.components.seconds)" }
            return line
        }
    }

    /// One seed's result, as the command reports it.
    package struct Result: Sendable {
        package var run: Run
        package var passed: Bool
        package var hash: String
        package var simulated: Duration
        package var triggers: Int
        package var pushes: Int
        package var footprint: Int
        package var faults: String
        package var firstViolation: String?
        /// The violation's true time, for the trace around it.
        package var violationAt: Duration?
        package var tail: [String]
        package var captured: [String]
        package var settings: String
    }

    /// The planted defect names this build knows (empty when it has none).
    package static var plantable: [String] { PlantedDefects.available ? PlantedDefect.allCases.map(\.rawValue) : [] }

    package static func planted(_ name: String?) -> PlantedDefects? {
        guard let name else { return PlantedDefects.none }
        #if VAULTSYNC_PLANTED_DEFECTS
            guard let defect = PlantedDefect(rawValue: name) else { return nil }
            return PlantedDefects([defect])
        #else
            return nil
        #endif
    }

    /// Every fault kind's name.
    package static var faultNames: [String] { Swarm.Fault.allCases.map(\.rawValue) }

    /// Runs one seed. `capture`: keep the trace lines of this true-time range whole.
    package static func run(_ run: Run, capture: ClosedRange<Duration>? = nil) -> Result {
        let only = run.faults.map { Set($0.compactMap(Swarm.Fault.init(rawValue:))) }
        let swarm = Swarm(seed: run.seed, only: only, length: run.length)
        let world = World(swarm: swarm, planted: planted(run.plant) ?? .none, capture: capture)
        let outcome = world.run()
        let first = outcome.violations.first
        let settings =
            "length \(Trace.stamp(swarm.length)), debounce \((swarm.debounce).secondsText)s, max "
            + "\((swarm.debounceMax).secondsText)s, window \(swarm.relayWindow.map { "\($0.components.seconds)s" } ?? "off"), "
            + "sweep \(swarm.sweep.map { "\($0.components.seconds)s" } ?? "off"), announce \(swarm.startupAnnounce), "
            + "\(swarm.folders) folders, \(swarm.devices) devices, watched \(swarm.watched.isEmpty ? "all" : "\(swarm.watched.sorted())"), "
            + "a change every \(swarm.changeEvery.components.seconds)s a folder in sessions of "
            + "\(swarm.activeFor.components.seconds)s, idle \(swarm.idleFor.components.seconds)s"
        return Result(
            run: run, passed: !outcome.failed, hash: outcome.traceHash, simulated: outcome.simulated,
            triggers: outcome.triggers, pushes: outcome.pushes, footprint: outcome.footprint,
            faults: swarm.faultList.isEmpty ? "none" : swarm.faultList,
            firstViolation: first.map { "\($0.promise): \($0.detail)" }, violationAt: first?.trueAt,
            tail: outcome.tail, captured: outcome.captured, settings: settings)
    }

    /// A failing run made smaller: each fault kind turned off in turn, kept off while the run still fails.
    package static func shrink(_ failing: Result) -> Result {
        var best = failing
        let swarm = Swarm(seed: failing.run.seed)
        var faults = failing.run.faults ?? swarm.faults.keys.sorted().map(\.rawValue)
        // The same promise must still break: a smaller run that breaks another one points at another defect.
        func promise(_ r: Result) -> Substring? { r.firstViolation?.split(separator: ":").first }
        for fault in faults {
            let fewer = faults.filter { $0 != fault }
            var run = failing.run
            run.faults = fewer
            let result = Self.run(run)
            if !result.passed, promise(result) == promise(failing) {
                faults = fewer
                best = result
            }
        }
        return best
    }

    /// The failure report: the seed, its fault kinds and settings, the first broken promise with the trace around
    /// it, and the command that replays it.
    package static func report(_ failing: Result, shrunk: Result?) -> String {
        var out = "FAIL seed \(failing.run.seed)\(failing.run.plant.map { " (planted: \($0))" } ?? "")\n"
        out += "  faults:   \(failing.faults)\n"
        out += "  settings: \(failing.settings)\n"
        out += "  broken:   \(failing.firstViolation ?? "?") at \(failing.violationAt.map(Trace.stamp) ?? "?")\n"
        if let at = failing.violationAt {
            let replay = run(failing.run, capture: max(.zero, at - .seconds(180))...(at + .seconds(5)))
            let lines = replay.captured.suffix(80)
            out += "  trace around it (\(lines.count) lines):\n"
            for line in lines { out += "    \(line)\n" }
        }
        out += "  replay:   \(failing.run.replay)\n"
        if let shrunk, shrunk.run.faults != nil {
            out += "  smaller:  \(shrunk.run.replay)   (\(shrunk.firstViolation ?? "?"))\n"
        }
        return out
    }
}
