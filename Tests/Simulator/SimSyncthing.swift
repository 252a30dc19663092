import NotifyCore
import NotifyRuntime

/// Syncthing as the service reaches it over HTTP, and the world behind it: this server's folders and the remote
/// devices they are shared with, the peers coming and going and fetching what they need, the event subscription with
/// its ids and its 1000-event buffer, restarts, GUI changes, and every fault the seed turned on. What it does follows
/// docs/syncthing-api.md; what it tells the checker is the ground truth the checker judges against.
final class SimSyncthing: HTTPTransport, @unchecked Sendable {
    // @unchecked: the simulation runs on one thread.

    struct Device {
        let id: String
        let name: String
        var paused = false
        var connected = true
    }

    struct Folder {
        let id: String
        let label: String
        let path: String
        var paused = false
        var devices: [String]
    }

    /// The remote device's side of a shared folder (`remoteState`).
    enum Remote: String {
        case valid, notSharing, paused
    }

    /// What a peer still needs of a folder, as this server knows it.
    struct Need {
        var items: Int64 = 0
        var bytes: Int64 = 0
        /// The peer's index sequence as known here; 0 before any index from it arrived.
        var sequence: Int64 = 3
        /// A transfer is reporting progress.
        var transferring = false
    }

    struct Pair: Hashable {
        var device: String
        var folder: String
    }

    private struct Stored {
        var id: Int
        var json: String
    }

    /// The service's filtered subscription: created by its first events request after Syncthing starts.
    private struct Subscription {
        var nextID = 1
        var buffer: [Stored] = []
        var start = 0
        var count: Int { buffer.count - start }
        mutating func append(_ event: Stored) {
            buffer.append(event)
            if count > 1000 { start += 1 }
            if start > 4096 {
                buffer.removeFirst(start)
                start = 0
            }
        }
        func after(_ id: Int) -> ArraySlice<Stored> {
            var lo = start
            var hi = buffer.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if buffer[mid].id <= id { lo = mid + 1 } else { hi = mid }
            }
            return buffer[lo...]
        }
        var last: Stored? { count > 0 ? buffer[buffer.count - 1] : nil }
    }

    /// A long-poll Syncthing holds.
    private final class Held {
        let since: Int
        let sent: Instant
        let run: Int
        var answer: Result<HTTPResponse, TransportError>?
        var delivered: [Int] = []
        var finishing = false
        var malformed = false
        var timers: [SimRuntime.Token] = []
        init(since: Int, sent: Instant, run: Int) {
            self.since = since
            self.sent = sent
            self.run = run
        }
    }

    unowned let world: World
    var runtime: SimRuntime { world.runtime }
    var checker: Checker { world.checker }
    private var rng: SimRandom
    private var answers: SimRandom

    let myIDs: [String]
    private(set) var myID: String
    private(set) var devices: [Device]
    private(set) var folders: [Folder]
    private(set) var remote: [Pair: Remote] = [:]
    private(set) var need: [Pair: Need] = [:]
    let file: SimConfigFile

    private(set) var running = true
    /// Syncthing's run: 1 for the first start, one more at every restart.
    private(set) var run = 1
    private(set) var startTime = ""
    private(set) var port: Int
    private(set) var key: String
    /// The GUI server restarts (after a GUI change) and refuses connections until then (true time).
    private var refusingUntil: Duration = .zero
    private var recentGUIChanges: [Duration] = []
    private var subscription: Subscription?
    private var globalID = 0
    private var held: Held?
    private var cancelled = false
    /// The next event uses up its id but is lost on its way to the subscription (a hole).
    var dropNext = false
    /// Events are not traced one by one (a burst of thousands says so in one line).
    private var quietEvents = false
    /// Numbers the file names of local changes.
    private var fileCounter = 0
    /// `startTime`-style text of the last second an event was stamped with.
    private var stampCache: (second: Int64, text: String) = (-1, "")
    /// What the last `/rest/system/connections` answer said, for the sweep observations told to the checker.
    private var lastConnections: [String: Bool] = [:]
    /// The connection the next answer comes on (`HTTPResponse.connection`): a new one at every start and GUI server
    /// restart (each closes every connection), and now and then for no reason the service can see (an idle
    /// connection closed, another transfer's handle). Drawn from a stream of its own, so that other draws stay put.
    private var connection = 1
    private var connectionChurn: SimRandom

    init(world: World, seed: UInt64, folders folderCount: Int, devices deviceCount: Int, directory: String) {
        self.world = world
        rng = SimRandom.fork(seed, "syncthing")
        answers = SimRandom.fork(seed, "syncthing-answers")
        connectionChurn = SimRandom.fork(seed, "syncthing-connections")
        var r = SimRandom.fork(seed, "syncthing-identity")
        myIDs = [r.deviceID(), r.deviceID()]
        myID = myIDs[0]
        devices = (0..<deviceCount).map { i in Device(id: r.deviceID(), name: "phone-\(i)-\(r.token(6))") }
        let all = devices.map(\.id)
        folders = (0..<folderCount).map { i in
            let token = r.token(5)
            // Folder 0 is shared with every device; the others with some, or (now and then) with none.
            let shared = i == 0 ? all : all.filter { _ in r.chance(0.6) }
            return Folder(
                id: "fold\(i)-\(token)", label: "Notes \(token.uppercased())", path: "/srv/vault-\(r.token(6))/f\(i)",
                devices: shared)
        }
        port = r.int(20_000...60_000)
        key = r.token(32)
        file = SimConfigFile(directory: directory)
        for folder in folders {
            for device in folder.devices {
                let pair = Pair(device: device, folder: folder.id)
                remote[pair] = r.chance(0.85) ? .valid : .notSharing
                need[pair] = Need()
            }
        }
    }

    /// Everything the world plants for the checker's identifier scan.
    var identifiers: [String] {
        var all = myIDs + myIDs.map { $0.filter { $0 != "-" } } + devices.map(\.id) + devices.map(\.name)
        all += folders.map(\.id) + folders.map(\.label) + folders.map(\.path)
        all += [key, file.directory, "127.0.0.1:\(port)"]
        return all
    }

    // MARK: - Start

    /// Syncthing's first start (before the service's).
    func boot() {
        file.write(port: port, key: key, devices: devices, folders: folders, myID: myID)
        startTime = Self.rfc3339(runtime.wallNow)
        for (i, folder) in folders.enumerated() {
            tellSharing(folder)
            let shares = folder.devices.map { d in
                "device #\(devices.firstIndex { $0.id == d } ?? -1) \(remote[Pair(device: d, folder: folder.id)]?.rawValue ?? "?")"
            }
            world.trace(
                "world folder #\(i) shared with \(shares.isEmpty ? "no device" : shares.joined(separator: ", "))")
        }
        checker.syncthingStarted(run: run, at: runtime.monotonicNow)
    }

    // MARK: - HTTP

    func cancel() {
        cancelled = true
        if let held, held.answer == nil { finish(held, .failure(.cancelled)) }
    }

    func perform(_ request: HTTPRequest) -> Result<HTTPResponse, TransportError> {
        if cancelled { return .failure(.cancelled) }
        if connectionChurn.chance(0.02) { connection += 1 }
        if let required = request.onConnection, required != connection || !running {
            // The kept-alive connection is gone: nothing is sent (`HTTPRequest.onConnection`).
            world.trace("st connection gone")
            return .failure(.connectionGone)
        }
        let target = Target(request.url)
        let sent = runtime.now()
        guard running, target.port == port, runtime.trueNow >= refusingUntil else {
            runtime.spend(.milliseconds(1))
            return reply(target, request, .failure(.connect), sent: sent)
        }
        let sentKey = request.headers.first { $0.0 == "X-API-Key" }?.1
        if sentKey != key {
            runtime.spend(.milliseconds(2))
            return reply(target, request, ok(403, "CSRF Error\n"), sent: sent)
        }
        if target.route == .poll {
            return longPoll(request, target, since: target.since ?? 0, wait: target.timeout ?? 60)
        }
        // One answer fault at most per request, drawn in a fixed order.
        let limit = request.totalTimeout
        if draw(.hang) {
            runtime.spend(limit)
            return reply(target, request, .failure(.timeout), sent: sent)
        }
        runtime.spend(
            draw(.slow)
                ? answers.duration(.milliseconds(500), limit * 0.8)
                : answers.duration(.milliseconds(1), .milliseconds(20)))
        if draw(.serverError) { return reply(target, request, ok(500, "Internal Server Error\n"), sent: sent) }
        if draw(.malformedAnswer) { return reply(target, request, ok(200, #"{"myID": "#), sent: sent, malformed: true) }
        return reply(target, request, answer(target), sent: sent)
    }

    private func draw(_ fault: Swarm.Fault) -> Bool {
        let p = world.swarm.rate(fault)
        return p > 0 && answers.chance(p)
    }

    private func ok(_ status: Int, _ body: String) -> Result<HTTPResponse, TransportError> {
        .success(HTTPResponse(status: status, headers: ["content-type": "application/json"], body: Array(body.utf8)))
    }

    /// A request as the service sends it: where, and the parameters the simulation reads.
    struct Target {
        enum Route: String {
            case status, head, poll, devices, folders, connections, completion, other
        }
        var port = 0
        var route = Route.other
        var since: Int?
        var timeout: Int?
        var device = ""
        var folder = ""

        /// Reads `scheme://host:port/path?query` byte by byte (the simulator parses every request it gets).
        init(_ url: String) {
            let b = Array(url.utf8)
            func find(_ byte: UInt8, from: Int, to: Int) -> Int? {
                var i = from
                while i < to {
                    if b[i] == byte { return i }
                    i += 1
                }
                return nil
            }
            func number(_ from: Int, _ to: Int) -> Int? {
                guard from < to, to - from <= 18 else { return nil }
                var n = 0
                for i in from..<to {
                    guard b[i] >= 48, b[i] <= 57 else { return nil }
                    n = n * 10 + Int(b[i] - 48)
                }
                return n
            }
            func matches(_ from: Int, _ to: Int, _ text: StaticString) -> Bool {
                guard to - from == text.utf8CodeUnitCount else { return false }
                return text.withUTF8Buffer { t in (0..<t.count).allSatisfy { b[from + $0] == t[$0] } }
            }
            guard let colon = find(UInt8(ascii: ":"), from: 0, to: b.count), colon + 2 < b.count,
                b[colon + 1] == UInt8(ascii: "/"), b[colon + 2] == UInt8(ascii: "/")
            else { return }
            let hostStart = colon + 3
            guard let pathStart = find(UInt8(ascii: "/"), from: hostStart, to: b.count) else { return }
            var portColon = pathStart
            while portColon > hostStart, b[portColon - 1] != UInt8(ascii: ":") { portColon -= 1 }
            port = portColon > hostStart ? number(portColon, pathStart) ?? 0 : 0
            let pathEnd = find(UInt8(ascii: "?"), from: pathStart, to: b.count) ?? b.count
            var limitOne = false
            var item = pathEnd + 1
            while item < b.count {
                let end = find(UInt8(ascii: "&"), from: item, to: b.count) ?? b.count
                if let eq = find(UInt8(ascii: "="), from: item, to: end) {
                    let value = eq + 1
                    if matches(item, eq, "since") {
                        since = number(value, end)
                    } else if matches(item, eq, "timeout") {
                        timeout = number(value, end)
                    } else if matches(item, eq, "device") {
                        device = Self.percentDecoded(b[value..<end])
                    } else if matches(item, eq, "folder") {
                        folder = Self.percentDecoded(b[value..<end])
                    } else if matches(item, eq, "limit") {
                        limitOne = matches(value, end, "1")
                    }
                }
                item = end + 1
            }
            if matches(pathStart, pathEnd, "/rest/system/status") {
                route = .status
            } else if matches(pathStart, pathEnd, "/rest/events") {
                route = limitOne ? .head : .poll
            } else if matches(pathStart, pathEnd, "/rest/config/devices") {
                route = .devices
            } else if matches(pathStart, pathEnd, "/rest/config/folders") {
                route = .folders
            } else if matches(pathStart, pathEnd, "/rest/system/connections") {
                route = .connections
            } else if matches(pathStart, pathEnd, "/rest/db/completion") {
                route = .completion
            }
        }

        static func percentDecoded(_ text: ArraySlice<UInt8>) -> String {
            func hex(_ c: UInt8) -> UInt8? {
                switch c {
                case 48...57: c - 48
                case 65...70: c - 55
                case 97...102: c - 87
                default: nil
                }
            }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(text.count)
            var i = text.startIndex
            while i < text.endIndex {
                if text[i] == UInt8(ascii: "%"), i + 2 < text.endIndex, let hi = hex(text[i + 1]),
                    let lo = hex(text[i + 2])
                {
                    bytes.append(hi << 4 | lo)
                    i += 3
                } else {
                    bytes.append(text[i])
                    i += 1
                }
            }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// The answer of a request that reached a running Syncthing with the right key.
    private func answer(_ target: Target) -> Result<HTTPResponse, TransportError> {
        switch target.route {
        case .status:
            let uptime = 0
            return ok(
                200,
                #"{"alloc":5512000,"connectionServiceStatus":{},"cpuPercent":0,"discoveryEnabled":false,"goroutines":41,"guiAddressOverridden":false,"guiAddressUsed":"127.0.0.1:\#(port)","myID":"\#(myID)","pathSeparator":"/","startTime":"\#(startTime)","sys":25000000,"tilde":"/root","uptime":\#(uptime),"urVersionMax":3}"#
            )
        case .head:
            subscribe()
            guard let last = subscription?.last else { return ok(200, "[]") }
            return ok(200, "[" + last.json + "]")
        case .devices:
            var items = [#"{"deviceID":"\#(myID)","name":"home-server","addresses":["dynamic"],"paused":false}"#]
            items += devices.map {
                #"{"deviceID":"\#($0.id)","name":"\#($0.name)","addresses":["dynamic"],"compression":"metadata","paused":\#($0.paused)}"#
            }
            return ok(200, "[" + items.joined(separator: ",") + "]")
        case .folders:
            let items = folders.map { f in
                let devs = ([myID] + f.devices).map { #"{"deviceID":"\#($0)","introducedBy":""}"# }.joined(
                    separator: ",")
                return
                    #"{"id":"\#(f.id)","label":"\#(f.label)","path":"\#(f.path)","type":"sendreceive","devices":[\#(devs)],"rescanIntervalS":3600,"paused":\#(f.paused)}"#
            }
            return ok(200, "[" + items.joined(separator: ",") + "]")
        case .connections:
            lastConnections = Dictionary(uniqueKeysWithValues: devices.map { ($0.id, $0.connected && !$0.paused) })
            let items = devices.map {
                #""\#($0.id)":{"address":"","at":"2026-12-01T00:00:00Z","connected":\#($0.connected && !$0.paused),"paused":\#($0.paused),"type":""}"#
            }
            return ok(200, #"{"connections":{"# + items.joined(separator: ",") + #"},"total":{"inBytesTotal":0}}"#)
        case .completion:
            guard let folder = folders.first(where: { $0.id == target.folder }) else {
                return ok(404, "no such folder\n")
            }
            if folder.paused { return ok(404, "folder is paused\n") }
            let pair = Pair(device: target.device, folder: target.folder)
            guard folder.devices.contains(target.device), let n = need[pair] else {
                // Not shared with the device: "needs everything" (docs/syncthing-api.md, Completion and connections).
                return ok(
                    200,
                    #"{"completion":0,"globalBytes":4096,"globalItems":4,"needBytes":4096,"needDeletes":0,"needItems":4,"remoteState":"unknown","sequence":0}"#
                )
            }
            let state = remote[pair] ?? .valid
            let connected = lastConnections[target.device] ?? false
            let (device, folderID, needs, sequence, at) = (
                target.device, target.folder, n.items > 0, n.sequence, runtime.now()
            )
            let asked = runtime.jobQueuedAt ?? at
            runtime.atJobTime { [checker] in
                checker.completionAnswered(
                    device: device, folder: folderID, needs: needs, sequence: sequence, remote: state.rawValue,
                    connected: connected, asked: asked, at: at)
            }
            let completion = n.items > 0 ? 50 : 100
            return ok(
                200,
                #"{"completion":\#(completion),"globalBytes":100000,"globalItems":40,"needBytes":\#(n.bytes),"needDeletes":0,"needItems":\#(n.items),"remoteState":"\#(state.rawValue)","sequence":\#(n.sequence)}"#
            )
        case .poll, .other:
            return ok(404, "404 page not found\n")
        }
    }

    /// Tells the checker and the trace what the service got back; returns it.
    private func reply(
        _ target: Target, _ request: HTTPRequest, _ result: Result<HTTPResponse, TransportError>,
        sent: Instant? = nil, delivered: [Int] = [], malformed: Bool = false
    ) -> Result<HTTPResponse, TransportError> {
        var result = result
        if case .success(var response) = result {
            response.connection = connection
            result = .success(response)
        }
        let at = runtime.now()
        let outcome: String
        var good = false
        switch result {
        case .success(let response):
            outcome = "\(response.status)"
            good = response.status == 200 && !malformed
        case .failure(let error):
            outcome = "\(error.code.rawValue)"
        }
        world.trace(
            "st \(target.route.rawValue)\(target.since.map { " since=\($0)" } ?? "") → \(outcome)"
                + (delivered.isEmpty ? "" : " ids \(delivered.first!)…\(delivered.last!)"))
        switch target.route {
        case .status, .head, .poll:
            var headID: Int?
            if target.route == .head, good, case .success(let r) = result {
                headID = Self.lastID(in: r.body)
            }
            let exchange = Checker.Exchange(
                route: target.route == .status ? .status : target.route == .head ? .head : .poll,
                sent: sent ?? at, answered: at, run: good ? run : nil, good: good, since: target.since,
                delivered: delivered, head: headID, startTime: good && target.route == .status ? startTime : nil)
            runtime.atJobTime { [checker] in checker.pollLaneAnswered(exchange) }
        case .devices, .folders:
            let folders = target.route == .folders
            let asked = runtime.jobQueuedAt ?? at
            let sent = sent ?? at
            runtime.atJobTime { [checker] in
                checker.configAnswered(folders: folders, good: good, asked: asked, sent: sent, at: at)
            }
        case .connections, .completion, .other:
            break
        }
        if [.devices, .folders, .connections, .completion].contains(target.route) {
            // Told at once: the checker needs to know the peers lane is busy while the request runs.
            // A 404 completion (a folder paused since the config read) skips its pair; any other failure voids the
            // read (docs/syncthing-api.md, Config endpoints).
            let notFound = if case .success(let r) = result { r.status == 404 } else { false }
            checker.peersRequest(
                sent: sent ?? at, answered: at, devices: target.route == .devices,
                connections: target.route == .connections, voids: !good && !notFound)
        }
        return result
    }

    private static let brokenEvents = #"[{"id":"#

    private static func lastID(in body: [UInt8]) -> Int? {
        guard let events = try? SyncthingEvent.decodeArray(body) else { return nil }
        return events.last?.id ?? 0
    }

    // MARK: - The event subscription and the long-poll

    private func subscribe() {
        if subscription == nil {
            subscription = Subscription()
            world.trace("st subscription created (run \(run))")
            checker.subscribed(run: run, at: runtime.now())
        }
    }

    private func longPoll(
        _ request: HTTPRequest, _ target: Target, since: Int, wait: Int
    ) -> Result<HTTPResponse, TransportError> {
        subscribe()
        let poll = Held(since: since, sent: runtime.now(), run: run)
        held = poll
        let limit = request.totalTimeout
        // The client gives up at its own limit, whatever Syncthing does.
        poll.timers.append(runtime.hostTimer(after: limit) { [self] in finish(poll, .failure(.timeout)) })
        if !draw(.hang) {
            if let sub = subscription, !sub.after(since).isEmpty {
                scheduleFinish(poll)
            } else {
                poll.timers.append(runtime.hostTimer(after: .seconds(Int64(wait))) { [self] in finishNow(poll) })
            }
        }
        runtime.runNested { poll.answer != nil }
        if held === poll { held = nil }
        for timer in poll.timers { timer.cancel() }
        let result = poll.answer ?? .failure(.cancelled)
        return reply(target, request, result, sent: poll.sent, delivered: poll.delivered, malformed: poll.malformed)
    }

    /// Events are there for the held poll: Syncthing answers it at once (a burst that lands in the same instant comes
    /// in the same answer).
    private func scheduleFinish(_ poll: Held) {
        guard !poll.finishing, poll.answer == nil else { return }
        poll.finishing = true
        let delay = draw(.slow) ? answers.duration(.milliseconds(500), .seconds(10)) : .milliseconds(1)
        poll.timers.append(runtime.hostTimer(after: delay) { [self] in finishNow(poll) })
    }

    /// Syncthing answers the held poll now with what it has after `since` (perhaps nothing).
    private func finishNow(_ poll: Held) {
        guard poll.answer == nil else { return }
        guard running, poll.run == run, let sub = subscription else { return finish(poll, .failure(.truncated)) }
        let events = sub.after(poll.since)
        if draw(.pollCut) { return finish(poll, .failure(.truncated)) }
        if draw(.pollOversized) { return finish(poll, .failure(.bodyTooLarge)) }
        if draw(.pollMalformed) {
            poll.malformed = true
            return finish(poll, ok(200, Self.brokenEvents))
        }
        poll.delivered = events.map(\.id)
        finish(poll, ok(200, "[" + events.map(\.json).joined(separator: ",\n") + "]"))
    }

    private func finish(_ poll: Held, _ result: Result<HTTPResponse, TransportError>) {
        guard poll.answer == nil else { return }
        if case .failure = result { poll.delivered = [] }
        poll.answer = result
    }

    /// Appends an event to the subscription (when there is one) and answers a held poll waiting for it.
    @discardableResult
    private func emit(_ type: String, data: String, kind: Checker.EventKind) -> Int? {
        globalID += 1
        guard running else { return nil }
        guard let id = subscription?.nextID else {
            checker.eventCreated(run: run, id: nil, kind: kind, at: runtime.monotonicNow)
            return nil
        }
        subscription!.nextID += 1
        let dropped = dropNext
        dropNext = false
        let json =
            #"{"id":\#(id),"globalID":\#(globalID),"time":"\#(eventTime())","type":"\#(type)","data":\#(data)}"#
        if !dropped { subscription!.append(Stored(id: id, json: json)) }
        let verdict = checker.eventCreated(run: run, id: id, kind: kind, at: runtime.monotonicNow)
        if !quietEvents {
            world.trace("st event \(id) \(type)\(describe(kind)) [\(verdict)]\(dropped ? " (dropped)" : "")")
        }
        if let held, held.answer == nil, held.run == run, id > held.since, !dropped { scheduleFinish(held) }
        return id
    }

    /// What an event is about, by index (the trace names no identifier).
    private func describe(_ kind: Checker.EventKind) -> String {
        switch kind {
        case .local(let folder): " folder #\(folderIndex(folder))"
        case .completion(let device, let folder, let needs, let sequence, let remote, let edge):
            " device #\(devices.firstIndex { $0.id == device } ?? -1) folder #\(folderIndex(folder)) "
                + "\(needs ? "needs" : "in sync") seq=\(sequence) \(remote)\(edge ? " edge" : "")"
        case .configSaved: ""
        }
    }

    // MARK: - The world: changes

    private func folderIndex(_ id: String) -> Int { folders.firstIndex { $0.id == id } ?? -1 }

    /// Tells the checker the facts that decide whether `folder` is shared (README, "When the phone is woken").
    private func tellSharing(_ folder: Folder) {
        checker.sharing(
            folder: folder.id, paused: folder.paused,
            devices: folder.devices.map { d in
                (
                    device: d, paused: devices.first { $0.id == d }?.paused ?? true,
                    remote: (remote[Pair(device: d, folder: folder.id)] ?? .valid).rawValue
                )
            }, at: runtime.monotonicNow)
    }

    /// A local change in folder `index`: Syncthing scans it (unless paused), announces LocalIndexUpdated, and every
    /// peer sharing it now needs the new data.
    func localChange(_ index: Int, quiet: Bool = false) {
        guard running, index < folders.count, !folders[index].paused else { return }
        let folder = folders[index]
        let items = rng.int(1...3)
        fileCounter += 1
        let names = (0..<items).map { #""Journal-\#(fileCounter)-\#($0).md""# }.joined(separator: ",")
        let sequence = rng.int(10...100_000)
        if !quiet { world.trace("world change in folder #\(index)") }
        emit(
            "LocalIndexUpdated",
            data:
                #"{"folder":"\#(folder.id)","items":\#(items),"filenames":[\#(names)],"sequence":\#(sequence),"version":\#(sequence)}"#,
            kind: .local(folder: folder.id))
        for device in folder.devices {
            let pair = Pair(device: device, folder: folder.id)
            guard remote[pair] == .valid, devices.first(where: { $0.id == device })?.paused == false else { continue }
            need[pair, default: Need()].items += Int64(items)
            need[pair, default: Need()].bytes += Int64(items * rng.int(100...50_000))
            transfer(pair, edge: false)
        }
    }

    /// A peer's need of a folder changed: report it (when connected) and let it fetch.
    private func transfer(_ pair: Pair, edge: Bool) {
        // A paused folder is not synced, and reports nothing.
        guard folders.first(where: { $0.id == pair.folder })?.paused == false else { return }
        guard let device = devices.first(where: { $0.id == pair.device }), device.connected, !device.paused,
            let n = need[pair], n.items > 0, remote[pair] == .valid
        else {
            if edge { reportCompletion(pair, edge: true) }
            return
        }
        reportCompletion(pair, edge: edge)
        guard !n.transferring else { return }
        need[pair]?.transferring = true
        runtime.onHost(after: rng.duration(.seconds(1), .seconds(8))) { [self] in progress(pair) }
    }

    private func progress(_ pair: Pair) {
        guard var n = need[pair], n.transferring else { return }
        let device = devices.first { $0.id == pair.device }
        guard running, device?.connected == true, device?.paused == false, remote[pair] == .valid,
            !(folders.first { $0.id == pair.folder }?.paused ?? true)
        else {
            need[pair]?.transferring = false
            return
        }
        if rng.chance(0.4) || n.items <= 1 {
            n.items = 0
            n.bytes = 0
            n.sequence += 1
            n.transferring = false
            need[pair] = n
            reportCompletion(pair, edge: false)
            return
        }
        n.items -= 1
        n.bytes = n.bytes * 2 / 3
        need[pair] = n
        reportCompletion(pair, edge: false)
        runtime.onHost(after: rng.duration(.seconds(2), .seconds(10))) { [self] in progress(pair) }
    }

    /// A FolderCompletion event for a pair (Syncthing sends them for connected peers; for a declined pair too).
    private func reportCompletion(_ pair: Pair, edge: Bool) {
        guard let n = need[pair] else { return }
        let state = remote[pair] ?? .valid
        let completion = n.items > 0 ? 50 : 100
        emit(
            "FolderCompletion",
            data:
                #"{"completion":\#(completion),"device":"\#(pair.device)","folder":"\#(pair.folder)","globalBytes":100000,"globalItems":40,"needBytes":\#(n.bytes),"needDeletes":0,"needItems":\#(n.items),"remoteState":"\#(state.rawValue)","sequence":\#(n.sequence)}"#,
            kind: .completion(
                device: pair.device, folder: pair.folder, needs: n.items > 0, sequence: n.sequence,
                remote: state.rawValue, edge: edge))
    }

    /// A peer comes online or goes away.
    func setConnected(_ index: Int, _ connected: Bool) {
        guard index < devices.count, devices[index].connected != connected else { return }
        devices[index].connected = connected
        world.trace("world device #\(index) \(connected ? "connected" : "disconnected")")
        checker.deviceConnected(devices[index].id, connected, at: runtime.monotonicNow)
        guard connected, running else { return }
        for folder in folders where folder.devices.contains(devices[index].id) {
            transfer(Pair(device: devices[index].id, folder: folder.id), edge: false)
        }
    }

    /// A peer that had everything needs data again without a local change here (it reset its copy).
    func peerReset() {
        let pairs = need.keys.filter { need[$0]?.items == 0 && remote[$0] == .valid }.sorted {
            ($0.device, $0.folder) < ($1.device, $1.folder)
        }
        guard running, !pairs.isEmpty else { return }
        let pair = rng.pick(pairs)
        need[pair]?.items = Int64(rng.int(1...20))
        need[pair]?.bytes = Int64(rng.int(1000...1_000_000))
        world.trace("world peer reset")
        transfer(pair, edge: true)
    }

    /// A peer declines a folder, or accepts one it had declined (`remoteState`).
    func remoteChange() {
        let pairs = remote.keys.sorted { ($0.device, $0.folder) < ($1.device, $1.folder) }
        guard running, !pairs.isEmpty else { return }
        let pair = rng.pick(pairs)
        let before = remote[pair] ?? .valid
        let after: Remote = before == .valid ? (rng.chance(0.5) ? .notSharing : .paused) : .valid
        remote[pair] = after
        world.trace(
            "world remote state of device #\(devices.firstIndex { $0.id == pair.device } ?? -1) folder "
                + "#\(folderIndex(pair.folder)): \(before.rawValue) → \(after.rawValue)")
        if let f = folders.first(where: { $0.id == pair.folder }) { tellSharing(f) }
        if after == .valid {
            // Accepting: Syncthing reports the pair at once (complete at sequence 0 until the peer's index comes,
            // docs/syncthing-api.md), then what it needs of this server's data.
            let needs = rng.int(0...5)
            need[pair] = Need(items: 0, bytes: 0, sequence: 0)
            reportCompletion(pair, edge: false)
            need[pair] = Need(items: Int64(needs), bytes: Int64(needs) * 5000, sequence: 4)
            transfer(pair, edge: needs > 0)
        } else {
            need[pair]?.transferring = false
            reportCompletion(pair, edge: false)
        }
    }

    /// Someone pauses or resumes a device or a folder, or shares a folder with a device or stops sharing it.
    func configChange() {
        guard running else { return }
        switch rng.int(0...2) {
        case 0 where !devices.isEmpty:
            let i = rng.int(0...(devices.count - 1))
            devices[i].paused.toggle()
            world.trace("world device #\(i) \(devices[i].paused ? "paused" : "resumed")")
        case 1:
            let i = rng.int(0...(folders.count - 1))
            folders[i].paused.toggle()
            world.trace("world folder #\(i) \(folders[i].paused ? "paused" : "resumed")")
        default:
            let i = rng.int(0...(folders.count - 1))
            let d = rng.pick(devices).id
            if let at = folders[i].devices.firstIndex(of: d) {
                folders[i].devices.remove(at: at)
                need[Pair(device: d, folder: folders[i].id)] = nil
                remote[Pair(device: d, folder: folders[i].id)] = nil
                world.trace("world folder #\(i) unshared with a device")
            } else {
                folders[i].devices.append(d)
                let pair = Pair(device: d, folder: folders[i].id)
                remote[pair] = .valid
                need[pair] = Need(items: Int64(rng.int(1...5)), bytes: 9000, sequence: 1)
                world.trace("world folder #\(i) shared with a device")
            }
        }
        saved()
        for folder in folders { tellSharing(folder) }
        for folder in folders {
            for device in folder.devices { transfer(Pair(device: device, folder: folder.id), edge: false) }
        }
    }

    /// Syncthing saves its config: config.xml is rewritten (whole), then one ConfigSaved (sometimes two).
    private func saved() {
        file.write(port: port, key: key, devices: devices, folders: folders, myID: myID)
        let payload =
            #"{"version":37,"gui":{"address":"127.0.0.1:\#(port)","apiKey":"\#(key)"},"folders":[\#(folders.map { #"{"id":"\#($0.id)","path":"\#($0.path)"}"# }.joined(separator: ","))],"devices":[\#(devices.map { #"{"deviceID":"\#($0.id)","name":"\#($0.name)"}"# }.joined(separator: ","))]}"#
        emit("ConfigSaved", data: payload, kind: .configSaved)
        if rng.chance(0.2) { emit("ConfigSaved", data: payload, kind: .configSaved) }
    }

    /// The GUI's address or API key changes in Syncthing's settings: config.xml and ConfigSaved first, then the GUI
    /// server restarts (refusing for a few milliseconds, or about 17 s after many changes in a row).
    func guiChange(newPort: Bool, newKey: Bool) {
        guard running, file.present else { return }
        if newPort { port = rng.int(20_000...60_000) }
        if newKey { key = rng.token(32) }
        world.trace("world GUI change\(newPort ? " address" : "")\(newKey ? " key" : "")")
        world.plant(key)
        world.plant("127.0.0.1:\(port)")
        saved()
        recentGUIChanges = recentGUIChanges.filter { runtime.trueNow - $0 < .seconds(60) } + [runtime.trueNow]
        let pause =
            recentGUIChanges.count >= 5 ? Duration.seconds(17) : rng.duration(.milliseconds(5), .milliseconds(30))
        refusingUntil = runtime.trueNow + pause
        connection += 1
    }

    /// config.xml goes away (a volume unmounted) and comes back after `length`.
    func configMissing(for length: Duration) {
        guard file.present, running else { return }
        file.present = false
        world.trace("world config.xml missing")
        runtime.onHost(after: length) { [self] in
            file.present = true
            world.trace("world config.xml back")
        }
    }

    // MARK: - The world: restarts

    /// How a stop ends a held long-poll (docs/syncthing-api.md, Restarts).
    enum StopStyle {
        case clean, killed
    }

    /// Syncthing stops, and starts again after `downtime`. A hand edit of config.xml made meanwhile takes effect at
    /// the start; `newIdentity` gives it a new Device ID; `busy` makes a burst of events right after the start.
    func restart(
        downtime: Duration, style: StopStyle, handEdit: (port: Bool, key: Bool)? = nil, newIdentity: Bool = false,
        busy: Bool = false
    ) {
        guard running, file.present else { return }
        world.trace("world Syncthing stops (\(style == .clean ? "clean" : "killed"))")
        // A clean stop answers the held poll with what it has (200), a kill cuts it.
        if let held, held.answer == nil {
            if style == .clean { finishNow(held) } else { finish(held, .failure(.truncated)) }
        }
        running = false
        if let edit = handEdit {
            let newPort = edit.port ? rng.int(20_000...60_000) : nil
            let newKey = edit.key ? rng.token(32) : nil
            file.handEdit(port: newPort, key: newKey)
            world.trace("world config.xml edited by hand")
        }
        runtime.onHost(after: downtime) { [self] in start(newIdentity: newIdentity, busy: busy) }
    }

    private func start(newIdentity: Bool, busy: Bool) {
        guard !running else { return }
        // A hand edit made while it was stopped is what it starts with.
        port = file.port
        key = file.key
        world.plant(key)
        world.plant("127.0.0.1:\(port)")
        if newIdentity { myID = myID == myIDs[0] ? myIDs[1] : myIDs[0] }
        run += 1
        running = true
        connection += 1
        subscription = nil
        startTime = Self.rfc3339(runtime.wallNow)
        for index in devices.indices {
            need.keys.filter { $0.device == devices[index].id }.forEach { need[$0]?.transferring = false }
        }
        world.trace("world Syncthing starts (run \(run))")
        checker.syncthingStarted(run: run, at: runtime.monotonicNow)
        for folder in folders {
            for device in folder.devices { transfer(Pair(device: device, folder: folder.id), edge: false) }
        }
        if busy {
            runtime.onHost(after: rng.duration(.milliseconds(300), .seconds(3))) { [self] in
                for _ in 0..<rng.int(20...300) { localChange(rng.int(0...(folders.count - 1))) }
            }
        }
    }

    /// Many events at once: past 1000 of them, the oldest leave the buffer before the service reads them.
    func burst() {
        guard running else { return }
        let count = rng.int(900...2500)
        world.trace("world burst of \(count) changes")
        quietEvents = true
        for _ in 0..<count { localChange(rng.int(0...(folders.count - 1)), quiet: true) }
        quietEvents = false
    }

    /// An event's `time` (the service ignores it): the host's wall clock to the second.
    private func eventTime() -> String {
        let second = runtime.wallNow.components.seconds
        if stampCache.second != second { stampCache = (second, Self.rfc3339(.seconds(second))) }
        return stampCache.text
    }

    /// Syncthing's `startTime`: RFC 3339, whole seconds, UTC offset.
    static func rfc3339(_ sinceEpoch: Duration) -> String {
        let seconds = sinceEpoch.components.seconds
        let (y, m, d) = RetryAfter.civilFromDays(seconds / 86_400)
        let rest = seconds % 86_400
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(y)-\(two(m))-\(two(d))T\(two(rest / 3600)):\(two(rest % 3600 / 60)):\(two(rest % 60))Z"
    }
}

extension SimRuntime {
    /// A cancellable host entry after `delay` (for Syncthing's own timeouts).
    func hostTimer(after delay: Duration, _ body: @escaping () -> Void) -> Token {
        let token = Token()
        onHost(after: delay) {
            guard !token.cancelled else { return }
            body()
        }
        return token
    }
}
