// The decode benchmark: Syncthing event answers through `SyncthingEvent.decodeArray(_:)`, alone and followed by the
// real `Engine`'s handling of the decoded batch, on one thread. Reports CPU per event, events and MB per CPU second,
// and heap allocations per answer, event and file name (counted by the interposed malloc of CAllocCount).
// Run through bench/decode (docs/benchmarks.md, Decode benchmark).
import CAllocCount
import NotifyCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

struct Options {
    /// CPU seconds each case runs for, at least.
    var minCPU = 1.0
    var label = "current"
    var only: Set<String> = []
    var engine = true

    init(_ args: [String]) {
        var it = args.makeIterator()
        func value() -> String {
            guard let next = it.next() else { Options.usage() }
            return next
        }
        while let arg = it.next() {
            switch arg {
            case "--min-cpu":
                guard let seconds = Double(value()), seconds >= 0 else { Options.usage() }
                minCPU = seconds
            case "--label": label = value()
            case "--cases": only = Set(value().split(separator: ",").map(String.init))
            case "--no-engine": engine = false
            default: Options.usage()
            }
        }
    }

    static func usage() -> Never {
        print("usage: vaultsync-decode-bench [--min-cpu SECONDS] [--label TEXT] [--cases a,b] [--no-engine]")
        exit(2)
    }
}

func clockSeconds(_ clock: clockid_t) -> Double {
    var ts = timespec()
    clock_gettime(clock, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Keeps the optimizer from dropping the decoded results.
nonisolated(unsafe) var sink = 0

/// An engine that has connected, placed its cursor and waits for its first long-poll; fed the same answer again and
/// again with ids renumbered to follow the cursor, so that every batch is news to it.
struct EngineDriver {
    static let status = SystemStatus(
        myID: "P56IOI7-MZJNU2Y-IQGDREY-DM2MGTI-MGL3BXN-PQ6W5BM-TBBZ4TJ-XZWICQ2", startTime: "2026-12-02T13:30:00Z")
    var engine = Engine(
        settings: Engine.Settings(
            policy: WakePolicy.Settings(startupAnnounce: false, staleRetrigger: nil, relayWindow: nil)))
    var since = 0
    var millis: Int64 = 0

    init() {
        _ = engine.handle(.start, now: .zero)
        _ = engine.handle(.relayHealth(.ok), now: .zero)
        _ = engine.handle(.status(.success(Self.status)), now: .zero)
        guard engine.handle(.head(.success(0)), now: .zero).last == .request(.poll(since: 0)) else {
            fatalError("the engine did not reach its long-poll")
        }
    }

    /// One long-poll answer and its status read, as the service feeds them.
    mutating func feed(_ decoded: [SyncthingEvent]) {
        var events = decoded
        for i in events.indices { events[i].id = since + 1 + i }
        since += events.count
        millis += 1
        let now = Instant(.milliseconds(millis))
        var actions = engine.handle(.polled(.success(events), elapsed: .milliseconds(1)), now: now)
        while !actions.contains(.request(.poll(since: since))) {
            guard actions.contains(.request(.status)) else { fatalError("unexpected engine actions: \(actions)") }
            actions = engine.handle(.status(.success(Self.status)), now: now)
        }
        sink &+= actions.count
    }
}

struct Result {
    var name: String
    var mode: String
    var bytes: Int
    var events: Int
    /// How many models the decoder returned for the answer's `events`.
    var decoded: Int
    var names: Int
    var iterations: Int
    var cpu: Double
    var wall: Double
    var allocations: Double

    var eventsPerSecond: Double { Double(events * iterations) / cpu }
    var megabytesPerSecond: Double { Double(bytes * iterations) / cpu / 1e6 }
    var microsPerEvent: Double { cpu * 1e6 / Double(events * iterations) }
    var allocationsPerEvent: Double { allocations / Double(events) }
}

func run(_ c: Case, engine useEngine: Bool, minCPU: Double) -> Result {
    var driver = useEngine ? EngineDriver() : nil
    var decoded = 0
    func once() {
        // A decoder may leave out event types the helper never reads; the rates still count every event of the
        // answer, and the models it returned are reported.
        guard let events = try? SyncthingEvent.decodeArray(c.body), let last = events.last else {
            fatalError("\(c.name): the answer did not decode")
        }
        decoded = events.count
        sink &+= last.id
        driver?.feed(events)
    }
    // Warm-up (lazy globals, the allocator's free lists), then the allocations of a few answers.
    for _ in 0..<3 { once() }
    let counted = 8
    alloc_count_reset()
    for _ in 0..<counted { once() }
    let allocations = Double(alloc_count_read().allocations) / Double(counted)

    let cpu0 = clockSeconds(CLOCK_PROCESS_CPUTIME_ID)
    let wall0 = clockSeconds(CLOCK_MONOTONIC)
    var iterations = 0
    var cpu = 0.0
    // The clock is read every `batch` answers: a read is a system call, about as long as decoding a small answer.
    let batch = max(1, 65536 / max(1, c.body.count))
    repeat {
        for _ in 0..<batch { once() }
        iterations += batch
        cpu = clockSeconds(CLOCK_PROCESS_CPUTIME_ID) - cpu0
    } while cpu < minCPU
    return Result(
        name: c.name, mode: useEngine ? "decode+engine" : "decode", bytes: c.body.count, events: c.events,
        decoded: decoded, names: c.names, iterations: iterations, cpu: cpu, wall: clockSeconds(CLOCK_MONOTONIC) - wall0,
        allocations: allocations)
}

func fixed(_ value: Double, _ digits: Int) -> String {
    guard value.isFinite else { return "-" }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    var text = String(rounded)
    if text.hasSuffix(".0") && digits == 0 { text.removeLast(2) }
    if let dot = text.firstIndex(of: ".") {
        let have = text.distance(from: dot, to: text.endIndex) - 1
        if have < digits { text += String(repeating: "0", count: digits - have) }
    } else if digits > 0 {
        text += "." + String(repeating: "0", count: digits)
    }
    return text
}

func pad(_ s: String, _ width: Int, left: Bool = false) -> String {
    let fill = String(repeating: " ", count: max(0, width - s.count))
    return left ? s + fill : fill + s
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
let cases = Case.all.filter { options.only.isEmpty || options.only.contains($0.name) }
let unknown = options.only.subtracting(cases.map(\.name))
if !unknown.isEmpty {
    print("unknown cases: \(unknown.sorted().joined(separator: ", ")); the cases: \(Case.all.map(\.name))")
    exit(2)
}
print("decode benchmark (\(options.label)): at least \(options.minCPU) CPU s per case, one thread")
for c in cases { print("  \(pad(c.name, 10, left: true)) \(c.body.count) bytes: \(c.summary)") }
print(
    [
        pad("case", 10, left: true), pad("mode", 14, left: true), pad("events/s", 12), pad("MB/s", 9),
        pad("CPU µs/event", 13), pad("allocs/answer", 14), pad("allocs/event", 13), pad("allocs/name", 12),
    ].joined(separator: " "))
var results: [Result] = []
for c in cases {
    for useEngine in options.engine ? [false, true] : [false] {
        let r = run(c, engine: useEngine, minCPU: options.minCPU)
        results.append(r)
        if r.decoded != r.events { print("  (\(r.name): the decoder returned \(r.decoded) of the \(r.events) events)") }
        print(
            [
                pad(r.name, 10, left: true), pad(r.mode, 14, left: true), pad(fixed(r.eventsPerSecond, 0), 12),
                pad(fixed(r.megabytesPerSecond, 1), 9), pad(fixed(r.microsPerEvent, 2), 13),
                pad(fixed(r.allocations, 1), 14), pad(fixed(r.allocationsPerEvent, 2), 13),
                pad(r.names >= 100 ? fixed(r.allocations / Double(r.names), 3) : "-", 12),
            ].joined(separator: " "))
    }
}
// What one more skipped file name costs: the difference between 1000 and 200 names per event.
let perName = results.first { $0.name == "names1000" && $0.mode == "decode" }.flatMap { big in
    results.first { $0.name == "names200" && $0.mode == "decode" }.map { small in
        (big.allocations - small.allocations) / Double(big.names - small.names)
    }
}
if let perName { print("allocations per additional skipped file name (names1000 - names200): \(fixed(perName, 4))") }

// One machine-readable line for bench/decode --compare (and the coordinator's notes).
func quoted(_ s: String) -> String { "\"" + s + "\"" }
let rows = results.map { r in
    "{"
        + [
            "\"case\":\(quoted(r.name))", "\"mode\":\(quoted(r.mode))", "\"bytes\":\(r.bytes)",
            "\"events\":\(r.events)", "\"decoded\":\(r.decoded)",
            "\"names\":\(r.names)", "\"iterations\":\(r.iterations)", "\"cpu_s\":\(r.cpu)", "\"wall_s\":\(r.wall)",
            "\"events_per_s\":\(r.eventsPerSecond)", "\"mb_per_s\":\(r.megabytesPerSecond)",
            "\"cpu_us_per_event\":\(r.microsPerEvent)", "\"allocs_per_answer\":\(r.allocations)",
        ].joined(separator: ",") + "}"
}
print(
    "DECODE-BENCH-JSON {\"label\":\(quoted(options.label)),\"allocs_per_extra_name\":\(perName.map { String($0) } ?? "null"),"
        + "\"results\":[\(rows.joined(separator: ","))],\"sink\":\(sink)}")
