import Testing
import VendHardware
import VendSettings
import VendTime

/// The spiral's turn as a pure state machine, on manual time: departure, return, both limits,
/// and a bouncing cam.
@Suite struct SpiralCycleTests {
    let time = ManualTimekeeper()
    let timing = SpiralTiming(departureLimit: .seconds(1), turnLimit: .seconds(5), camDebounce: .milliseconds(20))

    @Test func aTurnIsDepartureThenReturnEachHeldForTheDebounce() {
        let start = time.now
        var cycle = SpiralCycle(timing: timing, startedAt: start)
        #expect(cycle.nextDeadline == start + .seconds(1))
        #expect(cycle.homeSwitch(atHome: false, at: start + .milliseconds(150)) == nil)
        // Not yet held for 20 ms: still leaving home, the departure limit still applies.
        #expect(cycle.nextDeadline == start + .milliseconds(170))
        #expect(cycle.timePassed(to: start + .milliseconds(170)) == nil)
        // Departed: now the turn limit is what is waited for.
        #expect(cycle.nextDeadline == start + .seconds(5))
        #expect(cycle.homeSwitch(atHome: true, at: start + .milliseconds(1_200)) == nil)
        #expect(cycle.timePassed(to: start + .milliseconds(1_219)) == nil)
        #expect(cycle.timePassed(to: start + .milliseconds(1_220)) == .turned(after: .milliseconds(1_200)))
        #expect(cycle.nextDeadline == nil)
    }

    @Test func noDepartureWithinTheLimitIsAMissingMotor() {
        let start = time.now
        var cycle = SpiralCycle(timing: timing, startedAt: start)
        #expect(cycle.timePassed(to: start + .milliseconds(999)) == nil)
        #expect(cycle.timePassed(to: start + .seconds(1)) == .noDeparture)
        #expect(cycle.timePassed(to: start + .seconds(2)) == nil)  // ended once
    }

    @Test func noReturnWithinTheLimitIsAJam() {
        let start = time.now
        var cycle = SpiralCycle(timing: timing, startedAt: start)
        _ = cycle.homeSwitch(atHome: false, at: start + .milliseconds(100))
        #expect(cycle.timePassed(to: start + .milliseconds(4_999)) == nil)
        #expect(cycle.timePassed(to: start + .seconds(5)) == .noReturn)
    }

    @Test func camBounceShorterThanTheDebounceIsNotADeparture() {
        let start = time.now
        var cycle = SpiralCycle(timing: timing, startedAt: start)
        // Three bounces of 5 ms each, then nothing: the switch never really left home.
        for offset in [100, 110, 120] {
            _ = cycle.homeSwitch(atHome: false, at: start + .milliseconds(offset))
            _ = cycle.homeSwitch(atHome: true, at: start + .milliseconds(offset + 5))
        }
        #expect(cycle.timePassed(to: start + .milliseconds(500)) == nil)
        #expect(cycle.timePassed(to: start + .seconds(1)) == .noDeparture)
    }

    @Test func aBouncingReturnCountsFromItsLastEdgeThatHeld() {
        let start = time.now
        var cycle = SpiralCycle(timing: timing, startedAt: start)
        _ = cycle.homeSwitch(atHome: false, at: start + .milliseconds(100))
        _ = cycle.timePassed(to: start + .milliseconds(120))
        _ = cycle.homeSwitch(atHome: true, at: start + .milliseconds(1_000))
        _ = cycle.homeSwitch(atHome: false, at: start + .milliseconds(1_008))  // contact bounce
        #expect(cycle.timePassed(to: start + .milliseconds(1_020)) == nil)
        _ = cycle.homeSwitch(atHome: true, at: start + .milliseconds(1_010))
        #expect(cycle.timePassed(to: start + .milliseconds(1_029)) == nil)
        #expect(cycle.timePassed(to: start + .milliseconds(1_030)) == .turned(after: .milliseconds(1_010)))
    }

    @Test func aChangeBegunBeforeTheLimitIsJudgedAfterIt() {
        let start = time.now
        var cycle = SpiralCycle(timing: timing, startedAt: start)
        // Leaves home 10 ms before the limit; it holds 20 ms, so it is known 10 ms after the limit.
        _ = cycle.homeSwitch(atHome: false, at: start + .milliseconds(990))
        #expect(cycle.nextDeadline == start + .milliseconds(1_010))
        #expect(cycle.timePassed(to: start + .seconds(1)) == nil)
        #expect(cycle.timePassed(to: start + .milliseconds(1_010)) == nil)
        #expect(cycle.nextDeadline == start + .seconds(5))
    }

    @Test func aChangeBegunAfterTheLimitDoesNotSaveTheTurn() {
        let start = time.now
        var cycle = SpiralCycle(timing: timing, startedAt: start)
        _ = cycle.homeSwitch(atHome: false, at: start + .milliseconds(100))
        _ = cycle.timePassed(to: start + .milliseconds(120))
        // The return edge is handled late, but happened after the 5 s limit.
        #expect(cycle.homeSwitch(atHome: true, at: start + .milliseconds(5_001)) == .noReturn)
    }
}
