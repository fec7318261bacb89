import MDB
import MDBSocketSimulator
import SimulatedMDB
import Synchronization
import VendSerial
import VendSettings
import VendTime
import VendingCore

@testable import VendDrivers
@testable import VendHardware

/// The MDB transport with the simulated bus behind it and no I/O: each block goes straight to
/// the simulated peripherals. `unplugged` makes every exchange fail as a pulled cable would;
/// `unplugAfterDelivering` pulls it between a matching block reaching the device and its answer.
final class LoopbackTransport: MDBTransport {
    let bus: SimulatedBus
    var unplugged = false
    /// Once a block it matches is delivered, the answer is lost and the link is down.
    var unplugAfterDelivering: ((MDBBlock) -> Bool)?
    private(set) var busResets = 0

    init(bus: SimulatedBus) { self.bus = bus }

    func start() throws(MDBLinkFailure) { try check() }

    func busReset() throws(MDBLinkFailure) {
        try check()
        busResets += 1
        bus.busReset()
    }

    func transact(_ block: MDBBlock) throws(MDBLinkFailure) -> MDBAnswer {
        try check()
        let answer = bus.transact(block)
        if let matches = unplugAfterDelivering, matches(block) {
            unplugAfterDelivering = nil
            unplugged = true
            try check()
        }
        return answer
    }

    /// DISPENSE and ALTERNATIVE PAYOUT: the commands that pay coins (§5.2).
    static func isMoneyCommand(_ block: MDBBlock) -> Bool {
        block.addressByte == 0x0D || (block.addressByte == 0x0F && block.data.first == 0x02)
    }

    private func check() throws(MDBLinkFailure) {
        if unplugged { throw .disconnected(.disconnected(port: "loopback", reason: "unplugged")) }
    }
}

final class MDBEventLog: Sendable {
    private let storage = Mutex<[MDBEvent]>([])
    func record(_ event: MDBEvent) { storage.withLock { $0.append(event) } }
    var events: [MDBEvent] { storage.withLock { $0 } }
    var coins: [AcceptedCoin] { events.compactMap { if case .coinDeposited(let coin) = $0 { coin } else { nil } } }
    var bills: [(Money, CoinEventID)] { events.compactMap { if case .billStacked(let value, let event) = $0 { (value, event) } else { nil } } }
    var notices: [String] { events.compactMap { if case .notice(let text, _) = $0 { text } else { nil } } }
    var faults: [String] { events.compactMap { if case .notice(let text, true) = $0 { text } else { nil } } }
    var inventories: [[Money: Int]] { events.compactMap { if case .changeInventory(let inventory) = $0 { inventory } else { nil } } }
}

/// The tubes a payout said it started from, each time, with how many money commands (DISPENSE,
/// ALTERNATIVE PAYOUT) had gone out by then.
final class HoldingLog: Sendable {
    private let storage = Mutex<[(holding: [ChangeStock], moneyCommandsBefore: Int)]>([])
    func record(_ holding: [ChangeStock], moneyCommandsBefore: Int) { storage.withLock { $0.append((holding, moneyCommandsBefore)) } }
    var all: [(holding: [ChangeStock], moneyCommandsBefore: Int)] { storage.withLock { $0 } }
}

final class TubeReadings: Sendable {
    private let storage = Mutex<[[ChangeStock]]>([])
    func record(_ levels: [ChangeStock]) { storage.withLock { $0.append(levels) } }
    var last: [ChangeStock]? { storage.withLock { $0.last } }
    var count: Int { storage.withLock { $0.count } }
}

final class PayoutResults: Sendable {
    private let storage = Mutex<[MDBPayoutResult]>([])
    func record(_ result: MDBPayoutResult) { storage.withLock { $0.append(result) } }
    var all: [MDBPayoutResult] { storage.withLock { $0 } }
}

/// A changer and a bill validator on a loopback bus, the master and both drivers, on manual time.
final class MDBRig: @unchecked Sendable {
    // @unchecked: one test thread drives it; the lock-protected logs are what closures share.
    static let krw = Currency(code: "KRW", minorDigits: 0)
    static let origin = ConfigOrigin(location: SourceLocation(file: "mdb-test.yaml", line: 1, column: 1), path: "mdb")
    static func won(_ amount: Int64) -> Money { Money(minorUnits: amount, currency: krw) }
    /// The machine's money format, as the drivers' notices show amounts.
    static let format = MoneyFormat(template: "{amount}원")!
    static let coins = [10, 50, 100, 500].enumerated().map {
        MDBDenomination(type: $0.offset, value: won(Int64($0.element)), enabled: true, origin: origin)
    }
    static let bills = [1000, 5000, 10000, 50000].enumerated().map {
        MDBDenomination(type: $0.offset, value: won(Int64($0.element)), enabled: true, origin: origin)
    }
    static let pollInterval: Duration = .milliseconds(100)

    let clock = ManualTimekeeper()
    let changer = SimulatedChanger()
    let validator = SimulatedBillValidator()
    let bus: SimulatedBus
    let transport: LoopbackTransport
    let log = MDBEventLog()
    var accepting = true
    var stackAllowed: (Money) -> Bool = { _ in true }
    var payouts: [MDBPayoutRequest] = []
    private let resultLog = PayoutResults()
    var results: [MDBPayoutResult] { resultLog.all }
    let holdings = HoldingLog()
    /// Tube levels by value as the changer driver read them, each time.
    let tubeReadings = TubeReadings()
    var master: MDBMaster!
    /// The changer's driver, as MDBBus reaches it while the interface cannot be opened.
    private(set) var changerDriver: MDBCoinChanger!

    /// Set: the changer is told to stop paying (vendd stopping).
    var payoutStopped = false
    private let coinTable: [MDBDenomination]
    private let billTable: [MDBDenomination]
    private let escrow: Bool
    private let stallLimit: Duration

    init(
        changerLevel: UInt8 = 3, coins: [MDBDenomination] = MDBRig.coins, bills: [MDBDenomination] = MDBRig.bills, lastCoin: UInt64? = nil,
        escrow: Bool = true,
        payoutStallLimit: Duration = MDBChangerSettings.defaultPayoutStallLimit
    ) {
        changer.level = changerLevel
        bus = SimulatedBus([changer, validator])
        transport = LoopbackTransport(bus: bus)
        coinTable = coins
        billTable = bills
        self.escrow = escrow
        stallLimit = payoutStallLimit
        master = makeMaster(lastCoin: lastCoin)
    }

    /// The drivers and the master as vendd makes them at start (a restart makes new ones; the
    /// devices and their state stay).
    func makeMaster(lastCoin: UInt64?) -> MDBMaster {
        let log = log
        let changerDriver = MDBCoinChanger(
            settings: MDBChangerSettings(coins: coinTable, payoutStallLimit: stallLimit), currency: Self.krw, format: Self.format,
            currencyNumeric: 410,
            source: "mdb:test:changer", lastSequence: lastCoin, emit: log.record,
            wantsAcceptance: { [unowned self] in accepting },
            takePayout: { [unowned self] in payouts.isEmpty ? nil : payouts.removeFirst() },
            payoutStopped: { [unowned self] in payoutStopped },
            tubesRead: tubeReadings.record)
        let billDriver = MDBBillValidator(
            settings: MDBBillValidatorSettings(bills: billTable, escrow: escrow), currency: Self.krw, format: Self.format, currencyNumeric: 410,
            source: "mdb:test:bills", lastSequence: nil, emit: log.record,
            wantsAcceptance: { [unowned self] in accepting },
            shouldStack: { [unowned self] in stackAllowed($0) })
        self.changerDriver = changerDriver
        return MDBMaster(
            transport: transport, drivers: [changerDriver, billDriver], timekeeper: clock, pollInterval: Self.pollInterval, emit: log.record)
    }

    /// Bus reset and the handshake: both devices ready.
    func start() throws {
        try master.busReset()
        try run(for: .seconds(1))
    }

    /// Serves the bus for `duration` of manual time, in 10 ms steps.
    func run(for duration: Duration) throws {
        let end = clock.now + duration
        while clock.now < end {
            try master.service()
            clock.advance(by: .milliseconds(10))
        }
    }

    func pay(_ amount: Int64) {
        payouts.append(
            MDBPayoutRequest(
                amount: Self.won(amount),
                holding: { [unowned self] holding in
                    holdings.record(holding, moneyCommandsBefore: bus.count(0x0D) + bus.count(0x0F, sub: 0x02))
                }
            ) { [resultLog] in resultLog.record($0) })
    }

    /// Blocks sent to one device, as "0B" / "0F00" strings.
    func sent(to peripheral: MDBPeripheral) -> [String] {
        bus.transactions.filter { $0.peripheral == peripheral.rawValue }.map {
            Hex.encode([$0.addressByte] + ($0.command == 7 ? $0.data.prefix(1) : []))
        }
    }
}
