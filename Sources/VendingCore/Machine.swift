/// A vend whose price is held and whose item is reserved until its outcome is known.
public struct PendingVend: Hashable, Sendable, Codable {
    public let id: VendID
    public let slot: SlotID
    public let product: ProductID
    public let price: Money
    public let startedAt: Instant
    /// When the vend is given up as of unknown outcome (a card vend: its approval, then its drop).
    public internal(set) var deadline: Instant
    /// Paid by card: the reader's part. Nil: paid from cash credit.
    public internal(set) var card: CardVend?
    /// The price list `price` came from, decided with it at the selection.
    public let priceList: PriceListNumber

    init(
        id: VendID, slot: SlotID, product: ProductID, price: Money, startedAt: Instant, deadline: Instant, card: CardVend? = nil,
        priceList: PriceListNumber
    ) {
        self.id = id
        self.slot = slot
        self.product = product
        self.price = price
        self.startedAt = startedAt
        self.deadline = deadline
        self.card = card
        self.priceList = priceList
    }

    private enum CodingKeys: String, CodingKey { case id, slot, product, price, startedAt, deadline, card, priceList }

    /// A vend saved before price lists was at list 1.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(VendID.self, forKey: .id)
        slot = try container.decode(SlotID.self, forKey: .slot)
        product = try container.decode(ProductID.self, forKey: .product)
        price = try container.decode(Money.self, forKey: .price)
        startedAt = try container.decode(Instant.self, forKey: .startedAt)
        deadline = try container.decode(Instant.self, forKey: .deadline)
        card = try container.decodeIfPresent(CardVend.self, forKey: .card)
        priceList = try container.decodeIfPresent(PriceListNumber.self, forKey: .priceList) ?? .standardList
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(slot, forKey: .slot)
        try container.encode(product, forKey: .product)
        try container.encode(price, forKey: .price)
        try container.encode(startedAt, forKey: .startedAt)
        try container.encode(deadline, forKey: .deadline)
        try container.encodeIfPresent(card, forKey: .card)
        if priceList != .standardList { try container.encode(priceList, forKey: .priceList) }
    }

    /// What the vend holds of cash credit: its price, unless a card pays.
    public var heldCredit: Money { card == nil ? price : .zero(price.currency) }
    /// What the card may be charged while no approval is seen: the price, or with a discount or
    /// surcharge the reader applies a range around it.
    public var chargeBounds: ChargeBounds { card?.chargeBounds ?? ChargeBounds(least: price, most: price) }
    /// A card vend still waiting for its approval: the relay has not moved.
    public var awaitsApproval: Bool { card != nil && card?.approved == nil }
}

/// A price set at run time over the configured one. It remembers the configured price it
/// replaced: when a technician later edits that price in the file, the newer intent wins.
public struct PriceOverride: Hashable, Sendable, Codable {
    public let price: Money
    public let replacedConfiguredPrice: Money
}

/// A price line set at run time (`vendctl price --list N --payment P`). It remembers the file's
/// line it replaced (nil: the file had none): when a technician later edits that line in the
/// file, the newer intent wins, as for `PriceOverride`.
public struct PriceLineOverride: Hashable, Sendable, Codable {
    public let line: PriceLine
    public let replacedConfiguredPrice: Money?
}

/// The vending machine as a deterministic state machine: `apply(_:at:)` takes an input and the
/// instant it happened and returns the effects the shell must carry out. It does no I/O and reads
/// no clock, so replaying the same inputs from the same state gives the same machine.
public struct Machine: Hashable, Sendable, Codable {
    // Declared so that `==` (synthesized, in this order) meets what an input usually changes
    // first: the controller compares the machine before and after every input.
    public private(set) var credit: Money
    public private(set) var pendingVend: PendingVend?
    private var lastVendNumber: UInt64 = 0
    /// Durable from the input that decided it, before any device is told.
    public private(set) var pendingPayout: PendingPayout?
    private var lastPayoutNumber: UInt64 = 0
    public private(set) var isInServiceMode = false
    /// In service mode: coins put in are float for the change stock, not credit.
    public private(set) var isFilling = false
    /// The last credited sequence number per coin source.
    public private(set) var coinCursors: [String: UInt64] = [:]
    /// Each payout device's payout counter after the last payout it made (ccTalk hopper event
    /// counter): at start, a counter past it shows the device acted on the payout in flight.
    public private(set) var payoutCounters: [String: UInt64] = [:]
    /// What the payout devices last said they can pay.
    public private(set) var changeInventory: [ChangeStock] = []
    public private(set) var stock: [SlotID: SlotStock]
    public private(set) var priceOverrides: [SlotID: PriceOverride] = [:]
    /// Price lines set at run time on other lists or payments than list 1's every-payment price.
    public internal(set) var priceLineOverrides: [SlotID: [PriceLineOverride]] = [:]
    public private(set) var ledger: Ledger
    public private(set) var setup: MachineSetup
    /// The totals of the last audit a DEX handheld acknowledged (see `AuditTotals`).
    public internal(set) var lastAuditRead: AuditTotals?
    /// Reloading or stopping: nothing new starts (see `Input.setDraining`). Not saved.
    public private(set) var isDraining = false
    /// A card presented to a reader: the customer selects, paying by card.
    public private(set) var cardSession: CardSession?
    /// Card vends whose outcome the reader has not yet acknowledged, oldest first.
    public private(set) var cardSettlements: [CardSettlement] = []
    /// The readers ready for vends, as their drivers last said. Not saved: a restarted reader says again.
    public private(set) var cardReaders: [CardReader: CardReaderReadiness] = [:]
    /// Zones whose food-safety lock latched, until a technician services them. Saved: the lock
    /// outlives restarts and power cuts (Food Code 4-204.111).
    public private(set) var healthLocks: [ZoneID: HealthLock] = [:]

    /// Slots out of service after a motor fault, until a technician clears them. Journaled and
    /// saved: a jam survives a restart.
    public private(set) var slotFaults: [SlotID: SlotFault] = [:]

    /// Every incident the machine has had (health locks, refrigeration, sensors, motors): its
    /// count and latest occurrence, for the DEX audit's events. Journaled and saved: the audit
    /// reports them across restarts.
    public internal(set) var incidents: [Incident: IncidentRecord] = [:]

    /// Slots stopped because the item that would drop next is past its shelf life (and its
    /// product may not sell so), with when it expired: until a technician unloads it. Journaled
    /// and saved; noticed at every input (the periodic tick included), so each slot's expiry is
    /// announced once.
    public private(set) var expiredSlots: [SlotID: Instant] = [:]
    /// The DEX port's modes, counts and pass code (see `DEXState`). Journaled and saved.
    public internal(set) var dex = DEXState()
    /// A restricted selection's age check, awaited or approved and not yet used. Journaled and
    /// saved, so that replay is exact; a restart then ends it (`Input.ageCheckVoided`).
    public private(set) var ageCheck: AgeCheck?
    /// "Exact change only" as last judged (`needsExactChange(at:)`), after every input: a time
    /// band's prices can change it with no other input than the second's tick.
    public private(set) var exactChangeOnly = false

    private enum CodingKeys: String, CodingKey {
        case credit, pendingVend, lastVendNumber, pendingPayout, lastPayoutNumber, isInServiceMode, isFilling, coinCursors,
            payoutCounters, changeInventory, stock, priceOverrides, priceLineOverrides, ledger, setup, cardSession, cardSettlements, lastAuditRead,
            healthLocks, slotFaults, incidents, expiredSlots, dex, ageCheck, exactChangeOnly
    }

    /// A new, empty machine: no credit, no stock, nothing sold.
    public init(setup: MachineSetup) {
        self.setup = setup
        credit = .zero(setup.currency)
        stock = Dictionary(uniqueKeysWithValues: setup.slots.map { ($0.id, SlotStock()) })
        ledger = Ledger(currency: setup.currency)
        exactChangeOnly = needsExactChange(at: nil)
    }

    /// State written before payouts were two-phase decodes with no payout history.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        credit = try container.decode(Money.self, forKey: .credit)
        pendingVend = try container.decodeIfPresent(PendingVend.self, forKey: .pendingVend)
        lastVendNumber = try container.decode(UInt64.self, forKey: .lastVendNumber)
        pendingPayout = try container.decodeIfPresent(PendingPayout.self, forKey: .pendingPayout)
        lastPayoutNumber = try container.decodeIfPresent(UInt64.self, forKey: .lastPayoutNumber) ?? 0
        isInServiceMode = try container.decode(Bool.self, forKey: .isInServiceMode)
        isFilling = try container.decodeIfPresent(Bool.self, forKey: .isFilling) ?? false
        coinCursors = try container.decode([String: UInt64].self, forKey: .coinCursors)
        payoutCounters = try container.decodeIfPresent([String: UInt64].self, forKey: .payoutCounters) ?? [:]
        changeInventory = try container.decodeIfPresent([ChangeStock].self, forKey: .changeInventory) ?? []
        stock = try container.decode([SlotID: SlotStock].self, forKey: .stock)
        priceOverrides = try container.decode([SlotID: PriceOverride].self, forKey: .priceOverrides)
        priceLineOverrides = try container.decodeIfPresent([SlotID: [PriceLineOverride]].self, forKey: .priceLineOverrides) ?? [:]
        ledger = try container.decode(Ledger.self, forKey: .ledger)
        setup = try container.decode(MachineSetup.self, forKey: .setup)
        cardSession = try container.decodeIfPresent(CardSession.self, forKey: .cardSession)
        cardSettlements = try container.decodeIfPresent([CardSettlement].self, forKey: .cardSettlements) ?? []
        lastAuditRead = try container.decodeIfPresent(AuditTotals.self, forKey: .lastAuditRead)
        healthLocks = try container.decodeIfPresent([ZoneID: HealthLock].self, forKey: .healthLocks) ?? [:]
        slotFaults = try container.decodeIfPresent([SlotID: SlotFault].self, forKey: .slotFaults) ?? [:]
        incidents = try container.decodeIfPresent([Incident: IncidentRecord].self, forKey: .incidents) ?? [:]
        expiredSlots = try container.decodeIfPresent([SlotID: Instant].self, forKey: .expiredSlots) ?? [:]
        dex = try container.decodeIfPresent(DEXState.self, forKey: .dex) ?? DEXState()
        ageCheck = try container.decodeIfPresent(AgeCheck.self, forKey: .ageCheck)
        // State written before the judgement was kept: list 1's, as it was judged then.
        exactChangeOnly = try container.decodeIfPresent(Bool.self, forKey: .exactChangeOnly) ?? needsExactChange(at: nil)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(credit, forKey: .credit)
        try container.encodeIfPresent(pendingVend, forKey: .pendingVend)
        try container.encode(lastVendNumber, forKey: .lastVendNumber)
        try container.encodeIfPresent(pendingPayout, forKey: .pendingPayout)
        try container.encode(lastPayoutNumber, forKey: .lastPayoutNumber)
        try container.encode(isInServiceMode, forKey: .isInServiceMode)
        try container.encode(isFilling, forKey: .isFilling)
        try container.encode(coinCursors, forKey: .coinCursors)
        try container.encode(payoutCounters, forKey: .payoutCounters)
        try container.encode(changeInventory, forKey: .changeInventory)
        try container.encode(stock, forKey: .stock)
        try container.encode(priceOverrides, forKey: .priceOverrides)
        if !priceLineOverrides.isEmpty { try container.encode(priceLineOverrides, forKey: .priceLineOverrides) }
        try container.encode(ledger, forKey: .ledger)
        try container.encode(setup, forKey: .setup)
        try container.encodeIfPresent(cardSession, forKey: .cardSession)
        if !cardSettlements.isEmpty { try container.encode(cardSettlements, forKey: .cardSettlements) }
        try container.encodeIfPresent(lastAuditRead, forKey: .lastAuditRead)
        if !healthLocks.isEmpty { try container.encode(healthLocks, forKey: .healthLocks) }
        if !slotFaults.isEmpty { try container.encode(slotFaults, forKey: .slotFaults) }
        if !incidents.isEmpty { try container.encode(incidents, forKey: .incidents) }
        if !expiredSlots.isEmpty { try container.encode(expiredSlots, forKey: .expiredSlots) }
        if dex != DEXState() { try container.encode(dex, forKey: .dex) }
        try container.encodeIfPresent(ageCheck, forKey: .ageCheck)
        try container.encode(exactChangeOnly, forKey: .exactChangeOnly)
    }

    public mutating func apply(_ input: Input, at now: Instant) -> [Effect] {
        var effects = Effects()
        let acceptedCoinsBefore = acceptsCoins
        let acceptedCardsBefore = acceptsCards
        let billLimitBefore = billLimit
        // Expiries are noticed once per input, after it (the stock or the setup may have changed),
        // and before a selection too: it must meet the slot as it is now, not as the last second's
        // tick left it. Draining is never journaled, so it changes nothing else.
        var noticesExpiries = true
        if case .setDraining = input { noticesExpiries = false }
        if case .slotSelected = input { noticeExpiries(at: now, into: &effects) }
        switch input {
        case .coinInserted(let value, let event, let route): insertCoin(value, event: event, route: route ?? .cashBox, into: &effects)
        case .billStacked(let value, let event): insertCoin(value, event: event, route: nil, into: &effects)
        case .coinSourceSynchronised(let event): coinCursors[event.source] = max(coinCursors[event.source] ?? 0, event.sequence)
        case .payoutEnded(let payout, let paid, let unknown, let counters, let inventory):
            endPayout(payout, paid: paid, unknown: unknown, counters: counters, into: &effects)
            if let inventory { changeInventory = inventory }
        case .payoutDeviceAsked(let payout, let device, let holding):
            if pendingPayout?.id != payout {
                effects.reject(.stalePayoutReport(payout))
            } else {
                if pendingPayout?.askedDevices?.contains(device) == false { pendingPayout?.askedDevices?.append(device) }
                if let holding { pendingPayout?.holdings[device] = holding }
            }
        case .payoutCountersSynchronised(let counters): payoutCounters.merge(counters) { $1 }
        case .changeInventory(let coins): changeInventory = coins
        case .coinsDispensedManually(let amount): recordManualDispense(amount, into: &effects)
        case .setFillMode(let on): setFillMode(on, into: &effects)
        case .testPayout(let amount): startTestPayout(amount, at: now, into: &effects)
        case .collectCash(let technician): collectCash(by: technician, at: now, into: &effects)
        case .slotSelected(let slot): select(slot, at: now, into: &effects)
        case .vendEnded(let vend, let outcome): endVend(vend, outcome: outcome, at: now, into: &effects)
        case .coinReturnPressed:
            // With an age check in progress it ends only the check: the credit stays for a press more.
            if let check = ageCheck { endAgeCheck(check, .cancelled, into: &effects) } else { returnCredit(at: now, into: &effects) }
        case .ageVerified: approveAgeCheck(at: now, into: &effects)
        case .ageRefused(let refusal): refuseAgeCheck(refusal, into: &effects)
        case .ageCheckVoided: if let check = ageCheck { endAgeCheck(check, .restarted, into: &effects) }
        case .restock(let slot, let count, let loadedAt): restock(slot, count: count, loadedAt: loadedAt ?? now, into: &effects)
        case .unload(let slot, let count): unload(slot, count: count, at: now, into: &effects)
        case .setPrice(let slot, let price): setPrice(slot, price, into: &effects)
        case .setPriceLine(let slot, let list, let scope, let price): setPriceLine(slot, list: list, scope: scope, price: price, into: &effects)
        case .setServiceMode(let on): setServiceMode(on, into: &effects)
        case .reconfigure(let newSetup): reconfigure(newSetup, at: now, into: &effects)
        case .tick:
            timeOutVend(at: now, into: &effects)
            if let check = ageCheck, now >= check.deadline { endAgeCheck(check, .timedOut, into: &effects) }
        case .setDraining(let on): isDraining = on
        case .cardReaderReady(let reader, let readiness): setReadiness(of: reader, readiness, into: &effects)
        case .cardSessionBegan(let reader, let funds, let media, let terms):
            beginCardSession(CardSession(reader: reader, funds: funds, media: media, terms: terms ?? .standard), into: &effects)
        case .cardSessionEnded(let reader): endCardSession(of: reader, into: &effects)
        case .cardVendApproved(let vend, let amount): approveCardVend(vend, amount: amount, at: now, into: &effects)
        case .cardVendDenied(let vend): denyCardVend(vend, byReader: true, into: &effects)
        case .cardVendNotSent(let vend): denyCardVend(vend, byReader: false, into: &effects)
        case .cardVendUnresolved(let vend): leaveCardVendUnresolved(vend, into: &effects)
        case .cardSettlementAnswered(let vend, let result): recordSettlement(of: vend, result, into: &effects)
        case .cardVendSettled(let vend, let refundLost):
            let amount = cardSettlements.first { $0.vend == vend }?.amount ?? .zero(setup.currency)
            recordSettlement(of: vend, refundLost ? .refundLost(amount) : .asAsked, into: &effects)
        case .auditRead(let totals): recordAuditRead(totals, into: &effects)
        case .dexRead(let read): recordDEXRead(read, at: now, into: &effects)
        case .dexResetControl(let interval, let events): applyDEXResetControl(interval: interval, events: events)
        case .setDEXPassCode(let code, _): dex.passCode = code.flatMap { $0.allSatisfy { $0 == 0 } ? nil : $0 }
        case .healthTripped(let trip): lockZone(trip, at: now, into: &effects)
        case .healthServiced(let zone, let technician): serviceZone(zone, by: technician, at: now, into: &effects)
        case .slotFaultFound(let slot, let fault): lockSlot(slot, fault, at: now, into: &effects)
        case .clearSlotFault(let slot, let technician): clearFault(of: slot, by: technician, at: now, into: &effects)
        case .zoneConditionCleared(let zone, let condition): endIncident(condition.incident(zone), at: now)
        }
        // What the input did to the stock or the setup (an unload, a restock, a reload).
        if noticesExpiries { noticeExpiries(at: now, into: &effects) }
        if acceptsCoins != acceptedCoinsBefore {
            effects.command(.setCoinAcceptance(acceptsCoins))
            effects.emit(.coinAcceptanceChanged(acceptsCoins))
        }
        if billLimit != billLimitBefore { effects.command(.setBillLimit(billLimit)) }
        if acceptsCards != acceptedCardsBefore {
            effects.command(.setCardAcceptance(acceptsCards))
            effects.emit(.cardAcceptanceChanged(acceptsCards))
        }
        let exactChange = needsExactChange(at: now)
        if exactChange != exactChangeOnly {
            exactChangeOnly = exactChange
            effects.emit(.exactChangeOnlyChanged(exactChange))
        }
        return effects.list
    }

    // MARK: - Derived state

    /// Coins are welcome while a customer can buy something with more credit, or in fill mode;
    /// never while a payout is under way (its devices may share the bus, and neither credit nor
    /// the devices' stock may change under it).
    public var acceptsCoins: Bool {
        !isDraining && pendingPayout == nil && cardSession == nil && pendingVend?.card == nil
            && (isFilling
                || (!isInServiceMode && credit < setup.maximumCredit
                    && setup.slots.contains { sellable($0.id) }))
    }

    /// How many vends the machine has started, cash or card: the last was vend#N. Card vends
    /// denied or never approved are counted here and in no sales figure.
    public var vendsStarted: UInt64 { lastVendNumber }

    /// Readers take a card while nothing else is under way and a card could buy something: no cash
    /// credit (cash and cards never mix), no payout, not in service mode.
    public var acceptsCards: Bool {
        !isDraining && !isInServiceMode && pendingPayout == nil && credit.isZero && !cardReaders.isEmpty
            && setup.slots.contains { sellable($0.id) }
    }

    /// What a customer's payout in flight holds: neither credit nor paid until the devices report.
    /// A payout test holds no customer's money.
    public var heldByPayout: Money {
        pendingPayout.flatMap { $0.reason.isCustomers ? $0.amount : nil } ?? .zero(setup.currency)
    }

    /// The largest bill the machine stacks now: while it can sell, what keeps the credit within
    /// the maximum; nil while it takes none (fill mode is for coins). Emitted as `setBillLimit`
    /// whenever it changes, so that a bill validator decides its escrow without asking.
    public var billLimit: Money? {
        !isFilling && acceptsCoins ? setup.maximumCredit - credit : nil
    }

    /// The escrow decision: stack a bill of `value` only within the `billLimit`; otherwise the
    /// validator returns it.
    public func acceptsBill(_ value: Money) -> Bool { value.isStackable(within: billLimit) }

    /// The slot's list-1 price for every payment: the file's, or one set at run time.
    public func price(of slot: SlotID) -> Money? {
        priceOverrides[slot]?.price ?? setup.slot(slot)?.price
    }

    /// The price a customer paying so would pay at `slot` at `instant`, and where it came from
    /// (see `MachineSetup.decidePrice`).
    public func price(of slot: SlotID, payment: PricePayment, terms: CardPriceTerms = .standard, at instant: Instant) -> PriceDecision? {
        price(of: slot).flatMap {
            setup.decidePrice(of: slot, listOnePrice: $0, runTimeLines: runTimeLines(of: slot), payment: payment, terms: terms, at: instant)
        }
    }

    /// The slot's price on `list` for `payment`, run-time lines included (see
    /// `MachineSetup.price(of:on:payment:listOnePrice:runTimeLines:)`).
    public func price(of slot: SlotID, on list: PriceListNumber, payment: PricePayment) -> (price: Money, list: PriceListNumber)? {
        price(of: slot).flatMap { setup.price(of: slot, on: list, payment: payment, listOnePrice: $0, runTimeLines: runTimeLines(of: slot)) }
    }

    /// The lines set at run time for `slot` (`vendctl price --list`), besides list 1's price.
    public func runTimeLines(of slot: SlotID) -> [PriceLine] { priceLineOverrides[slot]?.map(\.line) ?? [] }

    /// Items in `slot` that a customer can buy (the one a vend in flight reserved excluded).
    public func available(in slot: SlotID) -> Int {
        let reserved = pendingVend?.slot == slot ? 1 : 0
        return (stock[slot]?.count ?? 0) - reserved
    }

    /// The zone whose health lock stops `slot`'s sales now, if any: a locked `lock: machine` zone
    /// stops every slot, any other locked zone its perishable slots.
    public func healthLock(on slot: SlotID) -> ZoneID? {
        // Asked for every slot whenever acceptance is decided: the slot is looked up (a scan of
        // the setup) only while some zone is locked.
        guard !healthLocks.isEmpty else { return nil }
        if !setup.machineLockZones.isEmpty, let zone = healthLocks.keys.filter(setup.machineLockZones.contains).min() { return zone }
        guard let zone = setup.slot(slot)?.healthZone, healthLocks[zone] != nil else { return nil }
        return zone
    }

    /// A customer could buy from `slot` with enough credit: stocked, not health-locked, not out
    /// of service after a motor fault, and not stopped by an expired item.
    public func sellable(_ slot: SlotID) -> Bool {
        available(in: slot) > 0 && healthLock(on: slot) == nil && slotFaults[slot] == nil && expiredSlots[slot] == nil
    }

    /// When the item that would drop next from `slot` (stock is first in, first out) expired, if
    /// it has at `now` and its product may not sell past its shelf life there.
    func expiryStopping(_ slot: SlotSetup, at now: Instant) -> Instant? {
        guard let product = setup.catalog[slot.product], !product.sellsExpired(in: slot),
            let next = stock[slot.id]?.lots.first, let expiry = next.expiry(shelfLifeDays: product.shelfLifeDays), expiry <= now
        else { return nil }
        return expiry
    }

    /// The last sequence number credited from a coin source; drivers continue after it.
    public func lastCoinSequence(from source: String) -> UInt64? { coinCursors[source] }

    // MARK: - Coins and credit

    /// A coin (`route` given) or a bill in the stacker (`route` nil): counted once per event,
    /// whatever else; credited, or float in fill mode.
    private mutating func insertCoin(_ value: Money, event: CoinEventID, route: CoinRoute?, into effects: inout Effects) {
        guard value.currency == setup.currency, value.minorUnits > 0 else {
            return effects.reject(.wrongCurrency(value))
        }
        if let last = coinCursors[event.source], event.sequence <= last {
            return effects.emit(.duplicateCoinIgnored(event))
        }
        coinCursors[event.source] = event.sequence
        ledger.recordInCashBox(value, route: route)
        if isFilling {
            ledger.recordFloat(value)
            return effects.emit(.floatAdded(value: value, event: event))
        }
        if let route {
            ledger.recordCoin(value, route: route)
            effects.emit(.coinCredited(value: value, event: event))
        } else {
            ledger.recordBill(value)
            effects.emit(.billCredited(value: value, event: event))
        }
        changeCredit(to: credit + value, into: &effects)
    }

    private mutating func returnCredit(at now: Instant, into effects: inout Effects) {
        // The coin-return button speaks to a card too (MDB §7.4): cancel an approval still
        // awaited, or end the session.
        if let vend = pendingVend, let card = vend.card {
            if vend.awaitsApproval { effects.command(.cancelCardVend(card.reader, vend.id)) }
            return
        }
        if let session = cardSession { return effects.command(.endCardSession(session.reader)) }
        guard !credit.isZero else { return effects.reject(.nothingToPayOut) }
        guard !isDraining else { return effects.reject(.draining) }
        guard setup.payoutAvailable else { return effects.reject(.payoutUnavailable(credit: credit)) }
        if let pendingPayout { return effects.reject(.payoutInProgress(pendingPayout.id)) }
        payOut(credit, for: .coinReturn, at: now, into: &effects)
    }

    /// Takes `amount` out of credit (a test payout takes none) and hands it to whoever pays: an
    /// attendant (recorded as paid at once) or the payout devices (held until they report).
    private mutating func payOut(_ amount: Money, for reason: PayoutReason, at now: Instant, into effects: inout Effects) {
        lastPayoutNumber += 1
        let id = PayoutID(rawValue: lastPayoutNumber)
        if reason.isCustomers { changeCredit(to: credit - amount, into: &effects) }
        if setup.payoutPolicy == .change {
            pendingPayout = PendingPayout(id: id, amount: amount, reason: reason, startedAt: now)
            effects.command(.payOut(id, amount))
            effects.emit(.payoutStarted(id, amount: amount, reason: reason))
        } else {
            ledger.recordPayout(amount, for: reason, byDevice: false)
            effects.command(.payOut(id, amount))
            effects.emit(.paidOut(amount))
        }
    }

    /// Records what the devices really paid; what they could not pay goes back to credit (the
    /// customer may buy with it or press coin return again), never paid again by itself.
    private mutating func endPayout(
        _ id: PayoutID, paid reportedPaid: Money, unknown reportedUnknown: Money,
        counters: [String: UInt64], into effects: inout Effects
    ) {
        guard let payout = pendingPayout, payout.id == id,
            reportedPaid.currency == setup.currency, reportedUnknown.currency == setup.currency
        else { return effects.reject(.stalePayoutReport(id)) }
        // A device never pays more than it was asked for; a report that says so is capped.
        let paid = max(.zero(setup.currency), min(reportedPaid, payout.amount))
        let unknown = max(.zero(setup.currency), min(reportedUnknown, payout.amount - paid))
        let rest = payout.amount - paid - unknown
        pendingPayout = nil
        payoutCounters.merge(counters) { $1 }
        ledger.recordPayout(paid, for: payout.reason, byDevice: true)
        ledger.recordUnknownPayout(unknown, for: payout.reason)
        guard payout.reason.isCustomers else {
            return effects.emit(.testPayoutEnded(id, paid: paid, unpaid: rest, unknown: unknown))
        }
        changeCredit(to: credit + rest, into: &effects)
        effects.emit(.payoutEnded(id, paid: paid, returnedToCredit: rest, unknown: unknown))
    }

    private mutating func changeCredit(to newCredit: Money, into effects: inout Effects) {
        guard newCredit != credit else { return }
        effects.emit(.creditChanged(from: credit, to: newCredit))
        credit = newCredit
    }

    // MARK: - Two-phase vend

    private mutating func select(_ slotID: SlotID, at now: Instant, into effects: inout Effects) {
        guard !isInServiceMode else { return effects.reject(.inServiceMode) }
        guard !isDraining else { return effects.reject(.draining) }
        if let pendingVend { return effects.reject(.vendInProgress(pendingVend.id)) }
        if let pendingPayout { return effects.reject(.payoutInProgress(pendingPayout.id)) }
        guard let slot = setup.slot(slotID), let cash = price(of: slotID, payment: .cash, at: now) else {
            return effects.reject(.unknownSlot(slotID))
        }
        if let fault = slotFaults[slotID] { return effects.reject(.slotOutOfService(slotID, fault)) }
        guard available(in: slotID) > 0 else { return effects.reject(.outOfStock(slotID)) }
        if let zone = healthLock(on: slotID) { return effects.reject(.healthLocked(slotID, zone: zone)) }
        if let since = expiredSlots[slotID] { return effects.reject(.expired(slotID, since: since)) }
        guard let age = slot.minimumAge else { return startVend(slot, cash: cash, at: now, into: &effects) }
        if ageCheck?.allows(minimumAge: age, at: now) != true {
            return startAgeCheck(slot, age: age, at: now, into: &effects)
        }
        let vendsBefore = lastVendNumber
        startVend(slot, cash: cash, at: now, into: &effects)
        // Used once: the next restricted selection is checked again. A selection the credit does
        // not cover yet keeps it, for the customer to pay and choose again within its time.
        if lastVendNumber != vendsBefore, let check = ageCheck { endAgeCheck(check, .used, into: &effects) }
    }

    /// Past every check of a selection: the vend starts, paid by cash credit or by a card.
    private mutating func startVend(_ slot: SlotSetup, cash: PriceDecision, at now: Instant, into effects: inout Effects) {
        let slotID = slot.id
        // Cash and cards never mix: an open session pays by card, cash credit (or none) by cash.
        guard cardSession == nil, cash.price <= credit else {
            if let (reader, decision) = cardPaying(for: slotID, cashPrice: cash.price, at: now, into: &effects) {
                return startCardVend(slot, decision, reader: reader, at: now, into: &effects)
            }
            return
        }
        let price = cash.price
        lastVendNumber += 1
        let vend = PendingVend(
            id: VendID(rawValue: lastVendNumber), slot: slotID, product: slot.product,
            price: price, startedAt: now, deadline: now + setup.vendTimeout, priceList: cash.list)
        pendingVend = vend
        // The relay first: it is what the customer waits for; the events report what happened.
        effects.command(.energiseRelay(slotID, vend.id))
        changeCredit(to: credit - price, into: &effects)
        effects.emit(.vendStarted(vend.id, slot: slotID, product: slot.product, price: price))
    }

    // MARK: - Age checks

    /// A restricted selection asks the verifier first; another check in progress (for another
    /// slot, or approved for a lower age) gives way to it.
    private mutating func startAgeCheck(_ slot: SlotSetup, age: Int, at now: Instant, into effects: inout Effects) {
        guard let verification = setup.ageVerification else { return effects.reject(.noAgeVerifier(slot.id, age: age)) }
        if let check = ageCheck {
            if check.slot == slot.id, !check.isApproved { return effects.reject(.ageCheckInProgress(slot.id, age: age)) }
            endAgeCheck(check, .cancelled, into: &effects)
        }
        let check = AgeCheck(slot: slot.id, age: age, startedAt: now, deadline: now + verification.timeout)
        ageCheck = check
        effects.emit(.ageCheckStarted(check))
        effects.command(.requestAgeCheck(age: age))
    }

    /// The verifier's signal approves the check in time, and the selection proceeds as if made
    /// now (the customer may still have to pay first; the approval then waits its own timeout).
    private mutating func approveAgeCheck(at now: Instant, into effects: inout Effects) {
        guard var check = ageCheck, !check.isApproved, now < check.deadline,
            let verification = setup.ageVerification
        else { return effects.reject(.noAgeCheck) }
        check.approvedAt = now
        check.deadline = now + verification.timeout
        ageCheck = check
        effects.emit(.ageCheckApproved(check))
        select(check.slot, at: now, into: &effects)
    }

    /// The verifier's "no": the check ends, and the customer may choose again (a new check).
    private mutating func refuseAgeCheck(_ refusal: AgeRefusal, into effects: inout Effects) {
        guard let check = ageCheck, !check.isApproved else { return effects.reject(.noAgeCheck) }
        endAgeCheck(check, refusal.end, into: &effects)
    }

    private mutating func endAgeCheck(_ check: AgeCheck, _ reason: AgeCheckEnd, into effects: inout Effects) {
        ageCheck = nil
        effects.emit(.ageCheckEnded(check, reason: reason))
        // A verifier still asking (a reader prompting its customer) is told the check is over.
        if !check.isApproved, ![.tooYoung, .noAge, .verifierLost].contains(reason) { effects.command(.cancelAgeCheck) }
    }

    private mutating func endVend(_ id: VendID, outcome: VendOutcome, at now: Instant, into effects: inout Effects) {
        guard let vend = pendingVend, vend.id == id else { return effects.reject(.staleVendOutcome(id)) }
        resolve(vend, outcome: outcome, at: now, into: &effects)
    }

    private mutating func timeOutVend(at now: Instant, into effects: inout Effects) {
        guard let vend = pendingVend, now >= vend.deadline else { return }
        resolve(vend, outcome: .unknown, at: now, into: &effects)
    }

    /// The money follows the outcome; a motor fault then takes the slot out of service.
    private mutating func resolve(_ vend: PendingVend, outcome: VendOutcome, at now: Instant, into effects: inout Effects) {
        pendingVend = nil
        if let card = vend.card {
            resolveCardVend(vend, card, outcome: outcome, at: now, into: &effects)
        } else {
            resolveCashVend(vend, outcome: outcome, at: now, into: &effects)
        }
        if let fault = outcome.motorFault { lockSlot(vend.slot, fault, at: now, into: &effects) }
    }

    private mutating func resolveCashVend(_ vend: PendingVend, outcome: VendOutcome, at now: Instant, into effects: inout Effects) {
        switch outcome {
        case .dropped, .droppedMotorJammed:
            completeSale(vend, confirmation: .dropSensor, at: now, into: &effects)
        case .pulsedWithoutSensor:
            completeSale(vend, confirmation: .relayOnly, at: now, into: &effects)
        case .notDropped, .motorJammed, .motorMissing:
            ledger.recordFailedVend()
            failVend(
                vend, outcome: outcome, payOut: setup.failedVendPolicy == .payOut && setup.payoutAvailable,
                at: now, into: &effects)
        case .unknown:
            ledger.recordUnknownOutcome()
            switch setup.unknownOutcomePolicy {
            case .assumeDispensed: completeSale(vend, confirmation: .assumed, at: now, into: &effects)
            case .refundCredit: failVend(vend, outcome: outcome, payOut: false, at: now, into: &effects)
            }
        }
    }

    private mutating func completeSale(
        _ vend: PendingVend, confirmation: SaleConfirmation, payment: Payment = .cash, at now: Instant, into effects: inout Effects
    ) {
        let before = stock[vend.slot]?.count ?? 0
        stock[vend.slot]?.removeOldest(1)
        let sale = Sale(
            vend: vend.id, slot: vend.slot, product: vend.product, price: vend.card?.approved ?? vend.price,
            at: now, confirmation: confirmation, payment: payment, priceList: vend.priceList)
        ledger.recordSale(sale, historyLimit: setup.historyLimit)
        effects.emit(.stockChanged(slot: vend.slot, product: vend.product, from: before, to: before - 1, reason: .sold))
        effects.emit(.vendCompleted(sale))
        if payment == .cash, !cardReaders.isEmpty { effects.command(.reportCashSale(price: sale.price, slot: sale.slot)) }
        // Draining: the change stays credit, for coin return once vendd is back.
        if setup.payoutPolicy == .change, !credit.isZero, pendingPayout == nil, !isDraining {
            payOut(credit, for: .change, at: now, into: &effects)
        }
    }

    private mutating func failVend(
        _ vend: PendingVend, outcome: VendOutcome, payOut paysOut: Bool, at now: Instant,
        into effects: inout Effects
    ) {
        let paysOut = paysOut && pendingPayout == nil && !isDraining
        changeCredit(to: credit + vend.price, into: &effects)
        effects.emit(
            .vendFailed(
                vend.id, slot: vend.slot, product: vend.product, outcome: outcome,
                creditRestored: paysOut ? .zero(setup.currency) : vend.price))
        if paysOut { payOut(vend.price, for: .failedVend, at: now, into: &effects) }
    }

    // MARK: - Card vends

    /// The reader that pays for a selection the cash credit does not cover, and the card's price,
    /// or nil with the rejection said: the open session's reader if its funds allow, else (no
    /// cash credit) a reader that takes a selection before the card ("always idle"). Funds do not
    /// limit a card whose reader applies a discount (MDB 4.2 A3•12: it may charge less).
    private func cardPaying(
        for slot: SlotID, cashPrice: Money, at now: Instant, into effects: inout Effects
    ) -> (CardReader, PriceDecision)? {
        if let session = cardSession {
            guard let decision = price(of: slot, payment: .cashless(session.reader), terms: session.terms, at: now) else { return nil }
            if let funds = session.funds, funds < decision.price, !session.terms.readerAdjusts {
                effects.reject(.insufficientFunds(slot, price: decision.price, funds: funds))
                return nil
            }
            return (session.reader, decision)
        }
        if acceptsCards, let reader = cardReaders.values.filter(\.selectionFirst).map(\.reader).min(),
            let decision = price(of: slot, payment: .cashless(reader), at: now)
        {
            return (reader, decision)
        }
        effects.reject(.insufficientCredit(slot, price: cashPrice, credit: credit))
        return nil
    }

    /// VEND REQUEST first: the item is reserved, the relay waits for the reader's approval. The
    /// price asked is the one decided now; an approval after a band began changes nothing in it.
    private mutating func startCardVend(
        _ slot: SlotSetup, _ decision: PriceDecision, reader: CardReader, at now: Instant, into effects: inout Effects
    ) {
        let price = decision.price
        lastVendNumber += 1
        let id = VendID(rawValue: lastVendNumber)
        pendingVend = PendingVend(
            id: id, slot: slot.id, product: slot.product, price: price, startedAt: now, deadline: now + .cardApprovalLimit,
            card: CardVend(
                reader: reader, media: cardSession?.media ?? .normal, approved: nil,
                chargeBounds: setup.pricing.chargeBounds(
                    price, terms: cardSession.flatMap { $0.reader == reader ? $0.terms : nil } ?? .standard,
                    readerUnit: cardReaders[reader]?.moneyUnit ?? 1)),
            priceList: decision.list)
        effects.command(.requestCardVend(reader, id, price: price, slot: slot.id))
        effects.emit(.cardVendRequested(id, reader: reader, slot: slot.id, product: slot.product, price: price))
    }

    /// Approved: journaled ("approved, not settled") before the relay moves.
    private mutating func approveCardVend(_ id: VendID, amount: Money?, at now: Instant, into effects: inout Effects) {
        guard var vend = pendingVend, vend.id == id, var card = vend.card, card.approved == nil else {
            return effects.reject(.staleVendOutcome(id))
        }
        let charged = amount.flatMap { $0.currency == setup.currency && !$0.isNegative ? $0 : nil } ?? vend.price
        card.approved = charged
        vend.card = card
        vend.deadline = now + setup.vendTimeout
        pendingVend = vend
        effects.command(.energiseRelay(vend.slot, vend.id))
        effects.emit(.cardVendApproved(id, reader: card.reader, amount: charged))
    }

    private mutating func denyCardVend(_ id: VendID, byReader: Bool, into effects: inout Effects) {
        guard let vend = pendingVend, vend.id == id, let card = vend.card, card.approved == nil else {
            return effects.reject(.staleVendOutcome(id))
        }
        pendingVend = nil
        effects.emit(.cardVendDenied(id, reader: card.reader, slot: vend.slot, byReader: byReader))
    }

    /// The outcome decides what the reader is told: SUCCESS when the item came out (or is
    /// assumed to have), else FAILURE and the reader refunds. A vend never approved (given up,
    /// or interrupted by a restart) is told FAILURE too: an approval may have been missed.
    private mutating func resolveCardVend(_ vend: PendingVend, _ card: CardVend, outcome: VendOutcome, at now: Instant, into effects: inout Effects) {
        guard let charged = card.approved else {
            effects.command(.cancelCardVend(card.reader, vend.id))
            effects.emit(.vendFailed(vend.id, slot: vend.slot, product: vend.product, outcome: outcome, creditRestored: nil))
            return settle(vend, card, success: false, amount: .zero(setup.currency), into: &effects)
        }
        let confirmation: SaleConfirmation?
        switch outcome {
        case .dropped, .droppedMotorJammed: confirmation = .dropSensor
        case .pulsedWithoutSensor: confirmation = .relayOnly
        case .notDropped, .motorJammed, .motorMissing:
            ledger.recordFailedVend()
            confirmation = nil
        case .unknown:
            ledger.recordUnknownOutcome()
            confirmation = setup.unknownOutcomePolicy == .assumeDispensed ? .assumed : nil
        }
        if let confirmation {
            let payment: Payment = card.media == .normal ? .card(card.reader) : .freeCard(card.reader)
            completeSale(vend, confirmation: confirmation, payment: payment, at: now, into: &effects)
        } else {
            effects.emit(.vendFailed(vend.id, slot: vend.slot, product: vend.product, outcome: outcome, creditRestored: nil))
        }
        settle(vend, card, success: confirmation != nil, amount: charged, into: &effects)
    }

    private mutating func settle(_ vend: PendingVend, _ card: CardVend, success: Bool, amount: Money, into effects: inout Effects) {
        let settlement = CardSettlement(
            vend: vend.id, reader: card.reader, slot: vend.slot, success: success, amount: amount, requested: vend.price,
            chargeBounds: vend.card?.chargeBounds)
        cardSettlements.append(settlement)
        effects.command(.settleCardVend(settlement))
    }

    /// A sale stays a sale whatever the reader made of SUCCESS (a reset, silence: it charged).
    /// A vend that dispensed nothing is booked as the reader left it: refunded, its refund lost,
    /// or possibly charged.
    private mutating func recordSettlement(of id: VendID, _ result: CardSettlementResult, into effects: inout Effects) {
        guard let index = cardSettlements.firstIndex(where: { $0.vend == id }) else { return effects.reject(.staleVendOutcome(id)) }
        let settlement = cardSettlements.remove(at: index)
        let booked: CardSettlementResult
        switch result {
        case .refundLost(let amount) where !settlement.success && !amount.isZero && amount.currency == setup.currency:
            // What the reader surely kept is lost; what it may have kept beyond, possibly charged.
            let bounds = settlement.bounds(of: amount)
            if !bounds.least.isZero { ledger.recordCardRefundLost(bounds.least, on: settlement.reader) }
            if bounds.most > bounds.least { ledger.recordCardPossiblyCharged(bounds.most - bounds.least, on: settlement.reader) }
            booked = result
        case .unknown(let amount) where !settlement.success && !amount.isZero && amount.currency == setup.currency:
            ledger.recordCardPossiblyCharged(settlement.bounds(of: amount).most, on: settlement.reader)
            booked = result
        default:
            booked = .asAsked
        }
        effects.emit(.cardVendSettled(settlement, booked))
    }

    /// The reader was reset or lost while the vend awaited its approval: nothing dispensed, and
    /// the most it may have charged (the price, or a surcharge added) is booked as possibly charged.
    private mutating func leaveCardVendUnresolved(_ id: VendID, into effects: inout Effects) {
        guard let vend = pendingVend, vend.id == id, let card = vend.card, card.approved == nil else {
            return effects.reject(.staleVendOutcome(id))
        }
        pendingVend = nil
        ledger.recordCardPossiblyCharged(vend.chargeBounds.most, on: card.reader)
        effects.emit(.cardVendUnresolved(id, reader: card.reader, slot: vend.slot, amount: vend.chargeBounds.most))
    }

    /// A card presented while cash credit or another session is open is refused: its session is
    /// ended at once (cash and cards never mix).
    private mutating func beginCardSession(_ session: CardSession, into effects: inout Effects) {
        let reader = session.reader
        if cardSession?.reader == reader { return }
        guard cardSession == nil, credit.isZero, !isInServiceMode, !isDraining, pendingPayout == nil,
            session.funds.map({ $0.currency == setup.currency }) ?? true
        else {
            effects.command(.endCardSession(reader))
            return effects.reject(.cardSessionRefused(reader))
        }
        cardSession = session
        effects.emit(.cardSessionBegan(session))
    }

    private mutating func endCardSession(of reader: CardReader, into effects: inout Effects) {
        guard cardSession?.reader == reader else { return }
        cardSession = nil
        effects.emit(.cardSessionEnded(reader))
    }

    /// A reader (re)initialised or lost has no session any more.
    private mutating func setReadiness(of reader: CardReader, _ readiness: CardReaderReadiness?, into effects: inout Effects) {
        cardReaders[reader] = readiness
        endCardSession(of: reader, into: &effects)
    }

    // MARK: - Slot faults

    private mutating func lockSlot(_ slot: SlotID, _ fault: SlotFault, at now: Instant, into effects: inout Effects) {
        guard setup.slot(slot) != nil else { return effects.reject(.unknownSlot(slot)) }
        // The first fault stands until cleared: a jammed motor later found away from home is jammed.
        guard slotFaults[slot] == nil else { return }
        slotFaults[slot] = fault
        beginIncident(.motorFault(slot), at: now, detail: fault.rawValue)
        effects.emit(.slotFaulted(slot, fault))
    }

    private mutating func clearFault(of slot: SlotID, by technician: String, at now: Instant, into effects: inout Effects) {
        guard setup.slot(slot) != nil else { return effects.reject(.unknownSlot(slot)) }
        // Someone at the machine frees the spiral first: a clear from afar would only jam it again.
        guard isInServiceMode else { return effects.reject(.notInServiceMode) }
        guard let fault = slotFaults.removeValue(forKey: slot) else { return effects.reject(.noSlotFault(slot)) }
        endIncident(.motorFault(slot), at: now)
        effects.emit(.slotFaultCleared(slot, fault, by: technician))
    }

    // MARK: - Technician operations

    private mutating func restock(_ slotID: SlotID, count: Int?, loadedAt: Instant, into effects: inout Effects) {
        guard let slot = setup.slot(slotID), let current = stock[slotID] else {
            return effects.reject(.unknownSlot(slotID))
        }
        let free = slot.capacity - current.count
        // A reload lowered the capacity below what the slot holds: the items stay and sell.
        if free < 0 { return effects.reject(.aboveCapacity(slotID, stock: current.count, capacity: slot.capacity)) }
        let adding = count ?? free
        guard count == nil || adding > 0 else { return effects.reject(.invalidCount(adding)) }
        guard adding <= free, adding > 0 else {
            return effects.reject(.overCapacity(slotID, capacity: slot.capacity, free: max(free, 0)))
        }
        stock[slotID]?.load(adding, at: loadedAt)
        effects.emit(
            .stockChanged(
                slot: slotID, product: slot.product, from: current.count,
                to: current.count + adding, reason: .restocked))
    }

    /// Takes items out, oldest first. Those past their shelf life are discarded: the books keep
    /// how many, valued at the slot's price.
    private mutating func unload(_ slotID: SlotID, count: Int?, at now: Instant, into effects: inout Effects) {
        guard let slot = setup.slot(slotID), let current = stock[slotID] else {
            return effects.reject(.unknownSlot(slotID))
        }
        let removable = available(in: slotID)
        let removing = count ?? removable
        guard removing > 0, removing <= removable else {
            return effects.reject(current.count > 0 ? .invalidCount(removing) : .nothingToUnload(slotID))
        }
        let expired = current.expiredCount(ofOldest: removing, at: now, shelfLifeDays: setup.catalog[slot.product]?.shelfLifeDays)
        stock[slotID]?.removeOldest(removing)
        effects.emit(
            .stockChanged(
                slot: slotID, product: slot.product, from: current.count,
                to: current.count - removing, reason: .unloaded))
        if expired > 0 {
            let value = (price(of: slotID) ?? slot.price) * expired
            ledger.recordDiscard(of: slot.product, count: expired, value: value)
            effects.emit(.expiredStockDiscarded(slot: slotID, product: slot.product, count: expired, value: value))
        }
    }

    // MARK: - Shelf life

    /// Stops a slot whose next item has expired (announced once), and lets one sell again whose
    /// next item no longer has (unloaded, or the file now lets it sell).
    private mutating func noticeExpiries(at now: Instant, into effects: inout Effects) {
        for slot in setup.slots {
            let since = expiryStopping(slot, at: now)
            if let since, expiredSlots[slot.id] == nil {
                expiredSlots[slot.id] = since
                let count = stock[slot.id]?.expiredCount(at: now, shelfLifeDays: setup.catalog[slot.product]?.shelfLifeDays) ?? 0
                effects.emit(.stockExpired(ExpiredStock(slot: slot.id, product: slot.product, count: count, since: since)))
            } else if since == nil, expiredSlots.removeValue(forKey: slot.id) != nil {
                effects.emit(.expiredStockCleared(slot: slot.id, product: slot.product))
            }
        }
        // A slot gone from the file has nothing left to unload.
        for slot in expiredSlots.keys where setup.slot(slot) == nil { expiredSlots[slot] = nil }
    }

    mutating func setPrice(_ slotID: SlotID, _ newPrice: Money?, into effects: inout Effects) {
        guard let slot = setup.slot(slotID), let oldPrice = price(of: slotID) else {
            return effects.reject(.unknownSlot(slotID))
        }
        if let newPrice {
            // The file's rule (check-config): a price above the maximum credit could never be paid.
            if let problem = setup.priceProblem(newPrice) {
                guard case .aboveMaximumCredit = problem else { return effects.reject(.invalidPrice(newPrice)) }
                return effects.reject(.priceRefused(slotID, newPrice, problem))
            }
            priceOverrides[slotID] =
                newPrice == slot.price
                ? nil : PriceOverride(price: newPrice, replacedConfiguredPrice: slot.price)
        } else {
            priceOverrides[slotID] = nil
        }
        let price = self.price(of: slotID) ?? slot.price
        if price != oldPrice { effects.emit(.priceChanged(slot: slotID, from: oldPrice, to: price)) }
    }

    private mutating func setServiceMode(_ on: Bool, into effects: inout Effects) {
        guard on != isInServiceMode else { return }
        isInServiceMode = on
        effects.emit(.serviceModeChanged(on))
        if !on { setFillMode(false, into: &effects) }
    }

    // MARK: - Change stock (service mode)

    private mutating func setFillMode(_ on: Bool, into effects: inout Effects) {
        guard on != isFilling else { return }
        if on {
            guard isInServiceMode else { return effects.reject(.notInServiceMode) }
            guard setup.payoutPolicy == .change else { return effects.reject(.noPayoutDevices) }
        }
        isFilling = on
        effects.emit(.fillModeChanged(on))
    }

    private mutating func startTestPayout(_ amount: Money, at now: Instant, into effects: inout Effects) {
        guard isInServiceMode else { return effects.reject(.notInServiceMode) }
        guard setup.payoutPolicy == .change else { return effects.reject(.noPayoutDevices) }
        guard !isDraining else { return effects.reject(.draining) }
        guard amount.currency == setup.currency, amount.minorUnits > 0, amount.minorUnits <= Money.largestAmount else {
            return effects.reject(.invalidAmount(amount))
        }
        if let pendingPayout { return effects.reject(.payoutInProgress(pendingPayout.id)) }
        if let pendingVend { return effects.reject(.vendInProgress(pendingVend.id)) }
        payOut(amount, for: .test, at: now, into: &effects)
    }

    /// The box's counts go into the collection's record and start again; nothing else changes
    /// (the tubes keep their coins, the books their whole-life totals).
    private mutating func collectCash(by technician: String, at now: Instant, into effects: inout Effects) {
        guard isInServiceMode else { return effects.reject(.notInServiceMode) }
        effects.emit(.cashCollected(ledger.collectCashBox(at: now, by: technician)))
    }

    private mutating func recordManualDispense(_ amount: Money, into effects: inout Effects) {
        guard amount.currency == setup.currency, amount.minorUnits > 0 else { return effects.reject(.invalidAmount(amount)) }
        ledger.recordManualDispense(amount)
        effects.emit(.coinsDispensedManually(amount))
    }

    // MARK: - Food safety

    /// The first trip latches; later ones for a locked zone change the lock in nothing (it keeps
    /// when and how it began) but still begin their refrigeration or sensor incident.
    private mutating func lockZone(_ trip: HealthTrip, at now: Instant, into effects: inout Effects) {
        switch trip.cause {
        case .temperature: beginIncident(.overLimit(trip.zone), at: trip.since, detail: trip.worst.map { "worst \($0)" } ?? "")
        case .sensorFault(let fault): beginIncident(.sensorFault(trip.zone), at: trip.since, detail: "\(fault)")
        }
        guard healthLocks[trip.zone] == nil else { return }
        beginIncident(.healthLock(trip.zone), at: now, detail: "\(trip.cause)")
        let lock = HealthLock(trip: trip, lockedAt: now)
        healthLocks[trip.zone] = lock
        effects.emit(.healthLocked(lock))
    }

    private mutating func serviceZone(_ zone: ZoneID, by technician: String, at now: Instant, into effects: inout Effects) {
        guard isInServiceMode else { return effects.reject(.notInServiceMode) }
        guard let lock = healthLocks.removeValue(forKey: zone) else { return effects.reject(.zoneNotLocked(zone)) }
        endIncident(.healthLock(zone), at: now)
        effects.emit(.healthLockCleared(lock, technician: technician))
    }

    // MARK: - Reconfiguration

    private mutating func reconfigure(_ newSetup: MachineSetup, at now: Instant, into effects: inout Effects) {
        if let pendingVend { return effects.reject(.vendInProgress(pendingVend.id)) }
        if !cardSettlements.isEmpty, newSetup.currency != setup.currency {
            return effects.reject(.currencyChange(from: setup.currency, to: newSetup.currency))
        }
        // A payout in flight is resolved by the devices of the same policy, in the same currency.
        if let pendingPayout, newSetup.currency != setup.currency || newSetup.payoutPolicy != .change {
            return effects.reject(.payoutInProgress(pendingPayout.id))
        }
        if newSetup.currency != setup.currency {
            guard ledger.isEmpty, credit.isZero else {
                return effects.reject(.currencyChange(from: setup.currency, to: newSetup.currency))
            }
            credit = .zero(newSetup.currency)
            ledger = Ledger(currency: newSetup.currency)
            priceOverrides = [:]
            priceLineOverrides = [:]
        }
        let oldSetup = setup
        setup = newSetup
        if let check = ageCheck, newSetup.ageVerification == nil || newSetup.slot(check.slot)?.minimumAge != check.age {
            endAgeCheck(check, .reloaded, into: &effects)
        }
        if newSetup.payoutPolicy != .change { setFillMode(false, into: &effects) }
        var removed: [SlotID] = []
        for old in oldSetup.slots {
            let new = newSetup.slot(old.id)
            if new == nil {
                removed.append(old.id)
                slotFaults[old.id] = nil
                // Gone with its slot: the fault's event ends (a DEX read then resets it).
                endIncident(.motorFault(old.id), at: now)
            }
            if new?.product != old.product, let count = stock[old.id]?.count {
                // The items in the slot are of the old product: they no longer count as stock.
                stock[old.id] = new == nil ? nil : SlotStock()
                if count > 0 {
                    effects.emit(
                        .stockChanged(
                            slot: old.id, product: old.product, from: count, to: 0,
                            reason: .slotReconfigured))
                }
            }
            if let override = priceOverrides[old.id] {
                let configuredPrice = new?.price
                if configuredPrice != override.replacedConfiguredPrice {
                    priceOverrides[old.id] = nil
                    if let configuredPrice {
                        effects.emit(.priceChanged(slot: old.id, from: override.price, to: configuredPrice))
                    }
                }
            }
        }
        dropOverriddenPriceLines(into: &effects)
        let added = newSetup.slots.map(\.id).filter { oldSetup.slot($0) == nil }
        for slot in added { stock[slot] = SlotStock() }
        for slot in newSetup.slots where oldSetup.slot(slot.id)?.capacity != slot.capacity {
            if let count = stock[slot.id]?.count, count > slot.capacity {
                effects.emit(.capacityBelowStock(slot: slot.id, stock: count, capacity: slot.capacity))
            }
        }
        effects.emit(.setupChanged(addedSlots: added, removedSlots: removed))
    }
}

/// Collects the effects of one input in the order they happen.
struct Effects {
    private(set) var list: [Effect] = []

    mutating func command(_ effect: Effect) { list.append(effect) }
    mutating func emit(_ event: MachineEvent) { list.append(.event(event)) }
    mutating func reject(_ reason: Rejection) { emit(.rejected(reason)) }
}
