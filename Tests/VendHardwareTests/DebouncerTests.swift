import Testing
import VendHardware

@Suite struct DebouncerTests {
    let t0 = ContinuousClock.now

    func ms(_ value: Int) -> ContinuousClock.Instant { t0 + .milliseconds(value) }

    @Test func aBouncingPressCountsOnceWhenItSettles() {
        var debouncer = Debouncer(initialLevels: [false], periods: [.milliseconds(20)])
        // Ten edges within 5 ms (press, bounce, ...), ending pressed.
        for edge in 0..<10 { _ = debouncer.edge(line: 0, isActive: edge % 2 == 1 || edge == 0, at: ms(edge / 2)) }
        #expect(debouncer.settle(at: ms(10)).changes.isEmpty)  // not yet stable for 20 ms
        let settled = debouncer.settle(at: ms(24)).changes
        #expect(settled.map(\.line) == [0])
        #expect(settled.map(\.isActive) == [true])
        #expect(debouncer.settle(at: ms(100)).changes.isEmpty)
    }

    @Test func aBounceThatEndsReleasedIsNoPress() {
        var debouncer = Debouncer(initialLevels: [false], periods: [.milliseconds(20)])
        for edge in 0..<10 { _ = debouncer.edge(line: 0, isActive: edge % 2 == 0, at: ms(edge / 2)) }
        #expect(debouncer.settle(at: ms(40)).changes.isEmpty)
    }

    @Test func aGlitchShorterThanThePeriodIsIgnored() {
        var debouncer = Debouncer(initialLevels: [false], periods: [.milliseconds(20)])
        _ = debouncer.edge(line: 0, isActive: true, at: ms(0))
        _ = debouncer.edge(line: 0, isActive: false, at: ms(3))
        #expect(debouncer.settle(at: ms(50)).changes.isEmpty)
    }

    @Test func aReleaseRightAfterAPressIsNotSwallowed() {
        // A lockout debounce ("ignore 20 ms after the first edge") loses this release.
        var debouncer = Debouncer(initialLevels: [false], periods: [.milliseconds(20)])
        _ = debouncer.edge(line: 0, isActive: true, at: ms(0))
        #expect(debouncer.settle(at: ms(20)).changes.map(\.isActive) == [true])
        _ = debouncer.edge(line: 0, isActive: false, at: ms(21))
        #expect(debouncer.settle(at: ms(41)).changes.map(\.isActive) == [false])
    }

    @Test func linesSettleIndependentlyWithTheirOwnPeriods() {
        var debouncer = Debouncer(initialLevels: [false, false], periods: [.milliseconds(5), .milliseconds(50)])
        _ = debouncer.edge(line: 0, isActive: true, at: ms(0))
        let deadline = debouncer.edge(line: 1, isActive: true, at: ms(0))
        #expect(deadline == ms(50))
        #expect(debouncer.settle(at: ms(10)).changes.map(\.line) == [0])
        #expect(debouncer.nextDeadline == ms(50))
        #expect(debouncer.settle(at: ms(50)).changes.map(\.line) == [1])
        #expect(debouncer.nextDeadline == nil)
    }

    @Test func aLineThatReadsOtherwiseThanItsLastEdgeIsJudgedAgainFromItsLevel() {
        var debouncer = Debouncer(initialLevels: [false], periods: [.milliseconds(20)])
        // Pressed, then an edge labelled "released" while the button is held (the last edge lost).
        _ = debouncer.edge(line: 0, isActive: true, at: ms(0))
        _ = debouncer.edge(line: 0, isActive: false, at: ms(1))
        let first = debouncer.settle(at: ms(21), levels: [true])
        #expect(first.changes.isEmpty)
        #expect(first.recheckAt == ms(41))
        #expect(debouncer.settle(at: ms(40), levels: [true]).changes.isEmpty)  // not yet a period
        let second = debouncer.settle(at: ms(41), levels: [true])
        #expect(second.changes.map(\.isActive) == [true])
        #expect(second.changes.map(\.at) == [ms(41)])
        #expect(second.recheckAt == nil)
        // Levels that agree with the edges change nothing.
        _ = debouncer.edge(line: 0, isActive: false, at: ms(50))
        let agreed = debouncer.settle(at: ms(70), levels: [false])
        #expect(agreed.changes.map(\.isActive) == [false])
        #expect(agreed.recheckAt == nil)
    }
}
