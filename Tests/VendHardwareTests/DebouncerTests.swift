import Testing
import VendHardware

@Suite struct DebouncerTests {
    let t0 = ContinuousClock.now

    func ms(_ value: Int) -> ContinuousClock.Instant { t0 + .milliseconds(value) }

    @Test func aBouncingPressCountsOnceWhenItSettles() {
        var debouncer = Debouncer(initialLevels: [false], periods: [.milliseconds(20)])
        // Ten edges within 5 ms (press, bounce, ...), ending pressed.
        for edge in 0..<10 { _ = debouncer.edge(line: 0, isActive: edge % 2 == 1 || edge == 0, at: ms(edge / 2)) }
        #expect(debouncer.settle(at: ms(10)).isEmpty)  // not yet stable for 20 ms
        let settled = debouncer.settle(at: ms(24))
        #expect(settled.map(\.line) == [0])
        #expect(settled.map(\.isActive) == [true])
        #expect(debouncer.settle(at: ms(100)).isEmpty)
    }

    @Test func aBounceThatEndsReleasedIsNoPress() {
        var debouncer = Debouncer(initialLevels: [false], periods: [.milliseconds(20)])
        for edge in 0..<10 { _ = debouncer.edge(line: 0, isActive: edge % 2 == 0, at: ms(edge / 2)) }
        #expect(debouncer.settle(at: ms(40)).isEmpty)
    }

    @Test func aGlitchShorterThanThePeriodIsIgnored() {
        var debouncer = Debouncer(initialLevels: [false], periods: [.milliseconds(20)])
        _ = debouncer.edge(line: 0, isActive: true, at: ms(0))
        _ = debouncer.edge(line: 0, isActive: false, at: ms(3))
        #expect(debouncer.settle(at: ms(50)).isEmpty)
    }

    @Test func aReleaseRightAfterAPressIsNotSwallowed() {
        // A lockout debounce ("ignore 20 ms after the first edge") loses this release.
        var debouncer = Debouncer(initialLevels: [false], periods: [.milliseconds(20)])
        _ = debouncer.edge(line: 0, isActive: true, at: ms(0))
        #expect(debouncer.settle(at: ms(20)).map(\.isActive) == [true])
        _ = debouncer.edge(line: 0, isActive: false, at: ms(21))
        #expect(debouncer.settle(at: ms(41)).map(\.isActive) == [false])
    }

    @Test func linesSettleIndependentlyWithTheirOwnPeriods() {
        var debouncer = Debouncer(initialLevels: [false, false], periods: [.milliseconds(5), .milliseconds(50)])
        _ = debouncer.edge(line: 0, isActive: true, at: ms(0))
        let deadline = debouncer.edge(line: 1, isActive: true, at: ms(0))
        #expect(deadline == ms(50))
        #expect(debouncer.settle(at: ms(10)).map(\.line) == [0])
        #expect(debouncer.nextDeadline == ms(50))
        #expect(debouncer.settle(at: ms(50)).map(\.line) == [1])
        #expect(debouncer.nextDeadline == nil)
    }
}
