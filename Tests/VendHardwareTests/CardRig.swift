import MDB
import MDBSocketSimulator
import SimulatedMDB
import VendSettings
import VendTime
import VendingCore

@testable import VendDrivers

/// Card readers on a loopback bus, the master with their drivers, and the real machine core
/// between them, on manual time: the machine's effects go to the drivers' mailboxes, the
/// drivers' reports are applied to the machine, and a relay's outcome is `dispense`'s answer.
/// A restart (`restart()`) keeps the machine (as its journal would) and the readers, and makes
/// new drivers, told the machine's settlements first as the daemon tells them. An interface lost
/// (`transport`) is served as MDBBus serves it: every reader lost, then, `outage` later, a bus reset.
final class CardRig: @unchecked Sendable {
    // @unchecked: one test thread drives it.
    static let won = MDBRig.krw

    let clock = ManualTimekeeper()
    let readers: [SimulatedCashlessReader]
    let transport: LoopbackTransport
    let log = MDBEventLog()
    let settings: [MDBCashlessSettings]
    private(set) var machine: Machine
    private(set) var mailboxes: [CardReaderMailbox] = []
    private(set) var master: MDBMaster!
    private var drivers: [MDBCashlessReader] = []
    /// How long the interface stays away once lost; then it is opened again with a bus reset.
    var outage: Duration = .seconds(1)
    /// Set while the interface is away: when it is opened again.
    private(set) var reopensAt: ContinuousClock.Instant?
    /// The outcome each relay pulse reports, by slot; `.dropped` unless set.
    var dispense: (SlotID) -> VendOutcome = { _ in .dropped }
    /// Relay pulses, in order.
    private(set) var pulses: [SlotID] = []
    private var outcomes: [(VendID, VendOutcome)] = []
    private var eventsSeen = 0
    private(set) var rejections: [Rejection] = []
    /// How each age check ended, in order.
    private(set) var endings: [AgeCheckEnd] = []

    /// mdb.currency_code, if the rig's file had one.
    let currencyNumeric: Int?

    init(
        readers: [SimulatedCashlessReader], selectionFirst: Bool = true, unknown: UnknownOutcomePolicy = .assumeDispensed,
        currencyNumeric: Int? = nil, priceLines: [PriceLine] = [], pricing: PricingSetup = .standard,
        ageChecked: Int? = nil
    ) {
        self.readers = readers
        self.currencyNumeric = currencyNumeric
        transport = LoopbackTransport(bus: SimulatedBus(readers))
        settings = readers.map {
            MDBCashlessSettings(
                reader: $0.address == .cashless1 ? .first : .second, selectionFirst: selectionFirst, sessionTimeout: .seconds(10),
                origin: MDBRig.origin)
        }
        let setup = try! MachineSetup(
            currency: Self.won,
            catalog: Catalog([
                Product(id: "milk", name: "Milk", category: CategoryPath(["milk"])),
                Product(id: "cola", name: "Cola", category: CategoryPath(["soda"])),
            ]),
            slots: [
                SlotSetup(id: "A1", product: "milk", price: MDBRig.won(1_200), capacity: 50, priceLines: priceLines),
                SlotSetup(id: "A2", product: "cola", price: MDBRig.won(1_500), capacity: 50, minimumAge: ageChecked),
            ],
            maximumCredit: MDBRig.won(10_000), vendTimeout: .seconds(30), unknownOutcomePolicy: unknown, failedVendPolicy: .keepCredit,
            payoutPolicy: .manual, pricing: pricing,
            // `ageChecked`: A2 sells to that age and up, checked by the first reader.
            ageVerification: ageChecked.map { _ in AgeVerificationSetup(timeout: .seconds(60)) })
        machine = Machine(setup: setup)
        for slot in setup.slots { apply(.restock(slot.id, count: nil, loadedAt: nil)) }
        makeDrivers()
    }

    /// New drivers and mailboxes, the machine's settlements posted first (as `attach` does).
    private func makeDrivers() {
        mailboxes = settings.map { CardReaderMailbox(reader: $0.reader) }
        for settlement in machine.cardSettlements {
            mailboxes.first { $0.reader == settlement.reader }?
                .post(.settle(settlement, item: machine.setup.itemNumber(of: settlement.slot) ?? 0xFFFF))
        }
        for mailbox in mailboxes { mailbox.accepting = machine.acceptsCards }
        drivers = zip(settings, mailboxes).map { setting, mailbox in
            MDBCashlessReader(
                settings: setting, currency: Self.won, currencyNumeric: currencyNumeric, mailbox: mailbox, emit: log.record, wantsAcceptance: { true }
            )
        }
        master = MDBMaster(transport: transport, drivers: drivers, timekeeper: clock, pollInterval: MDBRig.pollInterval, emit: log.record)
    }

    func start() throws {
        try master.busReset()
        try run(for: .seconds(1))
    }

    /// vendd stops (SIGKILL: nothing more is said to the readers) and starts again, with the
    /// interface in place.
    func restart() throws {
        transport.unplugged = false
        reopensAt = nil
        // A relay's outcome not yet journaled is lost with the process, and so is every report
        // its drivers made that the machine had not applied (an approval the interface ACKed).
        outcomes.removeAll()
        eventsSeen = log.events.count
        // What `resolveInterruptedVend` does at start.
        if let vend = machine.pendingVend { apply(.vendEnded(vend.id, .unknown)) }
        // What `Startup` does: no age check survives a restart.
        if machine.ageCheck != nil { apply(.ageCheckVoided) }
        machine = machineWithoutReadiness()
        makeDrivers()
        try start()
    }

    /// The machine as a restart restores it: readiness is not saved.
    private func machineWithoutReadiness() -> Machine {
        var restored = machine
        for reader in restored.cardReaders.keys { _ = restored.apply(.cardReaderReady(reader, nil), at: now) }
        return restored
    }

    var now: Instant { Instant(millisecondsSinceEpoch: clock.wallClockMilliseconds) }

    /// Serves the bus for `duration` of manual time in 10 ms steps, carrying reports both ways.
    func run(for duration: Duration) throws {
        let end = clock.now + duration
        while clock.now < end {
            // A pulse's outcome comes a step after the pulse (the drop window), so a restart
            // can fall between the two.
            let due = outcomes
            outcomes.removeAll()
            for (vend, outcome) in due { apply(.vendEnded(vend, outcome)) }
            try serveAsMDBBusDoes()
            deliverReports()
            clock.advance(by: .milliseconds(10))
            apply(.tick)
        }
    }

    /// One service of the master; a link failure loses every reader until the interface is opened
    /// again, `outage` later, with a bus reset. Meanwhile each reader is told it is still offline.
    private func serveAsMDBBusDoes() throws {
        if let reopensAt {
            guard clock.now >= reopensAt else {
                for driver in drivers { driver.stillOffline(clock.now) }
                return
            }
            self.reopensAt = nil
            transport.unplugged = false
            try master.busReset()
        }
        do {
            try master.service()
        } catch {
            master.interfaceLost()
            reopensAt = clock.now + outage
        }
    }

    func select(_ slot: SlotID) { apply(.slotSelected(slot)) }

    private func deliverReports() {
        let events = log.events
        while eventsSeen < events.count {
            if case .card(let input) = events[eventsSeen] { apply(input) }
            eventsSeen += 1
        }
    }

    func apply(_ input: Input) {
        let effects = machine.apply(input, at: now)
        if case .tick = input {} else { trace.append("\(clock.now) \(input) -> \(effects.filter { if case .event = $0 { false } else { true } })") }
        for effect in effects { perform(effect) }
    }
    private(set) var trace: [String] = []

    private func mailbox(_ reader: CardReader) -> CardReaderMailbox? { mailboxes.first { $0.reader == reader } }

    private func perform(_ effect: Effect) {
        let item = { (slot: SlotID) in self.machine.setup.itemNumber(of: slot) ?? 0xFFFF }
        switch effect {
        case .requestCardVend(let reader, let vend, let price, let slot): mailbox(reader)?.post(.requestVend(vend, price: price, item: item(slot)))
        case .cancelCardVend(let reader, let vend): mailbox(reader)?.post(.cancelVend(vend))
        case .settleCardVend(let settlement): mailbox(settlement.reader)?.post(.settle(settlement, item: item(settlement.slot)))
        case .endCardSession(let reader): mailbox(reader)?.post(.endSession)
        case .setCardAcceptance(let accepting): for mailbox in mailboxes { mailbox.accepting = accepting }
        case .reportCashSale(let price, let slot): for mailbox in mailboxes { mailbox.post(.cashSale(price: price, item: item(slot))) }
        // The first reader checks ages, as `age_verification: {verifier: reader}` names one.
        case .requestAgeCheck(let age): mailboxes.first?.post(.checkAge(age))
        case .cancelAgeCheck: mailboxes.first?.post(.cancelAgeCheck)
        case .energiseRelay(let slot, let vend):
            pulses.append(slot)
            outcomes.append((vend, dispense(slot)))
        case .event(.rejected(let reason)): rejections.append(reason)
        case .event(.ageCheckEnded(_, let reason)): endings.append(reason)
        case .payOut, .setCoinAcceptance, .setBillLimit, .event: break
        }
    }

    /// What the readers charged, net of refunds, in won (their scale is 10 won per unit).
    var readersNetCharged: Int64 {
        readers.reduce(0) { $0 + Int64($1.charged.reduce(0, +)) * 10 - Int64($1.refunded.reduce(0, +)) * 10 }
    }

    /// What the machine's books say cards paid: card sales plus refunds the readers could not make.
    var booksCardMoney: Int64 {
        machine.ledger.cardSales.values.reduce(0) { $0 + $1.amount.minorUnits }
            + machine.ledger.cardRefundsLost.values.reduce(0) { $0 + $1.amount.minorUnits }
    }

    /// What the books hold as possibly charged: vends that dispensed nothing, whose reader may
    /// have charged them (nobody can tell).
    var booksPossiblyCharged: Int64 { machine.ledger.cardPossiblyCharged.values.reduce(0) { $0 + $1.amount.minorUnits } }

    /// The rule card money keeps: books ≤ readers ≤ books + possibly charged.
    var readersWithinBooks: Bool {
        booksCardMoney <= readersNetCharged && readersNetCharged <= booksCardMoney + booksPossiblyCharged
    }
}

extension LoopbackTransport {
    /// VEND SUCCESS and VEND FAILURE: how a vend is settled with a card reader (§7.2).
    static func isVendSettlement(_ block: MDBBlock) -> Bool {
        block.command == 3 && (block.data.first == 0x02 || block.data.first == 0x03)
    }
}
