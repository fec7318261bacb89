import Testing
import VendClimate
import VenddTestSupport
import VendingCore

/// A zone controller and a machine together, as the daemon wires them: seeded random cabinet
/// lives (door openings, a failing compressor, sensor faults) under random customers and an
/// occasional technician.
@Suite struct LockoutPropertyTests {
    static let won = Currency(code: "KRW", minorDigits: 0)

    static func setup() throws -> MachineSetup {
        try MachineSetup(
            currency: won,
            catalog: Catalog([
                Product(id: "milk", name: "Milk", category: CategoryPath(["milk"])),
                Product(id: "cola", name: "Cola", category: CategoryPath(["soda"])),
            ]),
            slots: [
                SlotSetup(id: "A1", product: "milk", price: Money(minorUnits: 1_000, currency: won), capacity: 50, healthZone: "chilled"),
                SlotSetup(id: "A2", product: "cola", price: Money(minorUnits: 1_000, currency: won), capacity: 50),
            ],
            maximumCredit: Money(minorUnits: 100_000, currency: won))
    }

    @Test(arguments: 0..<30)
    func noPerishableSlotSellsWhileLocked(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        var now = Zones.start
        var machine = Machine(setup: try Self.setup())
        var zone = ZoneController(settings: Zones.cold(health: HealthRule(limit: .celsius(5), tripTime: .seconds(300))), poweredOnAt: now)
        var temperature = 3_000
        var coin: UInt64 = 0
        var locksSeen = 0
        // A compressor that runs without cooling (lost refrigerant), now and then.
        var broken = false
        func apply(_ input: Input) -> [Effect] { machine.apply(input, at: now) }
        for slot: SlotID in ["A1", "A2"] { _ = apply(.restock(slot, count: nil, loadedAt: nil)) }
        for _ in 0..<4_000 {
            now = now + .seconds(Int64.random(in: 1...120, using: &random))
            // The cabinet drifts towards warm with the compressor off and cold with it on; now
            // and then it jumps (a door left open, a hot load).
            if Int.random(in: 0..<300, using: &random) == 0 { broken.toggle() }
            let cooling = zone.relayOn && !broken
            temperature += cooling ? -Int.random(in: 0...300, using: &random) : Int.random(in: 0...300, using: &random)
            temperature = min(temperature, 25_000)
            if Int.random(in: 0..<200, using: &random) == 0 { temperature += 6_000 }
            var zoneActions: [ZoneAction] = []
            switch Int.random(in: 0..<40, using: &random) {
            case 0: zoneActions = zone.record(.failure(.missing), at: now)
            case 1: zoneActions = zone.setDoor(open: Bool.random(using: &random), at: now)
            default: zoneActions = zone.record(.success(Temperature(millidegreesCelsius: temperature)), at: now)
            }
            for case .tripped(let trip) in zoneActions {
                _ = apply(.healthTripped(trip))
                #expect(machine.healthLocks[trip.zone] != nil, "seed \(seed): a trip did not lock")
            }
            let lockedBefore = machine.healthLocks["chilled"] != nil
            if lockedBefore { locksSeen += 1 }
            let effects: [Effect]
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<3:
                coin += 1
                effects = apply(.coinInserted(value: Money(minorUnits: 1_000, currency: Self.won), event: CoinEventID(source: "c", sequence: coin)))
            case 3..<6: effects = apply(.slotSelected(Bool.random(using: &random) ? "A1" : "A2"))
            case 6..<8: effects = machine.pendingVend.map { apply(.vendEnded($0.id, .dropped)) } ?? []
            case 8: effects = apply(.setServiceMode(!machine.isInServiceMode))
            default:
                effects = apply(.healthServiced("chilled", technician: "kim"))
                if !effects.events.isEmpty { _ = zone.serviced(at: now) }
            }
            for case .event(.vendStarted(_, let slot, _, _)) in effects {
                #expect(!(lockedBefore && slot == "A1"), "seed \(seed): perishable slot sold while locked")
            }
            if lockedBefore && machine.healthLocks["chilled"] == nil {
                #expect(
                    effects.events.contains { if case .healthLockCleared = $0 { true } else { false } }, "seed \(seed): unlocked without a service")
            }
            for slot: SlotID in ["A1", "A2"] where machine.available(in: slot) == 0 { _ = apply(.restock(slot, count: nil, loadedAt: nil)) }
        }
        #expect(locksSeen > 0, "seed \(seed): the trace never locked the zone, so it tested nothing")
    }
}
