import Synchronization
import Testing
import VendConfig
import VendHardware
import VendSettings
import VendTime
import VendingCore

@Suite struct InputPanelTests {
    let time = ManualTimekeeper()
    let events = PanelLog()

    @Test func aBouncingPressGivesOnePressAndSwitchesReportBothWays() throws {
        let config = try HardwareFixtures.config()
        let chip = SimulatedGPIOChip(timekeeper: time)
        let panel = try InputPanel(chip: chip, slots: config.slots, buttons: config.buttons, timekeeper: time)
        panel.start(events.record)
        // A bouncing press: 10 edges 100 µs apart, ending pressed; the 20 ms period starts at the last.
        for edge in 0..<10 {
            chip.drive(.offset(1), active: edge % 2 == 0 || edge == 9)
            time.advance(by: .microseconds(100))
        }
        time.advance(by: .milliseconds(19))
        #expect(events.all.isEmpty)
        time.advance(by: .milliseconds(1))
        #expect(events.all == [.panel(.slotButtonPressed("A1"))])
        chip.drive(.offset(1), active: false)
        chip.drive(.offset(4), active: true)
        time.advance(by: .milliseconds(60))
        chip.drive(.offset(4), active: false)
        time.advance(by: .milliseconds(60))
        panel.release()
        #expect(events.all == [.panel(.slotButtonPressed("A1")), .panel(.serviceKey(on: true)), .panel(.serviceKey(on: false))])
    }

    @Test func aReleaseWithinThePeriodIsABounceNotAPress() throws {
        let config = try HardwareFixtures.config()
        let chip = SimulatedGPIOChip(timekeeper: time)
        let panel = try InputPanel(chip: chip, slots: config.slots, buttons: config.buttons, timekeeper: time)
        panel.start(events.record)
        chip.drive(.offset(1), active: true)
        time.advance(by: .milliseconds(19))
        chip.drive(.offset(1), active: false)
        time.advance(by: .milliseconds(100))
        #expect(events.all.isEmpty)
    }

    @Test func aSwitchAlreadyOnIsAnnouncedAtStart() throws {
        let config = try HardwareFixtures.config()
        let chip = SimulatedGPIOChip(timekeeper: time)
        let panel = try InputPanel(chip: chip, slots: config.slots, buttons: config.buttons, timekeeper: time)
        chip.drive(.offset(4), active: true)  // before start: nobody is listening yet
        panel.start(events.record)
        #expect(events.all == [.panel(.serviceKey(on: true))])
    }

    @Test func aPressWhoseLastEdgeWasLostIsStillOnePress() throws {
        // libgpiod v1's kernel interface labels an edge with the level its interrupt thread reads,
        // and gpio-sim (an I2C expander alike) drops an edge that comes while that thread runs: a
        // bounce can end on an edge read "released" while the button is held. The HIL's
        // bouncing_press met it under CI's load: no vend, and nothing in vendd's log.
        let config = try HardwareFixtures.config()
        let chip = EdgeLosingChip()
        let panel = try InputPanel(chip: chip, slots: config.slots, buttons: config.buttons, timekeeper: time)
        panel.start(events.record)
        chip.edge(0, active: true, at: time.now)
        time.advance(by: .microseconds(500))
        chip.edge(0, active: false, at: time.now)
        chip.level(0, active: true)  // the contact closed again; its edge never came
        time.advance(by: .milliseconds(20))
        #expect(events.all.isEmpty, "judged again a period after the level was read")
        time.advance(by: .milliseconds(20))
        #expect(events.all == [.panel(.slotButtonPressed("A1"))])
        // Its release, lost the same way, is still a release: the next press counts.
        chip.edge(0, active: true, at: time.now)
        chip.level(0, active: false)
        time.advance(by: .milliseconds(40))
        chip.edge(0, active: true, at: time.now)
        chip.level(0, active: true)
        time.advance(by: .milliseconds(20))
        #expect(events.all == [.panel(.slotButtonPressed("A1")), .panel(.slotButtonPressed("A1"))])
        panel.release()
    }
}

/// Input lines whose edges the test delivers as it likes, apart from their levels: an edge stream
/// that can lose or mislabel an edge, as a kernel's can.
private final class EdgeLosingChip: GPIOChipBackend, GPIOInputGroup {
    private struct State {
        var levels: [Bool] = []
        var deliver: (@Sendable ([LineEvent]) -> Void)?
    }

    private let state = Mutex(State())
    let name = "edge-losing"
    let isDebouncedByBackend = false

    func requestInputs(_ lines: [InputLineConfig], consumer: String) throws(GPIOError) -> any GPIOInputGroup {
        state.withLock { $0.levels = Array(repeating: false, count: lines.count) }
        return self
    }

    func requestOutputs(_ lines: [OutputLineConfig], consumer: String) throws(GPIOError) -> any GPIOOutputGroup {
        throw .ioFailure("the edge-losing chip has inputs only", origin: nil)
    }

    func start(deliver: @escaping @Sendable ([LineEvent]) -> Void, lost: @escaping @Sendable () -> Void) {
        state.withLock { $0.deliver = deliver }
    }

    /// An edge as the reader hands it over: the level is what the edge says, not what the line is.
    func edge(_ index: Int, active: Bool, at instant: ContinuousClock.Instant) {
        let deliver = state.withLock { $0.deliver }
        deliver?([LineEvent(index: index, isActive: active, at: instant)])
    }

    /// The line's level, with no edge.
    func level(_ index: Int, active: Bool) { state.withLock { $0.levels[index] = active } }

    func currentValues() throws(GPIOError) -> [Bool] { state.withLock { $0.levels } }

    func release() { state.withLock { $0.deliver = nil } }
}
