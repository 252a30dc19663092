import NotifyCore
import NotifyRuntime

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `vaultsync-simulate`: runs the simulator by hand or in CI (scripts/simulate; docs/architecture.md,
/// "The simulator").
package enum Command {
    static let usage = """
        usage: vaultsync-simulate --seed N [--faults K,K|none] [--plant DEFECT] [--length SECONDS] [--trace]
               vaultsync-simulate --seeds N [--from S] [--stride K] [--keep-going] [--faults …] [--plant …]
               vaultsync-simulate --for SECONDS [--from S] [--stride K] [--keep-going]
               vaultsync-simulate --prove [--budget N]
               vaultsync-simulate --list
        """

    package static func main(_ arguments: [String]) -> Never {
        var args = Array(arguments.dropFirst())
        func value(_ name: String) -> String? {
            guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
            let v = args[i + 1]
            args.removeSubrange(i...(i + 1))
            return v
        }
        func flag(_ name: String) -> Bool {
            guard let i = args.firstIndex(of: name) else { return false }
            args.remove(at: i)
            return true
        }
        /// A positive whole number (or, for `--seed` and `--from`, zero too), or a clear error.
        func count(_ name: String, allowZero: Bool = false) -> UInt64? {
            guard args.contains(name) else { return nil }
            guard let text = value(name) else { fail("\(name) needs a value\n\(usage)") }
            guard let n = UInt64(text), allowZero || n > 0 else {
                fail("\(name) takes a \(allowZero ? "" : "positive ")whole number, not '\(text)'")
            }
            return n
        }
        let seed = count("--seed", allowZero: true)
        let seeds = count("--seeds").map { Int(clamping: $0) }
        let budget = count("--for").map { Double($0) }
        let from = count("--from", allowZero: true) ?? 1
        // Every K-th seed from S: K processes with S = 1…K share a search between cores.
        let stride = count("--stride") ?? 1
        let faults = value("--faults").map { $0 == "none" ? [] : $0.split(separator: ",").map(String.init) }
        let plant = value("--plant")
        let length = count("--length").map { Duration.seconds(Int64(clamping: $0)) }
        let proveBudget = count("--budget").map { Int(clamping: $0) } ?? 300
        let keepGoing = flag("--keep-going")
        let trace = flag("--trace")
        let prove = flag("--prove")
        let list = flag("--list")
        guard args.isEmpty else { fail("unknown arguments: \(args.joined(separator: " "))\n\(usage)") }
        let modes = [seed != nil, seeds != nil || budget != nil, prove, list].filter { $0 }.count
        guard modes <= 1 else { fail("choose one of --seed, --seeds/--for, --prove, --list\n\(usage)") }
        if let faults {
            let unknown = faults.filter { !Simulation.faultNames.contains($0) }
            if !unknown.isEmpty { fail("unknown fault kinds: \(unknown.joined(separator: ",")) (--list names them)") }
        }
        if let plant, Simulation.planted(plant) == nil {
            fail(
                Simulation.plantable.isEmpty
                    ? "this build has no planted defects (build with -DVAULTSYNC_PLANTED_DEFECTS; scripts/simulate does)"
                    : "unknown planted defect \(plant) (--list names them)")
        }
        installCrashReport()
        if list {
            out("fault kinds: " + Simulation.faultNames.joined(separator: " "))
            out(
                "planted defects: "
                    + (Simulation.plantable.isEmpty
                        ? "(none in this build)" : Simulation.plantable.joined(separator: " ")))
            exit(0)
        }
        if prove { exit(proveDefects(budget: proveBudget) ? 0 : 1) }
        if let seed {
            let run = Simulation.Run(seed: seed, faults: faults, plant: plant, length: length)
            let result = replay(run, fullTrace: trace)
            exit(result ? 0 : 1)
        }
        guard seeds != nil || budget != nil else { fail(usage) }
        let ok = search(
            from: from, stride: stride, count: seeds, seconds: budget, faults: faults, plant: plant, length: length,
            keepGoing: keepGoing)
        exit(ok ? 0 : 1)
    }

    /// One line on stdout, written at once (into a pipe or a CI log too; `print` would buffer it).
    private static func out(_ text: String, terminator: String = "\n") { writeFully(1, text + terminator) }

    private static func fail(_ text: String) -> Never {
        App.printErr("vaultsync-simulate: \(text)")
        exit(64)
    }

    /// Seconds since some point, for the command's own timing (never the simulation's).
    private static func clock() -> Double { SystemClock().now().sinceOrigin.seconds }

    // MARK: - One seed

    private static func replay(_ run: Simulation.Run, fullTrace: Bool) -> Bool {
        setCrashSeed(run)
        let result = Simulation.run(run, capture: fullTrace ? .zero...(.seconds(Int64.max / 4)) : nil)
        if fullTrace { for line in result.captured { out(line) } }
        out(
            "seed \(run.seed): \(result.passed ? "passed" : "FAILED"); trace \(result.hash); \(days(result.simulated)) simulated; \(result.triggers) triggers, \(result.pushes) pushes"
        )
        out("  faults:   \(result.faults)")
        out("  settings: \(result.settings)")
        if !result.passed { out(Simulation.report(result, shrunk: nil), terminator: "") }
        return result.passed
    }

    // MARK: - Many seeds

    private static func search(
        from: UInt64, stride: UInt64, count: Int?, seconds: Double?, faults: [String]?, plant: String?,
        length: Duration?, keepGoing: Bool
    ) -> Bool {
        let start = clock()
        var lastProgress = start
        var done = 0
        var simulated = Duration.zero
        var failures: [Simulation.Result] = []
        var largest = 0
        var seed = from
        while true {
            if let count, done >= count { break }
            if let seconds, clock() - start >= seconds { break }
            let run = Simulation.Run(seed: seed, faults: faults, plant: plant, length: length)
            setCrashSeed(run)
            let result = Simulation.run(run)
            done += 1
            simulated += result.simulated
            largest = max(largest, result.footprint)
            if !result.passed {
                failures.append(result)
                let shrunk = Simulation.shrink(result)
                App.printErr(Simulation.report(result, shrunk: shrunk))
                if !keepGoing { break }
            }
            seed += stride
            let now = clock()
            if now - lastProgress >= 5 {
                lastProgress = now
                App.printErr(
                    "simulate: \(done) seeds\(count.map { " of \($0)" } ?? ""), \(days(simulated)) simulated, "
                        + "\(failures.count) failed, \(Int(now - start)) s")
            }
        }
        let elapsed = clock() - start
        let last = from + UInt64(max(done, 1) - 1) * stride
        out(
            "simulate: \(done) seeds (\(from)–\(last)\(stride > 1 ? " every \(stride)" : "")), \(failures.count) failed; "
                + "\(tenthsOfDays(simulated)) days simulated in \(Int(elapsed.rounded())) s; "
                + "largest engine state \(largest) entries"
        )
        if !failures.isEmpty {
            out("failing seeds: " + failures.map { "\($0.run.seed)" }.joined(separator: " "))
        }
        return failures.isEmpty
    }

    /// Days to one decimal: `262.4`.
    private static func tenthsOfDays(_ d: Duration) -> String {
        let tenths = Int((d.seconds / 8640).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    private static func days(_ d: Duration) -> String {
        let days = d.seconds / 86_400
        return days >= 2 ? "\(Int(days.rounded())) days" : "\(Int((d.seconds / 3600).rounded())) hours"
    }

    // MARK: - Planted defects

    /// Each planted defect must make some seed fail within `budget` seeds; reports how many it took.
    private static func proveDefects(budget: Int) -> Bool {
        guard !Simulation.plantable.isEmpty else {
            App.printErr("vaultsync-simulate: this build has no planted defects")
            return false
        }
        var allFound = true
        for defect in Simulation.plantable {
            let start = clock()
            var found: Simulation.Result?
            var tried = 0
            for seed in 1...UInt64(budget) {
                let run = Simulation.Run(seed: seed, plant: defect)
                setCrashSeed(run)
                tried += 1
                let result = Simulation.run(run)
                if !result.passed {
                    found = result
                    break
                }
            }
            let seconds = Int((clock() - start).rounded())
            if let found {
                out(
                    "planted \(defect): found by seed \(found.run.seed) after \(tried) seeds (\(seconds) s): \(found.firstViolation ?? "")"
                )
            } else {
                allFound = false
                out("planted \(defect): NOT found in \(tried) seeds (\(seconds) s)")
            }
        }
        return allFound
    }

    // MARK: - A crash names its seed

    nonisolated(unsafe) private static var crashLine: [UInt8] = []

    private static func setCrashSeed(_ run: Simulation.Run) {
        crashLine = Array("\nvaultsync-simulate: crashed in seed \(run.seed); replay: \(run.replay)\n".utf8)
    }

    private static func installCrashReport() {
        for sig in [SIGILL, SIGTRAP, SIGSEGV, SIGBUS, SIGABRT, SIGFPE] {
            signal(sig) { number in
                Command.crashLine.withUnsafeBufferPointer { _ = write(2, $0.baseAddress, $0.count) }
                signal(number, SIG_DFL)
                raise(number)
            }
        }
    }
}
