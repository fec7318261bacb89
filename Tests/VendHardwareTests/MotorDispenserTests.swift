import Synchronization
import Testing
import VendConfig
import VendHardware
import VendSettings
import VendTime
import VendingCore

/// A spiral on its own line (S1, with a drop sensor) and two matrix motors (M1 at row 1 ×
/// column 1, M2 at row 2 × column 2) sharing one home line, their rows and columns on an
/// expander chip.
enum MotorFixtures {
    static let yaml = """
        machine:
          currency: { code: KRW, minor_digits: 0, format: "{amount}원" }
          maximum_credit: 10000
        gpio:
          chip: sim
          debounce_ms: 20
        products:
          - { id: chips, name: Chips, category: [snack] }
        motors:
          rows: [{ line: 0, chip: mcp }, { line: 1, chip: mcp }]
          columns: [{ line: 8, chip: mcp }, { line: 9, chip: mcp }]
          home: { line: 30, active_low: true }
          departure_ms: 1000
          turn_ms: 5000
          cam_debounce_ms: 20
        slots:
          - id: S1
            product: chips
            price: 1000
            capacity: 5
            button: { line: 1 }
            drive: spiral
            motor: { line: 10 }
            home: { line: 21 }
            drop_sensor: { line: 20, window_ms: 500 }
          - id: M1
            product: chips
            price: 1000
            capacity: 5
            button: { line: 2 }
            drive: matrix
            motor: { row: 1, column: 1 }
          - id: M2
            product: chips
            price: 1000
            capacity: 5
            button: { line: 3 }
            drive: matrix
            motor: { row: 2, column: 2 }
        """

    static func config() throws -> VenddConfig {
        try ConfigLoader.parse(yaml, file: "motor-test.yaml")
    }
}

@Suite struct MotorDispenserTests {
    let config: VenddConfig
    let time = ManualTimekeeper()
    let soc: SimulatedGPIOChip
    let expander: SimulatedGPIOChip
    let notices = NoticeLog()
    let outcomes = OutcomeLog()
    let dispenser: Dispenser
    /// Every output change on the expander, in order: "row1+", "column1+", …
    let wiring = WiringLog()

    init() throws {
        config = try MotorFixtures.config()
        let soc = SimulatedGPIOChip(name: "sim", timekeeper: time)
        let expander = SimulatedGPIOChip(name: "mcp", timekeeper: time)
        (self.soc, self.expander) = (soc, expander)
        // Every cam at home: active (the simulated chip takes logical levels, active_low applied).
        soc.drive(.offset(21), active: true)
        soc.drive(.offset(30), active: true)
        let wiring = wiring
        expander.observeOutputs { line, active in
            let name =
                switch line {
                case .offset(let offset) where offset < 8: "row\(offset + 1)"
                case .offset(let offset): "column\(offset - 7)"
                case .name(let name): name
                }
            wiring.record(name + (active ? "+" : "-"))
        }
        let chips = GPIOChipSet(defaultChip: "sim") { name throws(GPIOError) in
            switch name {
            case "sim": soc
            case "mcp": expander
            default: throw .chipNotFound(name, available: ["sim", "mcp"])
            }
        }
        let notices = notices
        dispenser = try Dispenser(
            chip: chips, slots: config.slots, matrix: config.motorMatrix, timekeeper: time, notify: { notices.record($0) })
    }

    func sharedCam(atHome: Bool) { soc.drive(.offset(30), active: atHome) }

    @Test func theMatrixEnergisesRowThenColumnAndReleasesColumnThenRow() {
        #expect(dispenser.start("M2", completion: outcomes.record) == nil)
        #expect(wiring.all == ["row2+", "column2+"])
        time.advance(by: .milliseconds(150))
        sharedCam(atHome: false)
        time.advance(by: .milliseconds(1_000))
        sharedCam(atHome: true)
        time.advance(by: .milliseconds(20))
        #expect(wiring.all == ["row2+", "column2+", "column2-", "row2-"])
        #expect(outcomes.all == [.pulsedWithoutSensor])
        #expect(notices.all.contains(.motorTurned("M2", after: .milliseconds(1_150))))
        #expect(time.pendingCount == 0)
    }

    @Test func oneMotorAtATime() {
        _ = dispenser.start("M1", completion: outcomes.record)
        #expect(dispenser.start("M2", completion: outcomes.record) == .notDropped)
        #expect(notices.all.contains(.interlockRefused("M2", busyWith: "M1")))
        #expect(wiring.all == ["row1+", "column1+"])
    }

    @Test func aMotorThatNeverLeavesHomeIsMissingAndStopped() {
        _ = dispenser.start("M1", completion: outcomes.record)
        time.advance(by: .milliseconds(999))
        #expect(outcomes.all.isEmpty)
        time.advance(by: .milliseconds(1))
        #expect(outcomes.all == [.motorMissing])
        #expect(wiring.all == ["row1+", "column1+", "column1-", "row1-"])
        #expect(notices.all.contains(.motorDidNotLeaveHome("M1", limit: .seconds(1))))
        #expect(time.pendingCount == 0)  // the guard went with the turn
    }

    @Test func aSpiralThatNeverComesBackIsJammedAndStopped() {
        _ = dispenser.start("S1", completion: outcomes.record)
        #expect(soc.isActive(.offset(10)))
        time.advance(by: .milliseconds(200))
        soc.drive(.offset(21), active: false)
        time.advance(by: .milliseconds(4_799))
        #expect(soc.isActive(.offset(10)))
        time.advance(by: .milliseconds(1))
        #expect(!soc.isActive(.offset(10)))
        #expect(outcomes.all == [.motorJammed])
        #expect(notices.all.contains(.motorDidNotReturnHome("S1", limit: .seconds(5))))
    }

    @Test func anItemSeenBeforeTheJamIsSoldAndTheJamStillReported() {
        _ = dispenser.start("S1", completion: outcomes.record)
        time.advance(by: .milliseconds(200))
        soc.drive(.offset(21), active: false)
        time.advance(by: .milliseconds(800))
        dispenser.dropSensed(on: .offset(20))
        time.advance(by: .seconds(4))
        #expect(outcomes.all == [.droppedMotorJammed])
    }

    @Test func theDropWindowOfASpiralCountsFromTheEndOfItsTurn() {
        _ = dispenser.start("S1", completion: outcomes.record)
        time.advance(by: .milliseconds(200))
        soc.drive(.offset(21), active: false)
        time.advance(by: .milliseconds(2_000))
        soc.drive(.offset(21), active: true)
        time.advance(by: .milliseconds(20))  // home held: the motor stops, the window opens
        #expect(!soc.isActive(.offset(10)))
        #expect(outcomes.all.isEmpty)
        time.advance(by: .milliseconds(300))
        dispenser.dropSensed(on: .offset(20))
        #expect(outcomes.all == [.dropped])
    }

    @Test func aTurnWithoutADropWithinTheWindowIsNotDropped() {
        _ = dispenser.start("S1", completion: outcomes.record)
        time.advance(by: .milliseconds(200))
        soc.drive(.offset(21), active: false)
        time.advance(by: .milliseconds(1_000))
        soc.drive(.offset(21), active: true)
        time.advance(by: .milliseconds(20 + 499))
        #expect(outcomes.all.isEmpty)
        time.advance(by: .milliseconds(1))
        #expect(outcomes.all == [.notDropped])
    }

    /// After a power cut a shared home line may show no motor away (none has power): the
    /// journal's vend in flight names the one to lock; a shared line away with none named locks all.
    @Test func theJournalNamesTheMotorAwayOnASharedHomeLine() {
        #expect(dispenser.motorsAwayFromHome() == [])
        #expect(dispenser.motorsAwayFromHome(turning: "M2") == ["M2"])
        #expect(dispenser.motorsAwayFromHome(turning: "S1") == [], "S1's own switch says it is home")
        sharedCam(atHome: false)
        #expect(dispenser.motorsAwayFromHome(turning: "M1") == ["M1"])
    }

    @Test func aMotorAwayFromHomeIsNeverTurned() {
        sharedCam(atHome: false)
        #expect(dispenser.motorsAwayFromHome() == ["M1", "M2"])
        #expect(dispenser.start("M1", completion: outcomes.record) == .motorJammed)
        #expect(wiring.all.isEmpty)
        #expect(notices.all == [.motorAwayFromHome("M1")])
    }

    @Test func releaseAllDropsEveryMatrixLineColumnsFirst() {
        _ = dispenser.start("M2", completion: outcomes.record)
        dispenser.releaseAll()
        #expect(wiring.all == ["row2+", "column2+", "column2-", "row2-"])
    }
}

/// The expander's output changes, in order.
final class WiringLog: Sendable {
    private let storage = Mutex<[String]>([])
    var all: [String] { storage.withLock { $0 } }
    func record(_ change: String) { storage.withLock { $0.append(change) } }
}
