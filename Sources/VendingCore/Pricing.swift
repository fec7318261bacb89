/// A price list's number, as EVA-DTS reports it (PA703, LA101: up to 3 digits). List 1 is the
/// machine's normal prices (`slots[].price`); a card whose list the machine does not know is sold
/// at list 1 (EVA-DTS 6.1.1 §5.1.7, p.134).
public typealias PriceListNumber = Int

extension PriceListNumber {
    public static let standardList: PriceListNumber = 1
    public static let listRange: ClosedRange<PriceListNumber> = 1...999
}

/// Which payments a price line is for: every one, cash (coins and bills), either card reader, or
/// one of them (EVA-DTS PA702: CA cash, DA cashless 1, DB cashless 2).
public enum PriceScope: String, Hashable, Sendable, Codable, CaseIterable {
    case any
    case cash
    case cashless
    case cashless1
    case cashless2
}

/// How a customer pays, as far as the price is concerned.
public enum PricePayment: Hashable, Sendable, Codable, CustomStringConvertible {
    case cash
    case cashless(CardReader)

    /// The price lines that apply, the most specific first.
    var scopes: [PriceScope] {
        switch self {
        case .cash: [.cash, .any]
        case .cashless(.first): [.cashless1, .cashless, .any]
        case .cashless(.second): [.cashless2, .cashless, .any]
        }
    }

    public var description: String {
        switch self {
        case .cash: "cash"
        case .cashless(let reader): "cashless\(reader.rawValue)"
        }
    }
}

/// One price of a slot or a product: on `list`, for the payments `scope` names.
public struct PriceLine: Hashable, Sendable, Codable {
    public let list: PriceListNumber
    public let scope: PriceScope
    public let price: Money

    public init(list: PriceListNumber, scope: PriceScope, price: Money) {
        self.list = list
        self.scope = scope
        self.price = price
    }
}

/// What a card's BEGIN SESSION says about its prices (MDB 4.2 §7.4.4 p.7•15, payment type Z8 low
/// six bits and payment data Z9–Z10). Anything else, or a level-1 reader, is `standard`: "if the
/// User Group, the Price List or Discount Group is unknown by the VMC, the normal prices are used".
public enum CardPriceTerms: Hashable, Sendable, Codable, CustomStringConvertible {
    /// 0: the machine's default prices.
    case standard
    /// 1: the card's user group (EVA DA701) and price list (EVA LA101).
    case priceList(userGroup: UInt8, list: UInt8)
    /// 2: the user group and a discount group: the price list the reader's percentage applies to.
    case discountGroup(userGroup: UInt8, group: UInt8)
    /// 3: the reader takes this percentage off (0 to 100).
    case discount(percent: UInt8)
    /// 4: the reader adds this percentage (0 to 100).
    case surcharge(percent: UInt8)

    /// The card's price list, which the machine maps to one of its own (EVA §5.1.7).
    public var cardList: UInt8? {
        switch self {
        case .priceList(_, let list): list
        case .discountGroup(_, let group): group
        case .standard, .discount, .surcharge: nil
        }
    }

    /// The reader charges other than the price asked: VEND APPROVED carries what it took
    /// (MDB 4.2 §7.4.4 p.7•29, A3•12), so the card's reported funds do not limit a selection.
    public var readerAdjusts: Bool {
        switch self {
        case .discountGroup, .discount, .surcharge: true
        case .standard, .priceList: false
        }
    }

    public var description: String {
        switch self {
        case .standard: "standard prices"
        case .priceList(let group, let list): "user group \(group), card price list \(list)"
        case .discountGroup(let group, let discount): "user group \(group), discount group \(discount)"
        case .discount(let percent): "\(percent)% discount"
        case .surcharge(let percent): "\(percent)% surcharge"
        }
    }
}

/// A part of the week during which another price list applies ("happy hour", EVA-DTS p.134), in
/// the machine's local time. `to` at or before `from` ends on the next day: the band belongs to
/// the day it starts on.
public struct TimeBand: Hashable, Sendable, Codable, CustomStringConvertible {
    public let list: PriceListNumber
    public let days: Set<Weekday>
    /// Minutes since local midnight: the first minute in the band, and the first one after it
    /// (1440 is midnight at the end of the day).
    public let from: Int
    public let to: Int

    public init(list: PriceListNumber, days: Set<Weekday>, from: Int, to: Int) {
        self.list = list
        self.days = days
        self.from = from
        self.to = to
    }

    public func contains(_ time: LocalTime) -> Bool {
        if from < to { return days.contains(time.weekday) && time.minuteOfDay >= from && time.minuteOfDay < to }
        return (days.contains(time.weekday) && time.minuteOfDay >= from) || (days.contains(time.weekday.previous) && time.minuteOfDay < to)
    }

    /// The minutes of the week it covers, as half-open ranges from Sunday 00:00 (a band that
    /// crosses Saturday midnight wraps to Sunday morning).
    public var weekMinutes: [Range<Int>] {
        let week = 7 * 1_440
        let length = from < to ? to - from : 1_440 - from + to
        return days.sorted().flatMap { day -> [Range<Int>] in
            let start = day.rawValue * 1_440 + from
            let end = start + length
            return end <= week ? [start..<end] : [start..<week, 0..<(end - week)]
        }
    }

    public var description: String {
        let dayNames = days.count == 7 ? "every day" : days.sorted().map(\.description).joined(separator: ",")
        return "list \(list) \(dayNames) \(LocalTime.clock(from))-\(LocalTime.clock(to))"
    }
}

/// Everything about prices beyond each slot's own: the lists' names, the time bands, the map from
/// a card's price list to the machine's (EVA-DTS §5.1.7), the time zone the bands are in, and the
/// unit a discounted price is rounded to.
public struct PricingSetup: Hashable, Sendable, Codable {
    /// The lists besides list 1, by number, with the name the technician gave each.
    public let lists: [PriceListNumber: String]
    /// Never overlapping (the configuration refuses that), so at most one is in force.
    public let bands: [TimeBand]
    /// Per reader, a card's price list to the machine's; a card list not here is list 1.
    public let cardLists: [CardReader: [UInt8: PriceListNumber]]
    public let timeZone: TimeZoneRules
    /// The smallest coin the machine takes or pays, in minor units (1 when it has none): what a
    /// card's percentage is rounded to when the machine says what the reader should charge.
    public let roundingUnit: Int64

    public init(
        lists: [PriceListNumber: String] = [:], bands: [TimeBand] = [], cardLists: [CardReader: [UInt8: PriceListNumber]] = [:],
        timeZone: TimeZoneRules = .utc, roundingUnit: Int64 = 1
    ) {
        self.lists = lists
        self.bands = bands
        self.cardLists = cardLists
        self.timeZone = timeZone
        self.roundingUnit = max(1, roundingUnit)
    }

    public static let standard = PricingSetup()

    /// The band in force at `instant`, if any.
    public func band(at instant: Instant) -> TimeBand? {
        guard !bands.isEmpty else { return nil }
        let local = timeZone.localTime(at: instant)
        return bands.first { $0.contains(local) }
    }

    /// The machine's list for a card's list on `reader`: as mapped, else list 1 (EVA §5.1.7).
    public func machineList(forCard list: UInt8, on reader: CardReader) -> PriceListNumber {
        cardLists[reader]?[list] ?? .standardList
    }

    /// `price` with a card's percentage taken off (`discount`) or added, to the nearest multiple
    /// of `roundingUnit`; a half unit goes the customer's way (down). Never below zero.
    public func adjusted(_ price: Money, percent: Int, discount: Bool) -> Money {
        let factor = Int64(discount ? 100 - min(percent, 100) : 100 + min(percent, 100))
        let hundredths = price.minorUnits * factor
        let step = roundingUnit * 100
        var units = hundredths / step
        if (hundredths % step) * 2 > step { units += 1 }
        return Money(minorUnits: units * roundingUnit, currency: price.currency)
    }

    /// What a card with `terms` is expected to pay for `price`: the reader's discount or
    /// surcharge applied (see `adjusted`), the price itself for other terms.
    public func expectedCharge(_ price: Money, terms: CardPriceTerms) -> Money {
        switch terms {
        case .discount(let percent): adjusted(price, percent: Int(percent), discount: true)
        case .surcharge(let percent): adjusted(price, percent: Int(percent), discount: false)
        case .standard, .priceList, .discountGroup: price
        }
    }

    /// When `band`, in force at `instant`, ends: the instant (to the minute, in the offset in
    /// force at `instant`) and the local day and time, as status shows it.
    public func end(of band: TimeBand, at instant: Instant) -> (instant: Instant, local: LocalTime) {
        let now = timeZone.localTime(at: instant)
        // Inside the band: before its end today, or in the evening part of one that ends tomorrow.
        let minutesLeft = now.minuteOfDay < band.to ? band.to - now.minuteOfDay : 1_440 - now.minuteOfDay + band.to
        let minuteStart = instant.millisecondsSinceEpoch - (instant.millisecondsSinceEpoch % 60_000 + 60_000) % 60_000
        let endDay = now.minuteOfDay + minutesLeft >= 1_440 ? now.weekday.next : now.weekday
        return (Instant(millisecondsSinceEpoch: minuteStart + Int64(minutesLeft) * 60_000), LocalTime(weekday: endDay, minuteOfDay: band.to % 1_440))
    }

    /// The next minute after `instant` at which the band in force changes (one begins or
    /// ends); nil without bands. Reckoned in the offset in force at `instant`: across a change
    /// of daylight saving time it may be an hour off, and whoever waits for it asks again then.
    public func nextBandChange(after instant: Instant) -> Instant? {
        guard !bands.isEmpty else { return nil }
        let week = 7 * 1_440
        let local = timeZone.localTime(at: instant)
        let current = local.weekday.rawValue * 1_440 + local.minuteOfDay
        let ahead = bands.flatMap(\.weekMinutes).flatMap { [$0.lowerBound, $0.upperBound] }
            .map { (($0 - current) % week + week) % week }.filter { $0 > 0 }
        let minuteStart = instant.millisecondsSinceEpoch - (instant.millisecondsSinceEpoch % 60_000 + 60_000) % 60_000
        return Instant(millisecondsSinceEpoch: minuteStart + Int64(ahead.min() ?? week) * 60_000)
    }

    /// What a reader that applies the card's discount or surcharge itself may take for `price`:
    /// the percentage applied, rounded down and up to the smallest coin or to the reader's own
    /// unit (`readerUnit` minor units), whichever reaches further: the reader rounds its own
    /// way. Nil for terms the reader does not apply (it takes the price). A charge vendd did
    /// not read is booked within these.
    public func chargeBounds(_ price: Money, terms: CardPriceTerms, readerUnit: Int64) -> ChargeBounds? {
        let factor: Int64
        switch terms {
        case .discount(let percent): factor = 100 - Int64(min(percent, 100))
        case .surcharge(let percent): factor = 100 + Int64(min(percent, 100))
        case .standard, .priceList, .discountGroup: return nil
        }
        let hundredths = price.minorUnits * factor
        func down(_ unit: Int64) -> Int64 { hundredths / (unit * 100) * unit }
        func up(_ unit: Int64) -> Int64 { (hundredths + unit * 100 - 1) / (unit * 100) * unit }
        let reader = max(1, readerUnit)
        return ChargeBounds(
            least: Money(minorUnits: min(down(roundingUnit), down(reader)), currency: price.currency),
            most: Money(minorUnits: max(up(roundingUnit), up(reader)), currency: price.currency))
    }
}

/// The price a customer pays for one selection, decided once when they select: the machine
/// debits it from cash credit or asks the reader for it (VEND REQUEST), books it, and refunds it;
/// a band that begins later does not change it.
public struct PriceDecision: Hashable, Sendable, Codable {
    public let price: Money
    /// The machine's list it came from (EVA-DTS PA703).
    public let list: PriceListNumber
    /// The band in force when it was decided, if any.
    public let band: TimeBand?
    /// What the reader is expected to charge after the card's discount or surcharge: the reader
    /// applies it and says what it took in VEND APPROVED, which the books follow (MDB 4.2
    /// p.7•29). The price itself otherwise.
    public let expectedCharge: Money
}

extension MachineSetup {
    /// The one rule for a selection's price: the list is the card's (mapped, when it names a list
    /// other than 1), else the band's in force, else 1; on that list, the most specific line for
    /// the payment wins (the reader's own, then cards', then every payment's), the slot's before
    /// its product's; a list with no line for the slot sells at list 1. `listOnePrice` is the
    /// slot's price for every payment on list 1 (the file's, or one set at run time).
    public func decidePrice(
        of slotID: SlotID, listOnePrice: Money, runTimeLines: [PriceLine] = [], payment: PricePayment, terms: CardPriceTerms,
        at instant: Instant
    ) -> PriceDecision? {
        let band = pricing.band(at: instant)
        var list = band?.list ?? .standardList
        if case .cashless(let reader) = payment, let cardList = terms.cardList {
            let mapped = pricing.machineList(forCard: cardList, on: reader)
            if mapped != .standardList { list = mapped }
        }
        guard let (price, priced) = price(of: slotID, on: list, payment: payment, listOnePrice: listOnePrice, runTimeLines: runTimeLines)
        else { return nil }
        return PriceDecision(price: price, list: priced, band: band, expectedCharge: pricing.expectedCharge(price, terms: terms))
    }

    /// The slot's price on `list` for `payment`, and the list it came from: the most specific
    /// line, one set at run time (`runTimeLines`, the slot's) before the file's, the slot's
    /// before its product's; list 1 when `list` has none for the slot.
    public func price(
        of slotID: SlotID, on list: PriceListNumber, payment: PricePayment, listOnePrice: Money, runTimeLines: [PriceLine] = []
    ) -> (price: Money, list: PriceListNumber)? {
        guard let slot = slot(slotID) else { return nil }
        let productLines = catalog[slot.product]?.priceLines ?? []
        func line(on list: PriceListNumber) -> Money? {
            for scope in payment.scopes {
                if let found = runTimeLines.first(where: { $0.list == list && $0.scope == scope }) { return found.price }
                if list == .standardList, scope == .any { return listOnePrice }
                if let found = slot.priceLines.first(where: { $0.list == list && $0.scope == scope }) { return found.price }
                if let found = productLines.first(where: { $0.list == list && $0.scope == scope }) { return found.price }
            }
            return nil
        }
        if let price = line(on: list) { return (price, list) }
        return (line(on: .standardList) ?? listOnePrice, .standardList)
    }

    /// Prices other than each slot's one: the audit then reports sales per list (EVA-DTS PA7).
    public var usesPriceLists: Bool {
        !pricing.lists.isEmpty || slots.contains { !$0.priceLines.isEmpty } || catalog.products.values.contains { !$0.priceLines.isEmpty }
    }
}

/// Sales of one slot on one list by one payment: an EVA-DTS 6.1.1 PA7 line (PA701 product,
/// PA702 payment device, PA703 price list; p.141, p.254).
public struct PriceListSales: Hashable, Comparable, Sendable, Codable {
    public let slot: SlotID
    public let payment: Payment
    public let list: PriceListNumber

    public init(slot: SlotID, payment: Payment, list: PriceListNumber) {
        self.slot = slot
        self.payment = payment
        self.list = list
    }

    public static func < (lhs: PriceListSales, rhs: PriceListSales) -> Bool {
        (lhs.slot, lhs.payment.description, lhs.list) < (rhs.slot, rhs.payment.description, rhs.list)
    }
}

extension PricePayment {
    /// How a sale paid so is priced; nil for a free-vend card or test media.
    public init?(_ payment: Payment) {
        switch payment {
        case .cash: self = .cash
        case .card(let reader): self = .cashless(reader)
        case .freeCard: return nil
        }
    }
}
