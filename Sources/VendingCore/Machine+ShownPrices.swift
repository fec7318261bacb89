/// What a customer would pay at one slot, as the kiosk, the LCD and `vendctl status` show it:
/// the core's own decision (`MachineSetup.decidePrice`), so what is shown is what is charged.
public struct ShownPrices: Hashable, Sendable {
    /// What a cash customer pays: the band's price during a band; while this slot's cash vend is
    /// under way, the price it was requested at.
    public let cash: Money
    /// Each reader's price where it differs from `cash` (a cashless line of the list in force).
    public let cards: [CardReader: Money]
    /// What the open card session's card pays (its list, discount or surcharge); while this
    /// slot's card vend is under way, what it was requested at. Nil without a card session.
    public let session: Money?
    /// List 1's price for every payment: the "was" of a lower price.
    public let listOne: Money
}

extension Machine {
    /// The prices at `slot` at `instant` for a cash customer, for each of `readers`, and for the
    /// open card session; nil for a slot not configured.
    public func shownPrices(of slot: SlotID, readers: [CardReader], at instant: Instant) -> ShownPrices? {
        guard let listOne = price(of: slot), var cash = price(of: slot, payment: .cash, at: instant)?.price else { return nil }
        var cards: [CardReader: Money] = [:]
        for reader in readers {
            if let card = price(of: slot, payment: .cashless(reader), at: instant)?.price, card != cash { cards[reader] = card }
        }
        var session = cardSession.flatMap { price(of: slot, payment: .cashless($0.reader), terms: $0.terms, at: instant)?.expectedCharge }
        // A price is decided once, at the selection: a band that began since does not change
        // what the customer was asked.
        if let vend = pendingVend, vend.slot == slot {
            if let card = vend.card {
                session = card.approved ?? setup.pricing.expectedCharge(vend.price, terms: cardSession?.terms ?? .standard)
            } else {
                cash = vend.price
            }
        }
        return ShownPrices(cash: cash, cards: cards, session: session, listOne: listOne)
    }

    /// The band in force at `instant`, its list's name, and when it ends.
    public func bandInForce(at instant: Instant) -> (band: TimeBand, name: String?, until: Instant, untilLocal: LocalTime)? {
        guard let band = setup.pricing.band(at: instant) else { return nil }
        let end = setup.pricing.end(of: band, at: instant)
        return (band, setup.pricing.lists[band.list], end.instant, end.local)
    }
}
