import Testing
import VendConfig
import VendHardware
import VendingCore
import Synchronization

@Suite struct DispenserTests {
    let config: VenddConfig
    let chip = SimulatedGPIOChip()
    let notices = NoticeLog()
    let dispenser: Dispenser

    init() throws {
        config = try HardwareFixtures.config()
        let notices = notices
        dispenser = try Dispenser(chip: chip, slots: config.slots, notify: { notices.record($0) })
    }

    @Test func relaysStartInactiveAndPulseForTheConfiguredTime() async {
        #expect(!chip.isActive(.offset(10)))
        let outcome = await dispenser.dispense("A2")
        #expect(outcome == .pulsedWithoutSensor)
        #expect(!chip.isActive(.offset(11)))
        guard case .relayReleased(let slot, _, let after) = notices.all.last else {
            Issue.record("no release: \(notices.all)")
            return
        }
        #expect(slot == "A2")
        #expect(after >= .milliseconds(50))   // never shorter than configured; how much longer is the scheduler's business
    }

    @Test func aDropWithinTheWindowConfirmsTheVend() async {
        let chip = chip, dispenser = dispenser
        chip.observeOutputs { line, active in
            guard line == .offset(10), active else { return }
            Task { await dispenser.dropSensed(on: .offset(20)) }
        }
        #expect(await dispenser.dispense("A1") == .dropped)
        #expect(notices.all.contains { if case .dropSensed("A1", _) = $0 { true } else { false } })
    }

    @Test func noDropWithinTheWindowIsNotDropped() async {
        let start = ContinuousClock.now
        #expect(await dispenser.dispense("A1") == .notDropped)
        #expect(ContinuousClock.now - start >= .milliseconds(500))
        #expect(notices.all.contains(.noDropWithinWindow("A1", window: .milliseconds(500))))
    }

    @Test func aDropOutsideAnyWindowIsReportedAndIgnored() async {
        await dispenser.dropSensed(on: .offset(20))
        #expect(notices.all == [.dropOutsideWindow(.offset(20))])
    }

    @Test func neverTwoRelaysAtOnce() async {
        let dispenser = dispenser
        let energisedTogether = Mutex(false)
        let chip = chip
        chip.observeOutputs { _, _ in
            if chip.isActive(.offset(10)) && chip.isActive(.offset(11)) { energisedTogether.withLock { $0 = true } }
        }
        async let first = dispenser.dispense("A1")
        try? await Task.sleep(for: .milliseconds(20))
        async let second = dispenser.dispense("A2")
        let outcomes = await [first, second]
        #expect(!energisedTogether.withLock { $0 })
        #expect(outcomes[1] == .notDropped)
        #expect(notices.all.contains(.interlockRefused("A2", busyWith: "A1")))
    }

    @Test func releaseAllDrivesEveryRelayInactive() async throws {
        let relays = try chip.requestOutputs([], consumer: "probe")   // the chip is shared: nothing else to request
        relays.release()
        dispenser.releaseAll()
        #expect(!chip.isActive(.offset(10)) && !chip.isActive(.offset(11)))
        // Released lines can be requested again, as after a restart.
        _ = try chip.requestOutputs(config.slots.map(\.relay.line), consumer: "again")
    }
}

@Suite struct SimulatedChipTests {
    @Test func aLineCanBeRequestedOnceAndTheErrorNamesTheConfigKey() throws {
        let config = try HardwareFixtures.config()
        let chip = SimulatedGPIOChip()
        _ = try chip.requestOutputs(config.slots.map(\.relay.line), consumer: "vendd")
        let error = #expect(throws: GPIOError.self) {
            try chip.requestOutputs([config.slots[0].relay.line], consumer: "second")
        }
        #expect(error?.description == "slots[A1].relay.line (hardware-test.yaml:15:20): line 10 is busy, held by 'vendd'; stop that program or choose another line")
    }
}

@Suite struct InputPanelTests {
    @Test func aBouncingPressGivesOnePressAndSwitchesReportBothWays() async throws {
        let config = try HardwareFixtures.config()
        let chip = SimulatedGPIOChip()
        let panel = try InputPanel(chip: chip, slots: config.slots, buttons: config.buttons)
        let runner = Task { await panel.run() }
        try await Task.sleep(for: .milliseconds(10))
        // A bouncing press: 10 edges in quick succession (each stamped when it happened), ending pressed.
        for edge in 0..<10 { chip.drive(.offset(1), active: edge % 2 == 0 || edge == 9) }
        try await Task.sleep(for: .milliseconds(60))
        chip.drive(.offset(1), active: false)
        chip.drive(.offset(4), active: true)
        try await Task.sleep(for: .milliseconds(60))
        chip.drive(.offset(4), active: false)
        try await Task.sleep(for: .milliseconds(60))
        panel.release()
        var events: [PanelEvent] = []
        for await event in panel.events { events.append(event) }
        _ = await runner.value
        #expect(events == [.slotButtonPressed("A1"), .serviceKey(on: true), .serviceKey(on: false)])
    }
}
