import Foundation
import Synchronization
import Testing
import VendConfig
import VendHardware
import VendTime
import VendingCore

/// The dispenser on manual time: pulses, windows and the guard are timers that the test fires by
/// advancing the clock, so nothing here sleeps.
@Suite struct DispenserTests {
    let config: VenddConfig
    let time = ManualTimekeeper()
    let chip: SimulatedGPIOChip
    let notices = NoticeLog()
    let outcomes = OutcomeLog()
    let dispenser: Dispenser

    init() throws {
        config = try HardwareFixtures.config()
        chip = SimulatedGPIOChip(timekeeper: time)
        let notices = notices
        dispenser = try Dispenser(chip: chip, slots: config.slots, timekeeper: time, notify: { notices.record($0) })
    }

    @Test func relaysStartInactiveAndPulseForTheConfiguredTime() {
        #expect(!chip.isActive(.offset(11)))
        #expect(dispenser.start("A2", completion: outcomes.record) == nil)
        #expect(chip.isActive(.offset(11)))
        time.advance(by: .milliseconds(49))
        #expect(chip.isActive(.offset(11)))
        #expect(outcomes.all.isEmpty)
        time.advance(by: .milliseconds(1))
        #expect(!chip.isActive(.offset(11)))
        #expect(outcomes.all == [.pulsedWithoutSensor])
        #expect(
            notices.all == [
                .relayEnergised("A2", line: .offset(11)),
                .relayReleased("A2", line: .offset(11), after: .milliseconds(50)),
            ])
        #expect(time.pendingCount == 0)  // the guard went with the pulse
    }

    /// The pulse is timed from the instant the relay was powered: time the vend's own thread
    /// loses after that (its notice, a preemption; here 5 ms of the clock) does not lengthen it.
    @Test func thePulseIsTimedFromThePowerOnNotFromWhenItsEndIsScheduled() throws {
        let time = ManualTimekeeper()
        let chip = SimulatedGPIOChip(timekeeper: time)
        let outcomes = OutcomeLog()
        let dispenser = try Dispenser(
            chip: chip, slots: config.slots, timekeeper: time,
            notify: { notice in
                if case .relayEnergised = notice { time.advance(by: .milliseconds(5)) }
            })
        #expect(dispenser.start("A2", completion: outcomes.record) == nil)
        time.advance(by: .milliseconds(44))
        #expect(chip.isActive(.offset(11)), "49 ms after the power-on")
        time.advance(by: .milliseconds(1))
        #expect(!chip.isActive(.offset(11)), "50 ms after the power-on, whatever the lane did meanwhile")
        #expect(outcomes.all == [.pulsedWithoutSensor])
    }

    /// The relay goes on, and its pulse is timed, on the relay timekeeper's own thread (vendd's
    /// SCHED_FIFO lane), not on the caller's: an ordinary thread preempted between the power-on
    /// and the clock's reading lengthened pulses by up to 13 ms (scripts/bench/relay-pulse.py).
    @Test func theRelayIsPoweredOnTheRelayLaneNotOnTheCallersThread() throws {
        let relays = SystemTimekeeper(threadName: "test-relays")
        let chip = SimulatedGPIOChip(timekeeper: relays)
        let changedOn = Mutex<[String]>([])
        chip.observeOutputs { _, active in
            let thread = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines) ?? "?"
            changedOn.withLock { $0.append("\(active ? "on" : "off") on \(thread)") }
        }
        let outcomes = OutcomeLog()
        let dispenser = try Dispenser(chip: chip, slots: config.slots, timekeeper: relays, notify: { _ in })
        #expect(dispenser.start("A2", completion: outcomes.record) == nil)
        let deadline = ContinuousClock.now + .seconds(10)
        while outcomes.all.isEmpty && ContinuousClock.now < deadline { usleep(1_000) }
        #expect(outcomes.all == [.pulsedWithoutSensor])
        #expect(changedOn.withLock { $0 } == ["on on test-relays", "off on test-relays"])
    }

    @Test func aDropWithinTheWindowConfirmsTheVend() {
        _ = dispenser.start("A1", completion: outcomes.record)
        time.advance(by: .milliseconds(150))  // after the 100 ms pulse
        dispenser.dropSensed(on: .offset(20))
        #expect(outcomes.all == [.dropped])
        #expect(notices.all.contains(.dropSensed("A1", after: .milliseconds(150))))
        #expect(time.pendingCount == 0)
    }

    @Test func aDropIsJudgedByWhenTheSensorSawItNotWhenItWasHandled() {
        _ = dispenser.start("A1", completion: outcomes.record)
        let sensed = time.now + .milliseconds(450)
        time.advance(by: .milliseconds(499))
        // Handled at 499 ms (a busy machine), seen at 450 ms: inside the 500 ms window.
        dispenser.dropSensed(on: .offset(20), at: sensed)
        #expect(outcomes.all == [.dropped])
        #expect(notices.all.contains(.dropSensed("A1", after: .milliseconds(450))))
    }

    @Test func aDropDuringThePulseCompletesTheVendWhenThePulseEnds() {
        _ = dispenser.start("A1", completion: outcomes.record)
        time.advance(by: .milliseconds(30))
        dispenser.dropSensed(on: .offset(20))
        #expect(outcomes.all.isEmpty)
        #expect(chip.isActive(.offset(10)))  // the pulse runs its full length
        time.advance(by: .milliseconds(70))
        #expect(outcomes.all == [.dropped])
        #expect(!chip.isActive(.offset(10)))
    }

    @Test func noDropWithinTheWindowIsNotDropped() {
        _ = dispenser.start("A1", completion: outcomes.record)
        time.advance(by: .milliseconds(499))
        #expect(outcomes.all.isEmpty)
        time.advance(by: .milliseconds(1))
        #expect(outcomes.all == [.notDropped])
        #expect(notices.all.contains(.noDropWithinWindow("A1", window: .milliseconds(500))))
        // The guard (400 ms) was cancelled at the end of the 100 ms pulse: it cut nothing.
        #expect(!notices.all.contains { if case .relayCutByMaximumOnTime = $0 { true } else { false } })
    }

    @Test func aDropOutsideAnyWindowIsReportedAndIgnored() {
        dispenser.dropSensed(on: .offset(20))
        #expect(notices.all == [.dropOutsideWindow(.offset(20))])
        #expect(outcomes.all.isEmpty)
    }

    @Test func neverTwoRelaysAtOnce() {
        #expect(dispenser.start("A1", completion: outcomes.record) == nil)
        time.advance(by: .milliseconds(20))
        #expect(dispenser.start("A2", completion: outcomes.record) == .notDropped)
        #expect(!chip.isActive(.offset(11)))
        #expect(notices.all.contains(.interlockRefused("A2", busyWith: "A1")))
        time.advance(by: .milliseconds(480))
        #expect(outcomes.all == [.notDropped])  // A1's window closed without a drop
        #expect(dispenser.start("A2", completion: outcomes.record) == nil)  // free again
    }

    @Test func aPulseAsLongAsTheLimitIsNotReportedAsCut() throws {
        let config = try ConfigLoader.parse(
            HardwareFixtures.yaml.replacingOccurrences(
                of: "relay: { line: 10, pulse_ms: 100, max_on_ms: 400 }", with: "relay: { line: 10, pulse_ms: 400, max_on_ms: 400 }"),
            file: "hardware-test.yaml")
        let chip = SimulatedGPIOChip(timekeeper: time)
        let notices = notices
        let dispenser = try Dispenser(chip: chip, slots: config.slots, timekeeper: time, notify: { notices.record($0) })
        _ = dispenser.start("A1", completion: outcomes.record)
        time.advance(by: .milliseconds(400))
        #expect(!chip.isActive(.offset(10)))
        #expect(notices.all.contains(.relayReleased("A1", line: .offset(10), after: .milliseconds(400))))
        #expect(!notices.all.contains { if case .relayCutByMaximumOnTime = $0 { true } else { false } })
    }

    @Test func releaseAllDrivesEveryRelayInactive() throws {
        _ = dispenser.start("A1", completion: outcomes.record)
        #expect(chip.isActive(.offset(10)))
        dispenser.releaseAll()
        #expect(!chip.isActive(.offset(10)) && !chip.isActive(.offset(11)))
        // Released lines can be requested again, as after a restart.
        _ = try chip.requestOutputs(config.slots.compactMap(\.relay?.line), consumer: "again")
    }
}

@Suite struct SimulatedChipTests {
    @Test func aLineCanBeRequestedOnceAndTheErrorNamesTheConfigKey() throws {
        let config = try HardwareFixtures.config()
        let chip = SimulatedGPIOChip(timekeeper: ManualTimekeeper())
        _ = try chip.requestOutputs(config.slots.compactMap(\.relay?.line), consumer: "vendd")
        let relay = try #require(config.slots[0].relay)
        let error = #expect(throws: GPIOError.self) {
            try chip.requestOutputs([relay.line], consumer: "second")
        }
        #expect(
            error?.description
                == "slots[A1].relay.line (hardware-test.yaml:15:20): line 10 is busy, held by 'vendd'; stop that program or choose another line")
    }
}
