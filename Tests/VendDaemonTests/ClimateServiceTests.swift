import Foundation
import Logging
import Synchronization
import Testing
import VendClimate
import VendConfig
import VendControl
import VendHardware
import VendSettings
import VendTime
import VenddTestSupport
import VendingCore

@testable import VendDaemon

/// The zones' shell on the sample machine with a chilled zone added, simulated cabinet, manual
/// time: its compressor relay is line 14 of a simulated chip the test holds.
struct ClimateRig {
    let rig: ControllerRig
    let chip: SimulatedGPIOChip
    let climate: ClimateService
    static let relay = LineReference.offset(14)

    /// Minimum on 60 s, off 120 s, start delay 180 s; no read falls due on its own within ten
    /// minutes, so the test reads at the instants it chooses.
    static let zones = """

        zones:
          - id: chilled
            kind: cold
            sensors: [{ w1: 28-000005e2fdc3 }]
            set_point: 3
            differential: 2
            min_on_s: 60
            min_off_s: 120
            start_delay_s: 180
            read_interval_s: 600
            relay: { line: 14 }
            health: { recovery_after_power_on_s: 0, recovery_after_door_s: 300 }

        """

    init(zones: String = Self.zones) throws {
        rig = try ControllerRig(edit: { $0 + zones })
        let chip = SimulatedGPIOChip(name: "gpiochip0", timekeeper: rig.time)
        self.chip = chip
        let chips = GPIOChipSet(defaultChip: "gpiochip0") { _ throws(GPIOError) in chip }
        climate = try #require(
            try ClimateService.start(
                rig.config, simulate: true, chips: chips, machine: rig.controller.inputs, timekeeper: rig.controller.timekeeper,
                logger: Logger(label: "test")))
        rig.controller.climate.withLock { $0 = climate }
        // The first read runs on the sensors' lane at once: let it finish before time moves.
        let deadline = ContinuousClock.now + .seconds(5)
        while zone.temperature == nil, ContinuousClock.now < deadline { usleep(1_000) }
    }

    var zone: StatusReport.Zone { climate.status(locks: [:])[0] }
    var relayIsOn: Bool { chip.isActive(Self.relay) }

    func setTemperature(_ degrees: Int) throws {
        try climate.setSimulatedTemperature(.celsius(degrees), zone: "chilled")
        climate.read(zone: 0)
    }

    /// Time jumps straight to `seconds` after the start (no timer falls due on the way), then the
    /// zone is read.
    func read(at seconds: Int, start: ContinuousClock.Instant) {
        rig.time.advance(by: start + .seconds(seconds) - rig.time.now)
        climate.read(zone: 0)
    }

    func tearDown() async {
        climate.stop()
        await rig.tearDown()
    }
}

@Suite(.serialized, .timeLimit(.minutes(5))) struct ClimateServiceTests {
    /// The relay line every 10 s for ten minutes: warm from the start, cold at 200 s, warm again
    /// at 250 s; `wallClockSteps` (seconds → milliseconds) step the wall clock on the way.
    static func relayTimeline(wallClockSteps: [Int: Int64]) async throws -> [Bool] {
        let zone = try ClimateRig()
        let start = zone.rig.time.now
        var timeline: [Bool] = []
        try zone.setTemperature(10)
        for seconds in stride(from: 0, through: 600, by: 10) {
            if let step = wallClockSteps[seconds] { zone.rig.time.stepWallClock(by: step) }
            zone.read(at: seconds, start: start)
            if seconds == 200 { try zone.setTemperature(0) }
            if seconds == 250 { try zone.setTemperature(10) }
            timeline.append(zone.relayIsOn)
            #expect(zone.zone.relayOn == zone.relayIsOn, "the line follows the controller at \(seconds) s")
        }
        await zone.tearDown()
        #expect(!zone.relayIsOn, "stopping the service switches the compressor off")
        return timeline
    }

    @Test func theCompressorWaitsForItsStartDelayThenKeepsItsMinimumTimes() async throws {
        let timeline = try await Self.relayTimeline(wallClockSteps: [:])
        let expected = stride(from: 0, through: 600, by: 10).map { (180..<240).contains($0) || $0 >= 360 }
        #expect(timeline == expected, "off for the 180 s start delay, on 60 s minimum, off 120 s minimum")
    }

    @Test func aWallClockStepChangesNoControlDecision() async throws {
        let reference = try await Self.relayTimeline(wallClockSteps: [:])
        // A day forward just after the compressor stopped (it would restart at once on wall-clock
        // time), then two days back (it would wait two days).
        let stepped = try await Self.relayTimeline(wallClockSteps: [0: -3_600_000, 250: 86_400_000, 300: -2 * 86_400_000])
        #expect(stepped == reference)
    }

    @Test func aHeaterDefrostSwitchesTheHeaterLineWithTheCompressorOff() async throws {
        let heaterZone = ClimateRig.zones.replacingOccurrences(
            of: "    relay: { line: 14 }\n",
            with:
                "    relay: { line: 14 }\n    defrost: { method: heater, interval_s: 600, termination: 30, max_duration_s: 60, drip_s: 30, heater: { line: 15 } }\n"
        )
        let zone = try ClimateRig(zones: heaterZone)
        let start = zone.rig.time.now
        try zone.setTemperature(30)
        var samples: [String] = []
        for seconds in stride(from: 0, through: 900, by: 10) {
            zone.read(at: seconds, start: start)
            samples.append("\(zone.relayIsOn ? "C" : "-")\(zone.chip.isActive(.offset(15)) ? "H" : "-")")
        }
        // The compressor from the 180 s start delay; after 600 s of its run, 60 s of heater with
        // the compressor off, 30 s of drip, then the compressor again once its 120 s rest is over.
        let expected = stride(from: 0, through: 900, by: 10).map { seconds -> String in
            switch seconds {
            case ..<180: "--"
            case ..<780: "C-"
            case ..<840: "-H"
            case ..<900: "--"
            default: "C-"
            }
        }
        #expect(samples == expected)
        await zone.tearDown()
        #expect(!zone.chip.isActive(.offset(15)))
    }

    @Test func anExcursionIsShownAsAWallClockDate() async throws {
        let zone = try ClimateRig()
        let start = zone.rig.time.now
        try zone.setTemperature(10)
        zone.read(at: 30, start: start)
        zone.rig.time.stepWallClock(by: -86_400_000)
        zone.read(at: 40, start: start)
        let since = try #require(zone.zone.excursionSince)
        #expect(since == zone.rig.time.wallClockMilliseconds - 40_000, "began 40 s before the (stepped) wall clock's now")
        await zone.tearDown()
    }

    @Test func theDoorSwitchReachesTheZoneAndItsCloseStartsARecoveryWindow() async throws {
        let zone = try ClimateRig()
        #expect(!zone.zone.recovering && !zone.zone.doorOpen)
        try zone.rig.world.set(.door, active: true)
        zone.rig.advance(by: .milliseconds(200))
        #expect(zone.zone.doorOpen && zone.zone.recovering, "an open door pauses the health timer")
        try zone.rig.world.set(.door, active: false)
        zone.rig.advance(by: .milliseconds(200))
        #expect(!zone.zone.doorOpen && zone.zone.recovering, "the close starts the 300 s recovery window")
        zone.rig.advance(by: .seconds(299))
        #expect(zone.zone.recovering)
        zone.rig.advance(by: .seconds(1))
        #expect(!zone.zone.recovering, "the window ends 300 s after the close")
        await zone.tearDown()
    }

    @Test func aBusyRelayLineStopsTheStartNamingTheFileLine() async throws {
        let rig = try ControllerRig(edit: { $0 + ClimateRig.zones })
        let chip = SimulatedGPIOChip(name: "gpiochip0", timekeeper: rig.time)
        let held = try chip.requestOutputs(
            [
                OutputLineConfig(
                    line: .offset(14), activeLow: false,
                    origin: ConfigOrigin(location: SourceLocation(file: "other", line: 1, column: 1), path: "other"))
            ], consumer: "other-program")
        defer { held.release() }
        let chips = GPIOChipSet(defaultChip: "gpiochip0") { _ throws(GPIOError) in chip }
        let error = #expect(throws: GPIOError.self) {
            try ClimateService.start(
                rig.config, simulate: true, chips: chips, machine: rig.controller.inputs, timekeeper: rig.controller.timekeeper,
                logger: Logger(label: "test"))
        }
        let text = "\(error.map { "\($0)" } ?? "")"
        #expect(text.hasPrefix("zones[chilled].relay.line (\(rig.directory.path)/vendd.yaml:"), "\(text)")
        #expect(text.contains("line 14 is busy, held by 'other-program'"), "\(text)")
        await rig.tearDown()
    }
}
