/// Every change of the machine's state, as observers see it.
public enum MachineEvent: Hashable, Sendable, Codable {
    case coinCredited(value: Money, event: CoinEventID)
    case billCredited(value: Money, event: CoinEventID)
    /// A coin event that was credited before (a replayed or re-reported event): ignored.
    case duplicateCoinIgnored(CoinEventID)
    case creditChanged(from: Money, to: Money)
    case vendStarted(VendID, slot: SlotID, product: ProductID, price: Money)
    case vendCompleted(Sale)
    /// The vend did not happen; `creditRestored` went back to credit (zero if paid out; nil for a
    /// card vend, whose reader is told instead).
    case vendFailed(VendID, slot: SlotID, product: ProductID, outcome: VendOutcome, creditRestored: Money?)
    case stockChanged(slot: SlotID, product: ProductID, from: Int, to: Int, reason: StockChangeReason)
    /// Paid by hand (payout policy `manual`).
    case paidOut(Money)
    /// The payout devices were told to pay `amount`; it is held until they report.
    case payoutStarted(PayoutID, amount: Money, reason: PayoutReason)
    /// What the devices paid; `returnedToCredit` could not be paid, `unknown` is for the technician.
    case payoutEnded(PayoutID, paid: Money, returnedToCredit: Money, unknown: Money)
    /// A payout test ended: `unpaid` stays in the devices, `unknown` is for the technician.
    case testPayoutEnded(PayoutID, paid: Money, unpaid: Money, unknown: Money)
    /// The payout devices can (false) or cannot (true) make change for the cheapest product.
    case exactChangeOnlyChanged(Bool)
    /// Fill mode turned on or off: while on, coins put in are float, not credit.
    case fillModeChanged(Bool)
    /// A coin (or bill) put in during fill mode: float for the change stock.
    case floatAdded(value: Money, event: CoinEventID)
    /// A payout device paid this out by its own buttons, outside any payout.
    case coinsDispensedManually(Money)
    /// A technician emptied the cash box: what the machine counted into it since the last one.
    case cashCollected(CashCollection)
    case priceChanged(slot: SlotID, from: Money, to: Money)
    /// A slot's price on one list for some payments (`scope`); nil: the slot has no such line
    /// (it sells at the next line that applies).
    case priceLineChanged(slot: SlotID, list: PriceListNumber, scope: PriceScope, from: Money?, to: Money?)
    case serviceModeChanged(Bool)
    case coinAcceptanceChanged(Bool)
    case setupChanged(addedSlots: [SlotID], removedSlots: [SlotID])
    case rejected(Rejection)
    case cardSessionBegan(CardSession)
    case cardSessionEnded(CardReader)
    /// A card vend waits for the reader's approval; nothing is dispensed before it.
    case cardVendRequested(VendID, reader: CardReader, slot: SlotID, product: ProductID, price: Money)
    case cardVendApproved(VendID, reader: CardReader, amount: Money)
    /// Nothing charged, nothing dispensed: VEND DENIED (`byReader`), or the request never sent.
    case cardVendDenied(VendID, reader: CardReader, slot: SlotID, byReader: Bool)
    /// The reader was reset or lost while the vend awaited its approval: the card may have been
    /// charged `amount`, nothing was dispensed (booked as possibly charged).
    case cardVendUnresolved(VendID, reader: CardReader, slot: SlotID, amount: Money)
    /// The reader was told the outcome; `result` is what it did with it.
    case cardVendSettled(CardSettlement, CardSettlementResult)
    case cardAcceptanceChanged(Bool)
    /// A zone's health lock latched: its perishable slots sell nothing until serviced.
    case healthLocked(HealthLock)
    /// A technician serviced a locked zone; `lock` is the lock that cleared.
    case healthLockCleared(HealthLock, technician: String)
    /// A motor fault took the slot out of service until a technician clears it.
    case slotFaulted(SlotID, SlotFault)
    /// A technician cleared the slot's fault (`by`: who, as the control socket knew them).
    case slotFaultCleared(SlotID, SlotFault, by: String)
    /// The item that would drop next from the slot is past its shelf life: the slot sells
    /// nothing until a technician unloads the expired items. Announced once per slot.
    case stockExpired(ExpiredStock)
    /// A reload lowered the slot's capacity below the items in it: they stay and sell; restock
    /// adds nothing until it holds fewer than `capacity`.
    case capacityBelowStock(slot: SlotID, stock: Int, capacity: Int)
    /// The slot sells again: its next item is within its shelf life (the expired ones were
    /// unloaded), or the file now lets its product sell past it.
    case expiredStockCleared(slot: SlotID, product: ProductID)
    /// A restricted selection waits for the age verifier until `check.deadline`: nothing is
    /// dispensed or charged before it approves.
    case ageCheckStarted(AgeCheck)
    /// The verifier confirmed the customer's age; the approval holds until `check.deadline`.
    case ageCheckApproved(AgeCheck)
    /// The check ended: used by its vend, or given up (`reason`); no money moved on it.
    case ageCheckEnded(AgeCheck, reason: AgeCheckEnd)
    /// An unload took out items past their shelf life: discarded, `value` at the slot's price.
    case expiredStockDiscarded(slot: SlotID, product: ProductID, count: Int, value: Money)
}

public enum StockChangeReason: String, Hashable, Sendable, Codable {
    case sold, restocked, unloaded
    /// The slot was removed from the configuration, or now holds another product.
    case slotReconfigured = "slot-reconfigured"
}

/// Why an input was refused. The machine's state is unchanged by a rejected input.
public enum Rejection: Hashable, Sendable, Codable, CustomStringConvertible {
    case unknownSlot(SlotID)
    case outOfStock(SlotID)
    case insufficientCredit(SlotID, price: Money, credit: Money)
    case vendInProgress(VendID)
    case inServiceMode
    case nothingToPayOut
    case payoutInProgress(PayoutID)
    /// A payout report for a payout that is not the one in flight.
    case stalePayoutReport(PayoutID)
    case payoutUnavailable(credit: Money)
    case overCapacity(SlotID, capacity: Int, free: Int)
    /// A restock of a slot that holds more than its (lowered) capacity.
    case aboveCapacity(SlotID, stock: Int, capacity: Int)
    case invalidCount(Int)
    case invalidPrice(Money)
    /// A price the file's rule refuses too (`PriceProblem`).
    case priceRefused(SlotID, Money, PriceProblem)
    /// A price line on a list the file does not name (`known`: the lists besides 1 it does).
    case unknownPriceList(PriceListNumber, known: [PriceListNumber])
    /// An outcome for a vend that is not the one in flight (late or repeated report).
    case staleVendOutcome(VendID)
    case wrongCurrency(Money)
    case currencyChange(from: Currency, to: Currency)
    /// Fill mode and payout tests are for the technician, in service mode.
    case notInServiceMode
    /// Fill mode and payout tests need payout devices (payout policy `change`).
    case noPayoutDevices
    case invalidAmount(Money)
    /// vendd is reloading or stopping.
    case draining
    /// The card's funds (as the reader said) do not cover the price.
    case insufficientFunds(SlotID, price: Money, funds: Money)
    /// A card was presented while cash credit or another card session was open: cash and
    /// cards never mix; the reader's session is ended.
    case cardSessionRefused(CardReader)
    /// A DEX read's totals that the books have not reached, or older than the last read's.
    case staleAuditRead
    /// The slot's perishable items are in a zone under a health lock.
    case healthLocked(SlotID, zone: ZoneID)
    /// A service for a zone that holds no health lock.
    case zoneNotLocked(ZoneID)
    /// The slot's motor is jammed or missing: the customer is asked to make another selection.
    case slotOutOfService(SlotID, SlotFault)
    /// A fault was to be cleared on a slot that has none.
    case noSlotFault(SlotID)
    /// The slot's next item is past its shelf life (since then): a technician must unload it.
    case expired(SlotID, since: Instant)
    /// An unload from a slot that holds no item that can be taken out.
    case nothingToUnload(SlotID)
    /// The slot is age-restricted and the machine has no age verifier configured.
    case noAgeVerifier(SlotID, age: Int)
    /// The verifier signalled with no age check waiting for it.
    case noAgeCheck
    /// The slot's age check is already waiting for the verifier.
    case ageCheckInProgress(SlotID, age: Int)

    public var description: String {
        switch self {
        case .unknownSlot(let slot): "no slot \(slot)"
        case .outOfStock(let slot): "slot \(slot) is empty"
        case .insufficientCredit(let slot, let price, let credit):
            "slot \(slot) costs \(price), credit is \(credit)"
        case .vendInProgress(let vend): "\(vend) is still in progress"
        case .inServiceMode: "the machine is in service mode"
        case .nothingToPayOut: "there is no credit to return"
        case .payoutInProgress(let payout): "\(payout) is still being paid"
        case .stalePayoutReport(let payout): "\(payout) is not in progress"
        case .payoutUnavailable(let credit): "this machine cannot pay out; the credit of \(credit) stays"
        case .overCapacity(let slot, let capacity, let free):
            "slot \(slot) holds \(capacity) items and has room for \(free) more"
        case .aboveCapacity(let slot, let stock, let capacity):
            "slot \(slot) holds \(stock) items, above its capacity of \(capacity): they stay and sell; restock adds nothing until it holds fewer than \(capacity)"
        case .invalidCount(let count): "\(count) is not a valid number of items"
        case .invalidPrice(let price): "\(price) is not a valid price"
        case .unknownPriceList(let list, let known):
            "there is no price list \(list): pricing.lists has "
                + (known.isEmpty ? "none besides list 1" : "list 1 and \(known.map(String.init).joined(separator: ", "))")
        case .priceRefused(let slot, let price, let problem):
            "slot \(slot): \(problem.describe(price, format: MoneyFormat.plain(price.currency)))"
        case .staleVendOutcome(let vend): "\(vend) is not in progress"
        case .wrongCurrency(let money): "\(money) is not in the machine's currency"
        case .currencyChange(let from, let to):
            "the books are kept in \(from); they must be settled before switching to \(to)"
        case .notInServiceMode: "only in service mode: turn the service key, or vendctl service on"
        case .noPayoutDevices: "this machine has no payout devices (machine.payout is not 'change')"
        case .invalidAmount(let amount): "\(amount) is not a valid amount"
        case .draining: "vendd is reloading or stopping: try again in a moment"
        case .insufficientFunds(let slot, let price, let funds): "slot \(slot) costs \(price), the card has \(funds)"
        case .cardSessionRefused(let reader):
            "a card on \(reader) was refused: spend or return the cash credit first (cash and cards never mix)"
        case .staleAuditRead: "the audit read does not follow the books and the last read"
        case .healthLocked(let slot, let zone):
            "slot \(slot) is locked: zone \(zone) failed its food-safety check; a technician must service it (vendctl zone service \(zone))"
        case .zoneNotLocked(let zone): "zone \(zone) holds no health lock"
        case .slotOutOfService(let slot, let fault): "slot \(slot) is out of service (\(fault.rawValue)): make another selection"
        case .noSlotFault(let slot): "slot \(slot) has no fault to clear"
        case .expired(let slot, _):
            "slot \(slot)'s items are past their shelf life: a technician must unload them (vendctl unload \(slot))"
        case .nothingToUnload(let slot): "slot \(slot) holds no item to unload"
        case .noAgeVerifier(let slot, let age):
            "slot \(slot) is sold only after an age check (\(age)+) and this machine has no age verifier: make another selection"
        case .noAgeCheck: "no age check is waiting for a verification"
        case .ageCheckInProgress(let slot, let age): "slot \(slot) waits for an age check (\(age)+): show your ID to the attendant"
        }
    }
}
