import Testing
import VendingCore

/// The food-safety lock as machine state: milk (A1) is perishable in the chilled zone, cola (A2)
/// sits in the same zone but keeps, coffee (B1) is perishable in the hot zone.
@Suite struct HealthLockTests {
    static func zonedSetup() -> MachineSetup {
        Fixtures.setup(slots: [
            SlotSetup(id: "A1", product: "milk", price: Fixtures.won(1_200), capacity: 8, healthZone: "chilled"),
            SlotSetup(id: "A2", product: "cola", price: Fixtures.won(1_500), capacity: 10),
            SlotSetup(id: "B1", product: "coffee", price: Fixtures.won(900), capacity: 6, healthZone: "hot"),
        ])
    }

    static func trip(_ zone: ZoneID = "chilled") -> HealthTrip {
        HealthTrip(zone: zone, cause: .temperature(limit: .celsius(5)), since: Fixtures.start, worst: Temperature(millidegreesCelsius: 8_400))
    }

    @Test func aTripLocksOnlyThePerishableSlotsOfItsZone() {
        var rig = Rig(setup: Self.zonedSetup())
        let effects = rig.apply(.healthTripped(Self.trip()))
        #expect(effects.events == [.healthLocked(HealthLock(trip: Self.trip(), lockedAt: rig.now))])
        rig.insert(5_000)
        #expect(rig.select("A1").rejections == [.healthLocked("A1", zone: "chilled")])
        #expect(rig.machine.credit == Fixtures.won(5_000))
        #expect(rig.select("A2").rejections.isEmpty, "cola keeps selling")
        rig.apply(.vendEnded(rig.pendingVend!, .dropped))
        #expect(rig.select("B1").rejections.isEmpty, "the hot zone is not locked")
    }

    @Test func aMachineLockZoneStopsEverySlotAndOtherZonesOnlyTheirPerishableOnes() throws {
        let zoned = Self.zonedSetup()
        let setup = Fixtures.setup(slots: zoned.slots, machineLockZones: ["chilled"])
        var rig = Rig(setup: setup)
        rig.apply(.healthTripped(Self.trip("hot")))
        #expect(rig.machine.offers.map(\.available) == [8, 10, 0], "a hot lock stops only the coffee")
        rig.apply(.healthTripped(Self.trip()))
        #expect(rig.machine.offers.map(\.available) == [0, 0, 0])
        #expect(!rig.machine.acceptsCoins)
        #expect(rig.machine.healthLock(on: "A2") == "chilled", "the cola is refused for the chilled zone's lock")
        rig.apply(.setServiceMode(true))
        rig.apply(.healthServiced("chilled", technician: "kim"))
        rig.apply(.setServiceMode(false))
        #expect(rig.machine.offers.map(\.available) == [8, 10, 0])
        let restored = try JSON.roundTrip(MachineSnapshot(rig.machine)).machine
        #expect(restored.setup.machineLockZones == ["chilled"], "the setting survives a snapshot")
    }

    @Test func aSecondTripKeepsTheFirstLock() {
        var rig = Rig(setup: Self.zonedSetup())
        rig.apply(.healthTripped(Self.trip()))
        let first = rig.machine.healthLocks["chilled"]
        rig.advance(seconds: 600)
        let later = HealthTrip(zone: "chilled", cause: .sensorFault(.missing), since: rig.now, worst: nil)
        #expect(rig.apply(.healthTripped(later)).isEmpty)
        #expect(rig.machine.healthLocks["chilled"] == first)
    }

    @Test func onlyServiceClearsTheLockAndOnlyInServiceMode() {
        var rig = Rig(setup: Self.zonedSetup())
        rig.apply(.healthTripped(Self.trip()))
        #expect(rig.apply(.healthServiced("chilled", technician: "kim")).rejections == [.notInServiceMode])
        rig.apply(.setServiceMode(true))
        #expect(rig.apply(.healthServiced("hot", technician: "kim")).rejections == [.zoneNotLocked("hot")])
        let effects = rig.apply(.healthServiced("chilled", technician: "kim"))
        #expect(effects.events == [.healthLockCleared(HealthLock(trip: Self.trip(), lockedAt: Fixtures.start), technician: "kim")])
        rig.apply(.setServiceMode(false))
        rig.insert(5_000)
        #expect(rig.select("A1").rejections.isEmpty)
    }

    @Test func aMachineWhoseOnlySellableSlotsAreLockedTakesNoCoins() {
        let setup = Fixtures.setup(slots: [SlotSetup(id: "A1", product: "milk", price: Fixtures.won(1_200), capacity: 8, healthZone: "chilled")])
        var rig = Rig(setup: setup)
        #expect(rig.machine.acceptsCoins)
        let effects = rig.apply(.healthTripped(Self.trip()))
        #expect(!rig.machine.acceptsCoins)
        #expect(effects.contains(.setCoinAcceptance(false)))
    }

    @Test func aLockedSlotIsOfferedAsNotAvailable() {
        var rig = Rig(setup: Self.zonedSetup())
        rig.apply(.healthTripped(Self.trip()))
        rig.insert(5_000)
        #expect(rig.machine.offers.map(\.available) == [0, 10, 6])
        #expect(rig.machine.purchasable.map(\.slot) == ["A2", "B1"])
        #expect(rig.machine.stock["A1"]?.count == 8, "the items stay in the slot for the technician")
    }

    @Test func theLockSurvivesASnapshot() throws {
        var rig = Rig(setup: Self.zonedSetup())
        rig.apply(.healthTripped(Self.trip()))
        let restored = try JSON.roundTrip(MachineSnapshot(rig.machine)).machine
        #expect(restored == rig.machine)
        #expect(restored.healthLock(on: "A1") == "chilled")
    }

    @Test func stateWithoutLocksStillDecodes() throws {
        let machine = Rig(setup: Self.zonedSetup()).machine
        let text = try JSON.text(MachineSnapshot(machine))
        #expect(!text.contains("healthLocks"), "an unlocked machine writes what older vendd reads")
        #expect(try JSON.roundTrip(MachineSnapshot(machine)).machine.healthLocks.isEmpty)
    }
}

@Suite struct TemperatureTextTests {
    @Test func decimalCelsiusIsExact() {
        #expect(Temperature(decimalCelsius: "3.5") == Temperature(millidegreesCelsius: 3_500))
        #expect(Temperature(decimalCelsius: "-18") == .celsius(-18))
        #expect(Temperature(decimalCelsius: "4.125")?.decimalCelsiusExact == "4.125")
        #expect(Temperature(decimalCelsius: "-0.05")?.decimalCelsiusExact == "-0.05")
        for bad in ["", "-", "3.", ".5", "3.1234", "1e3", "abc", "2000", "+4"] { #expect(Temperature(decimalCelsius: bad) == nil, "\(bad)") }
    }

    @Test func displayRoundsToTenths() {
        #expect(Temperature(millidegreesCelsius: 4_250).description == "4.3 °C")
        #expect(Temperature(millidegreesCelsius: -1_250).description == "-1.3 °C")
        #expect(Temperature.celsius(5).fahrenheitDescription == "41.0 °F")
        #expect(Temperature.celsius(57).fahrenheitDescription == "134.6 °F")
    }
}
