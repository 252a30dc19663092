import Testing

@testable import NotifyCore

/// The debouncer alone, as timelines on virtual time: when the open batch is due, and which reason it carries.
@Suite("The debouncer")
struct DebouncerTests {
    /// A 1 s debounce capped at 3 s.
    static func debouncer() -> Debouncer { Debouncer(debounce: .seconds(1), maxWait: .seconds(3)) }

    @Test("news at 0 s and 0.5 s with a 1 s debounce: one batch, due at 1.5 s")
    func trailingDebounce() {
        var d = Self.debouncer()
        #expect(d.add(.change, now: .zero) == (deadline: .seconds(1), opened: true))
        #expect(d.add(.change, now: .seconds(0.5)) == (deadline: .seconds(1.5), opened: false))
        #expect(d.batch == Debouncer.Batch(start: .zero, deadline: .seconds(1.5), reason: .change))
        #expect(d.close() == .change)
        #expect(d.batch == nil)
    }

    @Test("news every 0.5 s cannot hold the batch past its 3 s maximum wait after the first")
    func maxWaitCaps() {
        var d = Self.debouncer()
        var deadlines: [Instant] = []
        for tenths in stride(from: 0, through: 40, by: 5) {
            deadlines.append(d.add(.change, now: .seconds(Double(tenths) / 10)).deadline)
        }
        #expect(deadlines.prefix(5) == [.seconds(1), .seconds(1.5), .seconds(2), .seconds(2.5), .seconds(3)])
        #expect(deadlines.dropFirst(4).allSatisfy { $0 == .seconds(3) })
    }

    @Test("a closed batch is gone: the next news opens a new one with its own maximum wait")
    func closeStartsOver() {
        var d = Self.debouncer()
        _ = d.add(.change, now: .zero)
        _ = d.add(.change, now: .seconds(2.5))
        #expect(d.close() == .change)
        #expect(d.close() == nil)
        #expect(d.add(.resync, now: .seconds(10)) == (deadline: .seconds(11), opened: true))
        #expect(d.batch?.start == .seconds(10))
        #expect(d.batch?.reason == .resync)
    }

    @Test("the batch keeps its first reason")
    func firstReasonKept() {
        var d = Self.debouncer()
        _ = d.add(.stalePeer, now: .zero)
        _ = d.add(.change, now: .seconds(0.2))
        _ = d.add(.resync, now: .seconds(0.4))
        #expect(d.close() == .stalePeer)
        #expect(Debouncer.merge(.announce, .change) == .announce)
        #expect(Debouncer.merge(nil, .change) == .change)
    }

    @Test("a maximum wait below the debounce ends every batch at its maximum wait")
    func maxWaitBelowDebounce() {
        var d = Debouncer(debounce: .seconds(5), maxWait: .seconds(2))
        #expect(d.add(.change, now: .seconds(1)).deadline == .seconds(3))
        #expect(d.add(.change, now: .seconds(2)).deadline == .seconds(3))
    }
}
