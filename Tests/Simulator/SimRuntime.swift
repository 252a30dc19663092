import Dispatch
import NotifyCore
import NotifyRuntime

/// The simulated host's clocks and threads: a discrete-event scheduler that runs the real `Service` (as its
/// `ServiceRuntime`) and the simulated world on one thread, in a replayable order.
///
/// Three clocks, as on a real host (docs/architecture.md, "The simulator"):
/// - **true time** (`trueNow`, from the run's start): the relay's clock, and the host's boot clock;
/// - **monotonic** (`monotonicNow`, CLOCK_MONOTONIC): stops while the host is suspended;
/// - **wall** (`wallNow`, CLOCK_REALTIME): jumps forward over a suspend, and steps either way when NTP corrects it.
///
/// Dispatch's semantics are modelled, not the service's intentions: a monotonic timer fires when the monotonic clock
/// reaches its deadline; a wall-clock source (`schedule(at:alsoOnWallClock: true)` adds one) when the wall clock
/// reaches the wall time its deadline had when it was armed. Nothing on the host runs while it is suspended.
///
/// Threads: each `ServiceLane` is a serial lane. A job on it runs to completion at once, on a clock of its own that
/// its requests advance (`spend(_:)`); what it hands to the engine lands when the job's clock says. A long-poll
/// instead waits in `runNested(until:)`, which runs the rest of the world until Syncthing answers it, as the poll
/// thread blocks in libcurl while the engine queue goes on.
final class SimRuntime: ServiceRuntime, @unchecked Sendable {
    // @unchecked: the whole simulation runs on one thread.

    // MARK: - Clocks

    /// True time since the run began.
    private(set) var trueNow: Duration = .zero
    /// How long the host has slept in all.
    private(set) var suspendedTotal: Duration = .zero
    /// The monotonic clock at the run's start.
    let monotonicOrigin = Instant.seconds(5000)
    /// The host's wall clock at the run's start (time since the Unix epoch).
    let wallOrigin: Duration
    /// How far the host's wall clock is from true time (each NTP step moves it).
    private(set) var wallSkew: Duration = .zero
    /// The host is suspended until this true time.
    private(set) var suspendedUntil: Duration?

    /// While the host sleeps: when it fell asleep (its monotonic clock stands still from there).
    private var suspendedSince: Duration?

    var monotonicNow: Instant { monotonicOrigin + ((suspendedSince ?? trueNow) - suspendedTotal) }
    /// The host's wall clock: time since the Unix epoch.
    var wallNow: Duration { wallOrigin + trueNow + wallSkew }
    /// True wall time (the relay's clock): time since the Unix epoch.
    var trueWallNow: Duration { wallOrigin + trueNow }

    init(wallOrigin: Duration) { self.wallOrigin = wallOrigin }

    // MARK: - The queue

    final class Token: ScheduledTimer, @unchecked Sendable {
        var cancelled = false
        func cancel() { cancelled = true }
    }

    private enum Kind {
        /// Runs on the host: shifted by a suspend.
        case host
        /// A host timer on the wall clock: fires when the wall clock reaches `wall`.
        case wall(Duration)
        /// The world outside the host (the relay, the run's script): not shifted.
        case remote
    }

    /// A heap entry: plain values only, so that sifting copies no references; its work is in `jobs[slot]`.
    private struct Entry {
        var at: Duration
        var seq: UInt64
        var kind: Kind
        var slot: Int
    }

    private struct Job {
        var token: Token?
        var body: () -> Void
    }

    private var heap: [Entry] = []
    private var jobs: [Job?] = []
    private var freeSlots: [Int] = []
    private var seq: UInt64 = 0
    /// Entries run at the current instant without time moving (a spin guard).
    private var sameInstant = 0
    private var lastInstant: Duration = .zero
    /// Set when the run must stop at once (a spin, or the run's hard end).
    private(set) var halted: String?
    /// No entry later than this runs.
    var hardEnd: Duration = .seconds(Int64.max / 4)

    private func less(_ a: Entry, _ b: Entry) -> Bool { a.at < b.at || (a.at == b.at && a.seq < b.seq) }

    private func push(_ entry: Entry) {
        heap.append(entry)
        var i = heap.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard less(heap[i], heap[parent]) else { break }
            heap.swapAt(i, parent)
            i = parent
        }
    }

    private func pop() -> Entry? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let top = heap.removeLast()
        siftDown(0)
        return top
    }

    private func siftDown(_ start: Int) {
        var i = start
        while true {
            let l = 2 * i + 1
            let r = l + 1
            var m = i
            if l < heap.count, less(heap[l], heap[m]) { m = l }
            if r < heap.count, less(heap[r], heap[m]) { m = r }
            guard m != i else { return }
            heap.swapAt(i, m)
            i = m
        }
    }

    private func heapify() {
        guard heap.count > 1 else { return }
        for i in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(i) }
    }

    private func add(at: Duration, _ kind: Kind, token: Token? = nil, _ body: @escaping () -> Void) {
        seq += 1
        var at = max(at, trueNow)
        // Nothing on the host runs while it sleeps (a signal sent to it meanwhile is handled at the resume).
        if case .remote = kind {} else if let until = suspendedUntil, at < until { at = until }
        let job = Job(token: token, body: body)
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            jobs[slot] = job
        } else {
            slot = jobs.count
            jobs.append(job)
        }
        push(Entry(at: at, seq: seq, kind: kind, slot: slot))
    }

    /// The true time at which the monotonic clock reads `instant` (if the host stays awake until then).
    private func trueTime(ofMonotonic instant: Instant) -> Duration {
        (suspendedUntil ?? trueNow) + (instant - monotonicNow)
    }

    /// The true time at which the wall clock reads `wall`.
    private func trueTime(ofWall wall: Duration) -> Duration { wall - wallOrigin - wallSkew }

    /// Something outside the host happens at true time `at`.
    func atTrueTime(_ at: Duration, _ body: @escaping () -> Void) { add(at: at, .remote, body) }

    /// Something on the host (Syncthing, the service's own work) happens after `delay` of host time.
    func onHost(after delay: Duration, _ body: @escaping () -> Void) { add(at: trueNow + delay, .host, body) }

    /// Runs the next entry. Returns false when nothing is left, or the run is halted or past its hard end.
    @discardableResult
    func step() -> Bool {
        guard halted == nil else { return false }
        while let entry = pop() {
            let job = jobs[entry.slot]!
            jobs[entry.slot] = nil
            freeSlots.append(entry.slot)
            if job.token?.cancelled == true { continue }
            if entry.at > hardEnd {
                halted = "hard end"
                return false
            }
            if entry.at == lastInstant {
                sameInstant += 1
                if sameInstant > 200_000 {
                    halted = "spin: 200000 steps without time moving"
                    return false
                }
            } else {
                sameInstant = 0
                lastInstant = entry.at
            }
            trueNow = max(trueNow, entry.at)
            job.body()
            return true
        }
        return false
    }

    /// Stops the run at once.
    func halt(_ why: String) { if halted == nil { halted = why } }

    /// When the next entry is due (true time), if any.
    var nextDue: Duration? {
        heap.filter { jobs[$0.slot]!.token?.cancelled != true }.map(\.at).min()
    }

    // MARK: - Host suspend and NTP

    /// The host sleeps for `length` from now: its monotonic clock stops, its wall clock goes on, nothing on it runs.
    /// At the resume, a wall-clock timer whose time passed meanwhile fires at once.
    /// Returns false (and does nothing) when the host already sleeps.
    @discardableResult
    func suspend(for length: Duration) -> Bool {
        guard suspendedUntil == nil else { return false }
        let resume = trueNow + length
        suspendedSince = trueNow
        suspendedUntil = resume
        for i in heap.indices {
            switch heap[i].kind {
            case .host: heap[i].at += length
            case .wall, .remote: break
            }
        }
        retimeWallTimers(notBefore: resume)
        add(at: resume, .remote) { [self] in
            suspendedTotal += length
            suspendedSince = nil
            suspendedUntil = nil
        }
        return true
    }

    /// NTP steps the host's wall clock by `offset` (negative: back). Monotonic time is untouched.
    func stepWallClock(by offset: Duration) {
        wallSkew += offset
        retimeWallTimers(notBefore: suspendedUntil ?? trueNow)
    }

    private func retimeWallTimers(notBefore floor: Duration) {
        for i in heap.indices {
            if case .wall(let wall) = heap[i].kind { heap[i].at = max(floor, trueTime(ofWall: wall)) }
        }
        heapify()
    }

    // MARK: - ServiceRuntime

    /// The clock of the job running now (a lane's request in progress), else the host's monotonic clock.
    private var jobClock: Instant?

    var engineQueue: DispatchQueue? { nil }

    func now() -> Instant { jobClock ?? monotonicNow }

    func sleep(until instant: Instant) {
        precondition(jobClock != nil, "a blocking wait outside a lane's job")
        jobClock = max(jobClock!, instant)
    }

    func onEngine(_ body: @escaping @Sendable () -> Void) {
        add(at: trueTime(ofMonotonic: now()), .host, body)
    }

    func schedule(at: Instant, alsoOnWallClock: Bool, _ body: @escaping @Sendable () -> Void) -> any ScheduledTimer {
        let token = Token()
        // As DispatchRuntime does: a monotonic source and, when asked, a wall-clock one; the first to fire wins.
        let once: () -> Void = {
            token.cancelled = true
            body()
        }
        add(at: trueTime(ofMonotonic: at), .host, token: token, once)
        if alsoOnWallClock {
            // Dispatch's `wallDeadline: .now() + delay`: the wall time the deadline has now.
            let wall = wallNow + (at - now())
            add(at: trueTime(ofWall: wall), .wall(wall), token: token, once)
        }
        return token
    }

    // MARK: - Lanes

    private struct Lane {
        var busy = false
        var queue: [(body: () -> Void, queued: Instant)] = []
    }
    /// Told when a job ends (lane 0: the poll loop's, 1: the relay's, 2: the peers'), at its end, with when it was
    /// asked for.
    var jobEnded: ((Int, Instant, Instant) -> Void)?
    /// When the running job was handed to its lane (the engine asked for it then).
    private(set) var jobQueuedAt: Instant?
    private var lanes = [Lane](repeating: Lane(), count: 3)

    /// The production runtime's threads: the long-poll and the poll loop's other requests share one.
    private func index(_ lane: ServiceLane) -> Int {
        switch lane {
        case .longPoll, .pollLoop: 0
        case .relay: 1
        case .peers: 2
        }
    }

    func onLane(_ lane: ServiceLane, _ body: @escaping @Sendable () -> Void) {
        let i = index(lane)
        lanes[i].queue.append((body, now()))
        guard !lanes[i].busy else { return }
        lanes[i].busy = true
        add(at: trueTime(ofMonotonic: now()), .host) { [self] in runNextJob(i) }
    }

    private func runNextJob(_ i: Int) {
        guard !lanes[i].queue.isEmpty else {
            lanes[i].busy = false
            return
        }
        let job = lanes[i].queue.removeFirst()
        let saved = (jobClock, jobQueuedAt)
        jobClock = monotonicNow
        jobQueuedAt = job.queued
        job.body()
        let end = jobClock!
        if let jobEnded { add(at: trueTime(ofMonotonic: end), .host) { jobEnded(i, job.queued, end) } }
        (jobClock, jobQueuedAt) = saved
        add(at: trueTime(ofMonotonic: end), .host) { [self] in runNextJob(i) }
    }

    /// Inside a job: the request being performed takes `duration` of the job's clock.
    func spend(_ duration: Duration) {
        precondition(jobClock != nil, "a request outside a lane's job")
        jobClock = jobClock! + max(.zero, duration)
    }

    /// Inside a job whose clock is the host's: runs the rest of the world until `done` (a long-poll answered) or
    /// the run halts; the job's clock then reads the host's.
    func runNested(until done: () -> Bool) {
        let saved = jobClock
        jobClock = nil
        while !done() {
            guard step() else { break }
        }
        jobClock = saved == nil ? nil : monotonicNow
    }

    /// Runs `body` when the host's clock reaches the running job's (at once outside a job): what a request's answer
    /// tells the world's observers happens when the answer comes, not when the request was sent.
    func atJobTime(_ body: @escaping () -> Void) { add(at: trueTime(ofMonotonic: now()), .host, body) }

    /// The host's wall clock as the running job sees it, in milliseconds since the epoch.
    func unixMilliseconds() -> Int64 {
        let (seconds, attoseconds) = (wallNow + (now() - monotonicNow)).components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    /// True time as the running job sees it (a request's answer comes after the time it took).
    var trueNowInJob: Duration { trueNow + (now() - monotonicNow) }

    /// True while a lane's job runs (its clock is not the host's).
    var inJob: Bool { jobClock != nil }
}
