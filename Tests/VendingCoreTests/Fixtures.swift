import Foundation
import VendingCore

/// A small machine shared by the tests: won, three drinks (one hot), three slots.
enum Fixtures {
    static let won = Currency(code: "KRW", minorDigits: 0)
    static let euro = Currency(code: "EUR", minorDigits: 2)

    static func won(_ amount: Int64) -> Money { Money(minorUnits: amount, currency: won) }

    static let milk = Product(
        id: "milk", name: "Banana Milk", category: CategoryPath(["beverage", "milk"]),
        shelfLifeDays: 10)
    static let cola = Product(
        id: "cola", name: "Cola", category: CategoryPath(["beverage", "soda", "cola"]),
        shelfLifeDays: 180, tags: ["fizzy"])
    static let coffee = Product(
        id: "coffee", name: "Canned Coffee", category: CategoryPath(["beverage", "coffee", "canned"]),
        isHot: true, shelfLifeDays: 90)

    static func setup(
        unknownOutcomePolicy: UnknownOutcomePolicy = .refundCredit,
        failedVendPolicy: FailedVendPolicy = .keepCredit,
        payoutPolicy: PayoutPolicy = .manual,
        maximumCredit: Int64 = 10_000,
        historyLimit: Int = 10_000,
        slots: [SlotSetup]? = nil,
        machineLockZones: Set<ZoneID> = []
    ) -> MachineSetup {
        try! MachineSetup(
            currency: won,
            catalog: Catalog([milk, cola, coffee]),
            slots: slots ?? [
                SlotSetup(id: "A1", product: "milk", price: won(1_200), capacity: 8),
                SlotSetup(id: "A2", product: "cola", price: won(1_500), capacity: 10),
                SlotSetup(id: "B1", product: "coffee", price: won(900), capacity: 6),
            ],
            maximumCredit: won(maximumCredit),
            vendTimeout: .seconds(30),
            unknownOutcomePolicy: unknownOutcomePolicy,
            failedVendPolicy: failedVendPolicy,
            payoutPolicy: payoutPolicy,
            historyLimit: historyLimit,
            machineLockZones: machineLockZones)
    }

    static let start = Instant(millisecondsSinceEpoch: 1_790_000_000_000)
}

/// A machine plus a clock and a coin sequence, so tests read as what a customer does.
struct Rig {
    var machine: Machine
    var now = Fixtures.start
    var coinSequence: UInt64 = 0

    init(setup: MachineSetup = Fixtures.setup(), stocked: Bool = true) {
        machine = Machine(setup: setup)
        if stocked {
            for slot in setup.slots { apply(.restock(slot.id, count: nil, loadedAt: nil)) }
        }
    }

    @discardableResult
    mutating func apply(_ input: Input) -> [Effect] {
        machine.apply(input, at: now)
    }

    @discardableResult
    mutating func insert(_ amount: Int64) -> [Effect] {
        coinSequence += 1
        return apply(.coinInserted(value: Fixtures.won(amount), event: CoinEventID(source: "test", sequence: coinSequence)))
    }

    @discardableResult
    mutating func select(_ slot: SlotID) -> [Effect] { apply(.slotSelected(slot)) }

    /// A technician at the machine clears a slot's motor fault: service mode on, clear, off.
    @discardableResult
    mutating func technicianClears(_ slot: SlotID, by technician: String) -> [Effect] {
        apply(.setServiceMode(true))
        defer { apply(.setServiceMode(false)) }
        return apply(.clearSlotFault(slot, by: technician))
    }

    /// The vend the last selection started.
    var pendingVend: VendID? { machine.pendingVend?.id }

    mutating func advance(seconds: Int64) {
        now = Instant(millisecondsSinceEpoch: now.millisecondsSinceEpoch + seconds * 1000)
    }

    mutating func advance(days: Int) { now = now.adding(days: days) }
}

extension Array where Element == Effect {
    var rejections: [Rejection] {
        events.compactMap { if case .rejected(let reason) = $0 { reason } else { nil } }
    }
}

/// JSON, the way the daemon persists state.
enum JSON {
    static func text<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func roundTrip<T: Codable>(_ value: T) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(try text(value).utf8))
    }
}
