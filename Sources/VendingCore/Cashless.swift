/// A cashless reader (card or phone) on the MDB bus: #1 at address 10h, #2 at 60h.
public enum CardReader: Int, Hashable, Comparable, Sendable, Codable, CodingKeyRepresentable, CaseIterable, CustomStringConvertible {
    case first = 1
    case second = 2

    public static func < (lhs: CardReader, rhs: CardReader) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { "cashless #\(rawValue)" }
}

/// How a vend was paid. Card money never enters the cash books.
public enum Payment: Hashable, Sendable, Codable, CustomStringConvertible {
    case cash
    case card(CardReader)
    /// A free-vend card or test media on a reader: an item left the machine, but it is no sale.
    case freeCard(CardReader)

    public var reader: CardReader? {
        switch self {
        case .cash: nil
        case .card(let reader), .freeCard(let reader): reader
        }
    }

    /// The name in reports, the journal (`PAYMENT=`) and the fleet's events.
    public var description: String {
        switch self {
        case .cash: "cash"
        case .card(let reader): "cashless\(reader.rawValue)"
        case .freeCard(let reader): "free-cashless\(reader.rawValue)"
        }
    }
}

/// What a card presented to a reader is, from BEGIN SESSION's payment type.
public enum CardMedia: String, Hashable, Sendable, Codable {
    case normal
    /// The operator's test card: vends, and is no sale.
    case test
    case freeVend = "free-vend"
}

/// A card session a reader opened (BEGIN SESSION): the customer may select, paying by card.
public struct CardSession: Hashable, Sendable, Codable {
    public let reader: CardReader
    /// What the card may spend; nil when the reader does not say.
    public let funds: Money?
    public let media: CardMedia
    /// Its price list, discount or surcharge, from BEGIN SESSION's payment type and data.
    public let terms: CardPriceTerms

    public init(reader: CardReader, funds: Money?, media: CardMedia, terms: CardPriceTerms = .standard) {
        self.reader = reader
        self.funds = funds
        self.media = media
        self.terms = terms
    }

    private enum CodingKeys: String, CodingKey { case reader, funds, media, terms }

    /// Sessions saved before price terms were read had the standard prices.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        reader = try container.decode(CardReader.self, forKey: .reader)
        funds = try container.decodeIfPresent(Money.self, forKey: .funds)
        media = try container.decode(CardMedia.self, forKey: .media)
        terms = try container.decodeIfPresent(CardPriceTerms.self, forKey: .terms) ?? .standard
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(reader, forKey: .reader)
        try container.encodeIfPresent(funds, forKey: .funds)
        try container.encode(media, forKey: .media)
        if terms != .standard { try container.encode(terms, forKey: .terms) }
    }
}

/// A card vend's part with its reader: asked (VEND REQUEST sent), then approved with the amount
/// the reader really charges (a discount or surcharge may make it differ from the price).
public struct CardVend: Hashable, Sendable, Codable {
    public let reader: CardReader
    public let media: CardMedia
    public internal(set) var approved: Money?
    /// The most the reader may take for it while no approval is seen (a surcharge is the
    /// reader's to add); nil in vends saved before surcharges: the price.
    public let mostCharged: Money?
}

/// What the reader must be told of a card vend that was approved or may have been: VEND SUCCESS
/// (the item left) or VEND FAILURE (the reader refunds the card). Durable from the input that
/// decided it until the reader has acknowledged it, so a restart tells the reader instead of
/// resetting it (a reset between APPROVED and SUCCESS counts as a sale to the reader, MDB §7.4).
public struct CardSettlement: Hashable, Sendable, Codable {
    public let vend: VendID
    public let reader: CardReader
    public let slot: SlotID
    public let success: Bool
    /// What the card was charged (zero when no approval was seen).
    public let amount: Money
    /// What the reader may have charged when no approval was seen (the MDB interface ACKs an
    /// approval before vendd can journal it): the price in the VEND REQUEST, with the card's
    /// surcharge added when it has one.
    public let requested: Money

    public init(vend: VendID, reader: CardReader, slot: SlotID, success: Bool, amount: Money, requested: Money) {
        self.vend = vend
        self.reader = reader
        self.slot = slot
        self.success = success
        self.amount = amount
        self.requested = requested
    }

    /// What the card may be charged for this vend: the approved amount, else the price requested.
    public var atStake: Money { amount.isZero ? requested : amount }

    private enum CodingKeys: String, CodingKey { case vend, reader, slot, success, amount, requested }

    /// Settlements journaled before `requested` existed take the approved amount for it.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        vend = try container.decode(VendID.self, forKey: .vend)
        reader = try container.decode(CardReader.self, forKey: .reader)
        slot = try container.decode(SlotID.self, forKey: .slot)
        success = try container.decode(Bool.self, forKey: .success)
        amount = try container.decode(Money.self, forKey: .amount)
        requested = try container.decodeIfPresent(Money.self, forKey: .requested) ?? amount
    }
}

/// How a reader answered a settlement, as its driver could tell.
public enum CardSettlementResult: Hashable, Sendable, Codable {
    /// As asked: VEND SUCCESS acknowledged, or the card refunded or never charged — something
    /// proved it (the refund's ACK, VEND DENIED, a reader state holding no approval).
    case asAsked
    /// The reader keeps this for an item that did not come out: its refund failed (MALFUNCTION
    /// Ch), or it was reset after approving (a reset makes an approval a sale, §7.4).
    case refundLost(Money)
    /// Nobody can tell whether the card was charged this (the reader reset or stayed silent
    /// while it may have held an approval vendd never saw): the operator settles it with the
    /// card provider.
    case unknown(Money)
}

/// A reader ready to take a vend, as its driver reports it.
public struct CardReaderReadiness: Hashable, Sendable, Codable {
    public let reader: CardReader
    /// It takes a VEND REQUEST without a session ("always idle"): select first, then tap.
    public let selectionFirst: Bool

    public init(reader: CardReader, selectionFirst: Bool) {
        self.reader = reader
        self.selectionFirst = selectionFirst
    }
}

extension Duration {
    /// How long a card vend may wait for its approval before the machine gives up on it. Longer
    /// than any reader's own limit (255 s at most): the driver cancels first.
    public static let cardApprovalLimit: Duration = .seconds(300)
}
