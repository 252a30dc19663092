/// What one seed's world is like (swarm testing, Groce et al., ISSTA 2012): which fault kinds are on, how often each
/// strikes, how long the run is, and the service's settings from the environment's valid ranges. All drawn from the
/// seed's own stream, so that the same seed always makes the same world.
struct Swarm: Sendable {
    /// One kind of fault the world can inject. Each seed turns on a random subset.
    enum Fault: String, CaseIterable, Sendable, Comparable {
        // Syncthing
        case restart, crashLoop = "crash-loop", busyRestart = "busy-restart", identityChange = "identity-change"
        case eventGap = "event-gap", bufferOverflow = "buffer-overflow"
        case pollCut = "poll-cut", pollMalformed = "poll-malformed", pollOversized = "poll-oversized"
        case hang, slow, serverError = "server-error", malformedAnswer = "malformed-answer"
        case keyChange = "key-change", guiMove = "gui-move", handEdit = "hand-edit", sighup
        case configMissing = "config-missing", configChurn = "config-churn", remoteDecline = "remote-decline"
        case peerReset = "peer-reset"
        /// A big sync: a steady stream of local changes a few milliseconds apart (the poll loop's pauses).
        case steadyStream = "steady-stream"
        // The relay
        case relayInactive = "relay-inactive", relayOutage404 = "relay-outage-404", relayWrongURL = "relay-wrong-url"
        case relay429Delta = "relay-429-delta", relay429Date = "relay-429-date", relay5xx = "relay-5xx"
        case relayHang = "relay-hang", relaySlow = "relay-slow", relayCut = "relay-cut"
        case relayUnreachable = "relay-unreachable"
        // The host's clocks
        case suspend, ntpStep = "ntp-step"

        static func < (a: Fault, b: Fault) -> Bool { a.rawValue < b.rawValue }

        /// Rare kinds that end or dominate a run; turned on less often.
        var odds: Double {
            switch self {
            case .relayWrongURL: 0.05
            case .identityChange: 0.15
            default: 0.5
            }
        }
    }

    let seed: UInt64
    /// How long the world runs before the service is stopped (true time).
    var length: Duration
    /// The fault kinds turned on, each with how often it strikes (mean time between, or a per-request probability).
    var faults: [Fault: Double]

    // The environment's settings.
    var debounce: Duration
    var debounceMax: Duration
    var relayWindow: Duration?
    var sweep: Duration?
    var startupAnnounce: Bool
    var jsonLogs: Bool

    // The workload.
    var folders: Int
    var devices: Int
    /// Watched folders by index; empty means all.
    var watched: Set<Int>
    /// Mean time between local changes in one folder, while the user works.
    var changeEvery: Duration
    /// Mean length of a working session (changes come), and of the idle time between two (none come).
    var activeFor: Duration
    var idleFor: Duration
    /// Mean time a peer stays connected, and offline.
    var onlineFor: Duration
    var offlineFor: Duration

    func has(_ fault: Fault) -> Bool { faults[fault] != nil }

    /// How often `fault` strikes: the mean time between two (for world faults) in seconds, or the probability per
    /// request (for answer faults). 0 when off.
    func rate(_ fault: Fault) -> Double { faults[fault] ?? 0 }

    /// The seed's world. `only`, when given, replaces the drawn set of fault kinds (shrinking, `--faults`).
    init(seed: UInt64, only: Set<Fault>? = nil, length fixedLength: Duration? = nil) {
        self.seed = seed
        var r = SimRandom.fork(seed, "swarm")
        // Minutes to weeks, most runs hours to days.
        let seconds = r.logUniform(600, 21 * 86_400)
        length = fixedLength ?? .seconds(Int64(seconds))
        var faults: [Fault: Double] = [:]
        for fault in Fault.allCases where fault != .steadyStream {
            let on = r.chance(fault.odds)
            let rate = Self.drawRate(fault, &r)
            if only.map({ $0.contains(fault) }) ?? on { faults[fault] = rate }
        }
        // Drawn from a stream of its own, so that adding it left every other seed's world as it was.
        var stream = SimRandom.fork(seed, "steady-stream")
        let streamOn = stream.chance(Fault.steadyStream.odds)
        let streamRate = Self.drawRate(.steadyStream, &stream)
        if only.map({ $0.contains(.steadyStream) }) ?? streamOn { faults[.steadyStream] = streamRate }
        self.faults = faults

        debounce = r.pick([
            .zero, .milliseconds(500), .seconds(1), .seconds(2), .seconds(5), .seconds(5), .seconds(10),
            .seconds(30),
        ])
        debounceMax = max(debounce, r.pick([.seconds(5), .seconds(30), .seconds(30), .seconds(60), .seconds(300)]))
        relayWindow = r.pick([nil, .seconds(10), .seconds(30), .seconds(30), .seconds(30), .seconds(60)])
        sweep = r.pick([nil, .seconds(60), .seconds(600), .seconds(3600), .seconds(21_600)])
        startupAnnounce = r.chance(0.8)
        jsonLogs = r.chance(0.5)

        folders = r.int(1...4)
        devices = r.int(1...3)
        watched = r.chance(0.7) ? [] : Set((0..<folders).filter { _ in r.chance(0.6) })
        changeEvery = .seconds(Int64(r.logUniform(20, 4 * 3600)))
        onlineFor = .seconds(Int64(r.logUniform(60, 12 * 3600)))
        offlineFor = .seconds(Int64(r.logUniform(60, 12 * 3600)))
        activeFor = .seconds(Int64(r.logUniform(300, 12 * 3600)))
        idleFor = .seconds(Int64(r.logUniform(600, 2 * 86_400)))
    }

    private static func drawRate(_ fault: Fault, _ r: inout SimRandom) -> Double {
        switch fault {
        // Per-request probabilities.
        case .pollCut, .pollMalformed, .pollOversized, .hang, .slow, .serverError, .malformedAnswer:
            r.logUniform(0.002, 0.1)
        // Mean seconds between occurrences.
        case .eventGap, .peerReset, .remoteDecline, .configChurn, .steadyStream: r.logUniform(600, 12 * 3600)
        case .bufferOverflow: r.logUniform(3600, 2 * 86_400)
        case .relayInactive, .relayOutage404, .relay429Delta, .relay429Date, .relay5xx, .relayHang, .relaySlow,
            .relayCut, .relayUnreachable:
            r.logUniform(600, 12 * 3600)
        case .restart, .busyRestart: r.logUniform(900, 2 * 86_400)
        case .crashLoop, .identityChange: r.logUniform(4 * 3600, 7 * 86_400)
        case .keyChange, .guiMove, .handEdit, .configMissing, .sighup: r.logUniform(1800, 3 * 86_400)
        case .suspend, .ntpStep: r.logUniform(3600, 3 * 86_400)
        case .relayWrongURL: 1
        }
    }

    /// The fault kinds on, sorted, comma-separated (for the replay line).
    var faultList: String { faults.keys.sorted().map(\.rawValue).joined(separator: ",") }

    /// The environment the service is started with, as a user would write it.
    func environment(relayURL: String, configPath: String, folderIDs: [String]) -> [String: String] {
        var env: [String: String] = [
            "RELAY_URL": relayURL,
            "SYNCTHING_CONFIG": configPath,
            "SYNCTHING_CONFIG_WAIT_SECONDS": "0",
            "STARTUP_ANNOUNCE": startupAnnounce ? "true" : "false",
            "DEBOUNCE_SECONDS": Self.decimal(debounce),
            "DEBOUNCE_MAX_SECONDS": Self.decimal(debounceMax),
            "RELAY_WINDOW_SECONDS": relayWindow.map { "\($0.components.seconds)" } ?? "0",
            "STALE_RETRIGGER_SECONDS": sweep.map { "\($0.components.seconds)" } ?? "0",
            "LOG_LEVEL": "debug",
            "LOG_FORMAT": jsonLogs ? "json" : "text",
        ]
        if !watched.isEmpty {
            env["WATCHED_FOLDERS"] = watched.sorted().map { folderIDs[$0] }.joined(separator: ",")
        }
        return env
    }

    /// Seconds as the environment writes them: whole, or with milliseconds (`0.5`).
    static func decimal(_ d: Duration) -> String {
        let ms = d.milliseconds
        return ms % 1000 == 0 ? "\(ms / 1000)" : "\(ms / 1000).\(String(ms % 1000 + 1000).dropFirst())"
    }
}
