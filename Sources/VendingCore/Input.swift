/// What the machine can be told. Drivers and the control socket turn hardware and requests into
/// these; `Machine.apply(_:at:)` decides what they mean.
public enum Input: Hashable, Sendable, Codable {
    /// A coin was physically accepted. Always credited (the coin is in the machine), unless the
    /// same event was credited before; in fill mode it is float instead. `route` nil: the cash
    /// box (also every coin recorded before routes were kept).
    case coinInserted(value: Money, event: CoinEventID, route: CoinRoute? = nil)
    /// A coin source's event counter was read with no coin to credit: a device seen for the first
    /// time, or reset. Events up to `event` are not to be credited; later ones continue after it.
    case coinSourceSynchronised(CoinEventID)
    /// A bill was stacked (never merely escrowed): credited like a coin, once per event.
    case billStacked(value: Money, event: CoinEventID)
    /// The payout devices report how a payout went: `paid` left the machine; `unknown` may or
    /// may not have (a device that lost its counters in a power cut) and is left to the
    /// technician; the rest goes back to credit. `counters` holds each device's payout counter
    /// after it (by device identity), so a later interrupted payout can be told from this one.
    /// `inventory`: the coins the devices hold after it, in the same journal record (nil in
    /// records from before it was carried, and when there are no devices to ask).
    case payoutEnded(PayoutID, paid: Money, unknown: Money, counters: [String: UInt64], inventory: [ChangeStock]? = nil)
    /// The shell is about to tell this payout device (by identity) to pay part of the payout:
    /// durable before the device is told, so a restart knows which devices may have paid.
    /// `holding`: what the device held then, for one that keeps no payout counter (an MDB
    /// changer's tubes): at a restart, what left it since is what it paid. Sent again while the
    /// payout runs, it replaces the last one (coins that went in or out other than by paying).
    case payoutDeviceAsked(PayoutID, device: String, holding: [ChangeStock]? = nil)
    /// The payout devices' counters as read at start, when no payout was in flight.
    case payoutCountersSynchronised([String: UInt64])
    /// The coins the payout devices can pay now; decides "exact change only".
    case changeInventory([ChangeStock])
    /// Coins a payout device paid out by its own buttons (an MDB changer's manual dispense):
    /// they left the machine outside any payout.
    case coinsDispensedManually(Money)
    /// Fill mode (only in service mode): coins put in are float for the change stock, not credit.
    case setFillMode(Bool)
    /// The technician emptied the cash box (only in service mode): what the machine counted into
    /// it since the last collection becomes a `CashCollection`, journaled, and the box's counts
    /// start again from zero. The tubes and hoppers stay as they are. `by` names the technician.
    case collectCash(by: String)
    /// The technician's payout test (only in service mode): the devices pay `amount` from their
    /// stock, two-phase like any payout; it comes out of no credit.
    case testPayout(Money)
    /// A customer pressed a slot's selection button.
    case slotSelected(SlotID)
    /// The dispensing hardware reports how the vend went.
    case vendEnded(VendID, VendOutcome)
    /// The coin-return button (it also cancels an age check in progress, and nothing else then).
    case coinReturnPressed
    /// The age verifier (an attendant's button, an ID scanner) confirmed the customer's age for
    /// the check in progress: the selection then proceeds as if made now.
    case ageVerified
    /// The age verifier (a card reader's own check) answered the check in progress: no.
    case ageRefused(AgeRefusal)
    /// vendd restarted: an age check in progress, approved or not, ends (the customer may have gone).
    case ageCheckVoided
    /// Items loaded into a slot; nil count fills it to capacity, nil instant means now.
    case restock(SlotID, count: Int?, loadedAt: Instant?)
    /// Items taken out of a slot, oldest first (expired ones, say); nil count empties it.
    case unload(SlotID, count: Int?)
    /// A price for one slot that replaces the configured one; nil goes back to the configured price.
    case setPrice(SlotID, Money?)
    /// A price on one list for some payments that replaces the file's line; nil goes back to it.
    case setPriceLine(SlotID, list: PriceListNumber, scope: PriceScope, price: Money?)
    case setServiceMode(Bool)
    /// A new configuration takes effect; state that no longer fits it is dropped with an event.
    case reconfigure(MachineSetup)
    /// Time passed: lets a vend that never reported an outcome time out.
    case tick
    /// vendd is about to reload or stop: from this input on, in order after everything before it,
    /// no vend, coin or payout starts (what is in flight finishes). Never journaled: a restart is
    /// never draining.
    case setDraining(Bool)
    /// A reader is ready for vends (nil: not any more, it went offline or is being reset).
    case cardReaderReady(CardReader, CardReaderReadiness?)
    /// A card was presented (BEGIN SESSION); `funds` nil when the reader does not say; `terms`
    /// its price list, discount or surcharge (nil in journals from before they were read: standard).
    case cardSessionBegan(CardReader, funds: Money?, media: CardMedia, terms: CardPriceTerms? = nil)
    /// The reader ended its session (END SESSION, or a reset).
    case cardSessionEnded(CardReader)
    /// VEND APPROVED: the card is charged `amount` (nil: a token, charged the price).
    case cardVendApproved(VendID, amount: Money?)
    /// VEND DENIED (also the answer to a VEND CANCEL): nothing charged, nothing dispensed.
    case cardVendDenied(VendID)
    /// The reader was reset, or stopped answering, while the vend awaited its approval: it may
    /// have approved (and charged) before, and nothing can tell. Nothing was dispensed.
    case cardVendUnresolved(VendID)
    /// vendd did not send the VEND REQUEST: the reader could not take a vend then (not enabled,
    /// busy, a price its scale cannot express). Nothing charged, nothing dispensed.
    case cardVendNotSent(VendID)
    /// The reader answered the settlement of this vend, as its driver could tell.
    case cardSettlementAnswered(VendID, CardSettlementResult)
    /// As journaled before `cardSettlementAnswered`: `refundLost` was a refund lost of the
    /// settlement's amount. Read from older journals only.
    case cardVendSettled(VendID, refundLost: Bool)
    /// A DEX handheld acknowledged the whole audit holding these whole-life totals: they become
    /// the base of the interim ("since last reset") figures. Journaled like any state change.
    case auditRead(AuditTotals)
    /// A DEX read reached its handheld whole: counted, and, as the SD105/SD106 modes say, the
    /// interim base. Replaces `auditRead`, which journals written before it still replay.
    case dexRead(DEXRead)
    /// A handheld's configuration carried SD105 (interval data) and/or SD106 (events): AUTO or
    /// SAVE is kept as the mode, RESET resets now.
    case dexResetControl(interval: DEXResetCommand?, events: DEXResetCommand?)
    /// The DDCMP security and pass code: learnt from a handheld (`by` names it), changed by a
    /// configuration's SD1, or cleared (nil, or zeros) by a technician.
    case setDEXPassCode([UInt8]?, by: String)
    /// A zone's controller found it unfit to hold perishable food: the zone is locked (latched)
    /// until serviced. A zone already locked stays as it was locked.
    case healthTripped(HealthTrip)
    /// A technician (only in service mode) serviced a locked zone: its lock clears. `technician`
    /// is who, as the control socket knew them, for the record.
    case healthServiced(ZoneID, technician: String)
    /// The shell found a slot's motor faulty outside a vend (away from home at start): the slot
    /// is locked like after a jam, before any motor turns.
    case slotFaultFound(SlotID, SlotFault)
    /// A technician cleared the slot's fault; `by` names them in the journal.
    case clearSlotFault(SlotID, by: String)
    /// The condition behind a zone's trip is over (a reading within the limit again, a good
    /// reading): its incident ends. The lock, if any, stays until serviced.
    case zoneConditionCleared(ZoneID, ZoneCondition)
}

/// What the climate shell says has cleared in a zone (see `Incident.Kind`).
public enum ZoneCondition: String, Hashable, Sendable, Codable {
    case overLimit = "over-limit"
    case sensorFault = "sensor-fault"

    public func incident(_ zone: ZoneID) -> Incident {
        switch self {
        case .overLimit: .overLimit(zone)
        case .sensorFault: .sensorFault(zone)
        }
    }
}

/// Where an accepted coin went.
public enum CoinRoute: String, Hashable, Sendable, Codable {
    case cashBox = "cash-box"
    /// The payout devices' stock (an MDB changer's tubes): it may go out again as change.
    case tubes
}

public enum VendOutcome: String, Hashable, Sendable, Codable {
    /// The drop sensor saw the item fall.
    case dropped
    /// The vend window closed without the drop sensor seeing anything.
    case notDropped = "not-dropped"
    /// The relay pulsed on a slot without a drop sensor: nothing can confirm the drop.
    case pulsedWithoutSensor = "pulsed-without-sensor"
    /// Nobody knows (hardware fault, restart mid-vend).
    case unknown
    /// The spiral's home switch left home and never came back (or was away from home before the
    /// motor was powered): nothing was seen to drop, and the slot is locked for the technician.
    case motorJammed = "motor-jammed"
    /// The home switch never left home: the motor is missing, disconnected or stalled. Nothing
    /// dropped; the slot is locked.
    case motorMissing = "motor-missing"
    /// The drop sensor saw the item fall, then the spiral jammed before home: sold, and locked.
    case droppedMotorJammed = "dropped-motor-jammed"

    /// The motor fault that takes the slot out of service, if any.
    public var motorFault: SlotFault? {
        switch self {
        case .motorJammed, .droppedMotorJammed: .jammed
        case .motorMissing: .motorMissing
        case .dropped, .notDropped, .pulsedWithoutSensor, .unknown: nil
        }
    }
}

/// Why a slot is out of service until a technician clears it.
public enum SlotFault: String, Hashable, Sendable, Codable, CaseIterable {
    /// The spiral did not come back home: something holds it.
    case jammed
    /// The motor never left home: missing, unplugged or stalled.
    case motorMissing = "motor-missing"
    /// Found away from home when vendd started (a power cut mid-turn): not turned blindly.
    case awayFromHome = "away-from-home"
}

/// What the shell must carry out after an input, in order.
public enum Effect: Hashable, Sendable {
    /// Pulse the slot's dispensing relay for the vend and report its outcome with `.vendEnded`.
    case energiseRelay(SlotID, VendID)
    /// Hand this amount back to the customer. With payout policy `change` the devices pay it and
    /// report with `.payoutEnded`; with `manual` an attendant does (nothing to report).
    case payOut(PayoutID, Money)
    /// Enable (true) or inhibit (false) the coin acceptor.
    case setCoinAcceptance(Bool)
    /// Stack a bill held in escrow only up to this value; nil: return every bill.
    case setBillLimit(Money?)
    /// Send VEND REQUEST for the vend to the reader; it answers with `.cardVendApproved` or
    /// `.cardVendDenied`. The relay waits for the approval.
    case requestCardVend(CardReader, VendID, price: Money, slot: SlotID)
    /// VEND CANCEL: the customer gave up while the approval was awaited.
    case cancelCardVend(CardReader, VendID)
    /// Tell the reader how a vend it approved (or may have) ended; it answers with `.cardVendSettled`.
    case settleCardVend(CardSettlement)
    /// SESSION COMPLETE: the machine ends the reader's session.
    case endCardSession(CardReader)
    /// Readers take cards (true) or not (false).
    case setCardAcceptance(Bool)
    /// A sale paid in cash, for readers that count them (CASH SALE).
    case reportCashSale(price: Money, slot: SlotID)
    /// Ask the age verifier to check the customer for `age`+; it answers `.ageVerified` or
    /// `.ageRefused`. A verifier on a GPIO input is not asked: an attendant sees the screen.
    case requestAgeCheck(age: Int)
    /// The check ended unanswered (cancelled, timed out, reloaded): the verifier stops asking.
    case cancelAgeCheck
    /// Something observers (logs, `vendctl watch`) should know.
    case event(MachineEvent)
}

extension Array where Element == Effect {
    public var events: [MachineEvent] {
        compactMap { if case .event(let event) = $0 { event } else { nil } }
    }
}
