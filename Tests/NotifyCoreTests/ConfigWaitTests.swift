import Testing

@testable import NotifyCore

/// The config.xml wait's decisions on virtual time: keep looking, stop, and how a wait without a config.xml ends.
@Suite("Config wait on virtual time")
struct ConfigWaitTests {
    /// Looks `missing` at each instant the wait asks for, until it stops; returns those instants (after the first
    /// look at `start`) and how many times it said to announce.
    static func run(_ wait: inout ConfigWait, from start: Instant) -> (looks: [Instant], announced: Int) {
        var now = start
        var looks: [Instant] = []
        var announced = 0
        for _ in 0..<1000 {
            guard case .lookAgain(let at, let announce) = wait.next(after: .missing, now: now) else { break }
            #expect(at > now, "every look is later than the one before: never a spin")
            if announce { announced += 1 }
            looks.append(at)
            now = at
        }
        return (looks, announced)
    }

    @Test("a missing config.xml is looked for every interval until the wait is over, announced once")
    func looksUntilTheWaitIsOver() {
        let start = Instant.seconds(100)
        var wait = ConfigWait(wait: .seconds(5), pollInterval: .seconds(2), start: start)
        let (looks, announced) = Self.run(&wait, from: start)
        #expect(looks == [.seconds(102), .seconds(104), .seconds(105)])
        #expect(announced == 1)
    }

    @Test("a found or unreadable config.xml ends the wait at once, also in its middle")
    func foundOrBlockedStops() {
        var wait = ConfigWait(wait: .seconds(60), start: .zero)
        #expect(wait.next(after: .found, now: .zero) == .stop)
        #expect(wait.next(after: .blocked, now: .zero) == .stop)
        #expect(wait.next(after: .missing, now: .zero) == .lookAgain(at: .seconds(1), announce: true))
        #expect(wait.next(after: .missing, now: .seconds(1)) == .lookAgain(at: .seconds(2), announce: false))
        #expect(wait.next(after: .found, now: .seconds(2)) == .stop)
    }

    @Test("no wait looks exactly once; a late look (the machine slept) stops")
    func zeroAndLate() {
        var none = ConfigWait(wait: .zero, start: .zero)
        #expect(none.next(after: .missing, now: .zero) == .stop)
        var late = ConfigWait(wait: .seconds(30), start: .zero)
        #expect(late.next(after: .missing, now: .seconds(31)) == .stop)
    }

    @Test("a config.xml that may still appear exits 75 for a restart; one that cannot be used exits 78")
    func exitStatus() {
        #expect(ConfigWait.exitStatus(mayStillAppear: true) == .temporary)
        #expect(ConfigWait.exitStatus(mayStillAppear: false) == .configuration)
        #expect(!ConfigWait.exitStatus(mayStillAppear: true).preventsRestart)
        #expect(ConfigWait.exitStatus(mayStillAppear: false).preventsRestart)
    }
}
