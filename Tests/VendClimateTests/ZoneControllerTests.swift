import Testing
import VendClimate
import VendingCore

/// A cold zone at 3 °C ± 1 °C with the research notes' compressor protection (2.5 min), no defrost
/// unless asked, and windows short enough to read.
enum Zones {
    static let start = Instant(millisecondsSinceEpoch: 1_790_000_000_000)

    static func cold(defrost: DefrostSettings? = nil, health: HealthRule? = HealthRule(limit: .celsius(5))) -> ZoneSettings {
        ZoneSettings(
            id: "chilled", kind: .cold,
            thermostat: ThermostatSettings(setPoint: .celsius(3), differential: .celsius(2)),
            defrost: defrost, health: health)
    }

    static func hot() -> ZoneSettings {
        ZoneSettings(
            id: "coffee", kind: .hot,
            thermostat: ThermostatSettings(setPoint: .celsius(65), differential: .celsius(4), minimumOn: .zero, minimumOff: .zero, startDelay: .zero),
            health: HealthRule.defaults(for: .hot))
    }
}

/// A zone controller with a clock and a sensor read every 5 seconds, as the daemon reads it, so
/// tests read as minutes of a cabinet's life.
struct ZoneRig {
    var zone: ZoneController
    var now = Zones.start
    var actions: [ZoneAction] = []
    /// What the sensor says on every read; nil: it says nothing (the reading lane is stuck).
    var sensor: Result<Temperature, SensorFault>?

    init(_ settings: ZoneSettings) { zone = ZoneController(settings: settings, poweredOnAt: now) }

    mutating func wait(_ duration: Duration) {
        let end = now + duration
        while now < end {
            now = min(now + .seconds(5), end)
            if let sensor { actions += zone.record(sensor, at: now) } else { actions += zone.tick(at: now) }
        }
    }
    mutating func read(_ celsius: Double) {
        sensor = .success(Temperature(millidegreesCelsius: Int(celsius * 1_000)))
        actions += zone.record(sensor!, at: now)
    }
    mutating func fail(_ fault: SensorFault) {
        sensor = .failure(fault)
        actions += zone.record(.failure(fault), at: now)
    }
    mutating func door(open: Bool) { actions += zone.setDoor(open: open, at: now) }

    var trips: [HealthTrip] { actions.compactMap { if case .tripped(let trip) = $0 { trip } else { nil } } }
    var relaySwitches: [Bool] { actions.compactMap { if case .relay(let on) = $0 { on } else { nil } } }
}

@Suite struct ThermostatTests {
    @Test func compressorCutsInAboveTheBandAndOutBelowIt() {
        var rig = ZoneRig(Zones.cold())
        rig.wait(.seconds(150))  // the start delay
        rig.read(3.5)
        #expect(!rig.zone.relayOn, "inside the band, off stays off")
        rig.read(4.0)
        #expect(rig.zone.relayOn, "cut in at set point + Δ/2")
        rig.wait(.seconds(200))
        rig.read(2.5)
        #expect(rig.zone.relayOn, "inside the band, on stays on")
        rig.read(2.0)
        #expect(!rig.zone.relayOn, "cut out at set point − Δ/2")
    }

    @Test func startDelayAfterPowerOnHoldsTheCompressor() {
        var rig = ZoneRig(Zones.cold())
        rig.read(8)
        #expect(!rig.zone.relayOn)
        rig.wait(.seconds(149))
        #expect(!rig.zone.relayOn)
        rig.wait(.seconds(1))
        #expect(rig.zone.relayOn)
    }

    @Test func minimumOffAndOnTimesAreKept() {
        var rig = ZoneRig(Zones.cold())
        rig.wait(.seconds(150))
        rig.read(6)
        #expect(rig.zone.relayOn)
        rig.wait(.seconds(10))
        rig.read(0)
        #expect(rig.zone.relayOn, "minimum run time not reached")
        rig.wait(.seconds(140))
        #expect(!rig.zone.relayOn, "stops once it ran 2.5 minutes")
        rig.read(7)
        rig.wait(.seconds(149))
        #expect(!rig.zone.relayOn, "minimum rest not reached")
        rig.wait(.seconds(1))
        #expect(rig.zone.relayOn)
    }

    @Test func hotZoneHeatsBelowTheBand() {
        var rig = ZoneRig(Zones.hot())
        rig.read(62)
        #expect(rig.zone.relayOn)
        rig.read(66)
        #expect(rig.zone.relayOn)
        rig.read(67)
        #expect(!rig.zone.relayOn)
    }

    @Test func faultySensorStopsTheCompressor() {
        var rig = ZoneRig(Zones.cold())
        rig.wait(.seconds(150))
        rig.read(6)
        rig.wait(.seconds(150))
        rig.fail(.crcMismatch)
        #expect(!rig.zone.relayOn)
        #expect(rig.zone.fault == .crcMismatch)
    }
}

@Suite struct DefrostTests {
    static let offCycle = DefrostSettings(
        method: .offCycle, interval: .seconds(3_600), termination: .celsius(6), maximumDuration: .seconds(1_200), drip: .seconds(240))

    @Test func defrostStartsAfterTheIntervalOfRunTimeEndsAtTerminationAndDrips() {
        var rig = ZoneRig(Zones.cold(defrost: Self.offCycle))
        rig.wait(.seconds(150))
        rig.read(8)
        #expect(rig.zone.relayOn)
        rig.wait(.seconds(3_599))
        #expect(rig.zone.defrost == .idle, "an hour of run time not yet reached")
        rig.wait(.seconds(1))
        #expect(rig.zone.defrost == .defrosting(since: rig.now))
        #expect(!rig.zone.relayOn)
        rig.read(8)
        #expect(!rig.zone.relayOn, "no cooling during a defrost")
        #expect(rig.zone.defrost == .dripping(since: rig.now), "termination temperature reached")
        rig.wait(.seconds(239))
        #expect(!rig.zone.relayOn)
        rig.wait(.seconds(1))
        #expect(rig.zone.defrost == .idle)
        #expect(rig.zone.runSinceDefrost == .zero)
        #expect(rig.zone.relayOn, "cooling again after the drip")
    }

    @Test func runTimeOnlyCountsWhileTheCompressorRuns() {
        var rig = ZoneRig(Zones.cold(defrost: Self.offCycle))
        rig.read(3)
        rig.wait(.seconds(7_200))
        #expect(rig.zone.runSinceDefrost == .zero)
        #expect(rig.zone.defrost == .idle)
    }

    @Test func heaterDefrostEndsAtItsMaximumDuration() {
        let heater = DefrostSettings(
            method: .heater, interval: .seconds(600), termination: .celsius(10), maximumDuration: .seconds(900), drip: .seconds(60))
        var rig = ZoneRig(Zones.cold(defrost: heater))
        rig.wait(.seconds(150))
        rig.read(8)
        rig.wait(.seconds(600))
        #expect(rig.zone.defrostHeaterOn)
        rig.read(4)
        rig.wait(.seconds(899))
        #expect(rig.zone.defrostHeaterOn)
        rig.wait(.seconds(1))
        #expect(!rig.zone.defrostHeaterOn)
        #expect(rig.actions.contains(.defrostHeater(false)))
        #expect(rig.zone.defrost == .dripping(since: rig.now))
    }
}

@Suite struct HealthRuleTests {
    /// Powered on cold, past the power-on window.
    static func settled(_ settings: ZoneSettings = Zones.cold()) -> ZoneRig {
        var rig = ZoneRig(settings)
        rig.read(3)
        rig.wait(.seconds(30 * 60))
        rig.read(3)
        return rig
    }

    @Test func overTheLimitForTheTripTimeTrips() {
        var rig = Self.settled()
        rig.read(6)
        let since = rig.now
        rig.wait(.seconds(14 * 60))
        rig.read(7.5)
        #expect(rig.trips.isEmpty)
        rig.wait(.seconds(60))
        #expect(
            rig.trips == [
                HealthTrip(zone: "chilled", cause: .temperature(limit: .celsius(5)), since: since, worst: Temperature(millidegreesCelsius: 7_500))
            ])
        rig.wait(.seconds(60 * 60))
        #expect(rig.trips.count == 1, "one report per excursion")
    }

    @Test func coolingBackInTimeDoesNotTrip() {
        var rig = Self.settled()
        rig.read(6)
        rig.wait(.seconds(14 * 60))
        rig.read(4.9)
        rig.wait(.seconds(5 * 60))
        rig.read(6)
        rig.wait(.seconds(14 * 60))
        #expect(rig.trips.isEmpty, "the timer restarted")
    }

    @Test func doorOpenAndItsRecoveryWindowHoldTheTimer() {
        var rig = Self.settled()
        rig.door(open: true)
        rig.read(9)
        rig.wait(.seconds(20 * 60))
        rig.read(9)
        rig.door(open: false)
        rig.wait(.seconds(29 * 60))
        rig.read(6)
        #expect(rig.trips.isEmpty, "within 30 minutes of the door closing")
        rig.wait(.seconds(60))
        #expect(rig.trips.count == 1, "the window ended with the cabinet still warm")
    }

    @Test func recoveryWindowEndingColdStartsNoTimer() {
        var rig = Self.settled()
        rig.door(open: true)
        rig.door(open: false)
        rig.read(9)
        rig.wait(.seconds(25 * 60))
        rig.read(4)
        rig.wait(.seconds(10 * 60))
        #expect(rig.trips.isEmpty)
    }

    @Test func powerOnGivesTheCabinetItsWindow() {
        var rig = ZoneRig(Zones.cold())
        rig.read(20)
        rig.wait(.seconds(29 * 60))
        rig.read(6)
        #expect(rig.trips.isEmpty)
        rig.wait(.seconds(60))
        #expect(rig.trips.count == 1)
    }

    @Test func defrostAndItsWindowHoldTheTimer() {
        let defrost = DefrostSettings(
            method: .offCycle, interval: .seconds(3_600), termination: .celsius(7), maximumDuration: .seconds(1_200), drip: .seconds(60))
        var rig = Self.settled(Zones.cold(defrost: defrost))
        rig.read(4.5)
        rig.wait(.seconds(3_600))
        #expect(rig.zone.defrost != .idle)
        rig.read(7)
        rig.wait(.seconds(60))
        #expect(rig.zone.defrost == .idle)
        rig.read(6)
        rig.wait(.seconds(29 * 60))
        #expect(rig.trips.isEmpty, "inside the 30 minutes after a defrost")
        rig.wait(.seconds(60))
        #expect(rig.trips.count == 1)
    }

    @Test func sensorFaultTripsAfterItsGrace() {
        var rig = Self.settled()
        let lastGood = rig.now
        rig.fail(.missing)
        rig.wait(.seconds(4 * 60))
        #expect(rig.trips.isEmpty)
        rig.wait(.seconds(60))
        #expect(rig.trips == [HealthTrip(zone: "chilled", cause: .sensorFault(.missing), since: lastGood, worst: nil)])
    }

    @Test func silenceCountsAsASensorFault() {
        var rig = Self.settled()
        rig.sensor = nil
        rig.wait(.seconds(5 * 60))
        #expect(rig.trips.map(\.cause) == [.sensorFault(.unreadable("no reading"))])
    }

    @Test func aGoodReadingWithinTheGraceEndsTheFault() {
        var rig = Self.settled()
        rig.fail(.powerOnValue)
        rig.wait(.seconds(4 * 60))
        rig.read(3)
        rig.wait(.seconds(4 * 60))
        #expect(rig.trips.isEmpty)
    }

    @Test func hotZoneTripsWhenItCools() {
        var rig = ZoneRig(Zones.hot())
        rig.read(65)
        rig.wait(.seconds(120 * 60))
        rig.read(50)
        rig.wait(.seconds(15 * 60))
        #expect(rig.trips.map(\.worst) == [.celsius(50)])
    }

    @Test func serviceGivesANewWindow() {
        var rig = Self.settled()
        rig.read(8)
        rig.wait(.seconds(15 * 60))
        #expect(rig.trips.count == 1)
        rig.actions += rig.zone.serviced(at: rig.now)
        rig.wait(.seconds(29 * 60))
        rig.read(8)
        #expect(rig.trips.count == 1)
        rig.wait(.seconds(60))
        #expect(rig.trips.count == 2, "still warm when the service window ended")
    }

    @Test func ambientZoneNeverTrips() {
        var rig = ZoneRig(ZoneSettings(id: "room", kind: .ambient, thermostat: nil, health: HealthRule.defaults(for: .ambient)))
        rig.read(40)
        rig.wait(.seconds(24 * 3_600))
        #expect(rig.trips.isEmpty)
        #expect(rig.actions.isEmpty)
    }
}
