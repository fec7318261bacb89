/// One slot as configured: which product it holds, its price and how many items fit.
public struct SlotSetup: Hashable, Sendable, Codable {
    public let id: SlotID
    public let product: ProductID
    public let price: Money
    public let capacity: Int
    /// The zone whose health control protects this slot's items: set when they are perishable
    /// (time/temperature-controlled food). A lock on that zone stops the slot's sales.
    public let healthZone: ZoneID?
    /// Prices besides `price` (list 1, every payment): other lists, other payments (`prices:`).
    public let priceLines: [PriceLine]
    /// Sold only to a customer whose age a verifier confirmed at least this (`restricted: age 19`,
    /// the slot's own or its product's); nil: unrestricted.
    public let minimumAge: Int?

    public init(
        id: SlotID, product: ProductID, price: Money, capacity: Int, healthZone: ZoneID? = nil, priceLines: [PriceLine] = [],
        minimumAge: Int? = nil
    ) {
        self.id = id
        self.product = product
        self.price = price
        self.capacity = capacity
        self.healthZone = healthZone
        self.priceLines = priceLines
        self.minimumAge = minimumAge
    }

    private enum CodingKeys: String, CodingKey { case id, product, price, capacity, healthZone, priceLines, minimumAge }

    /// Slots saved before price lists had none.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(SlotID.self, forKey: .id)
        product = try container.decode(ProductID.self, forKey: .product)
        price = try container.decode(Money.self, forKey: .price)
        capacity = try container.decode(Int.self, forKey: .capacity)
        healthZone = try container.decodeIfPresent(ZoneID.self, forKey: .healthZone)
        priceLines = try container.decodeIfPresent([PriceLine].self, forKey: .priceLines) ?? []
        minimumAge = try container.decodeIfPresent(Int.self, forKey: .minimumAge)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(product, forKey: .product)
        try container.encode(price, forKey: .price)
        try container.encode(capacity, forKey: .capacity)
        try container.encodeIfPresent(healthZone, forKey: .healthZone)
        // Written only when used, so that a file without it stays readable by an older vendd.
        if !priceLines.isEmpty { try container.encode(priceLines, forKey: .priceLines) }
        try container.encodeIfPresent(minimumAge, forKey: .minimumAge)
    }
}

/// What to do with a vend whose outcome nobody could observe: the relay was energised but the
/// drop sensor never answered, or the daemon restarted while the vend was in flight.
public enum UnknownOutcomePolicy: String, Hashable, Sendable, Codable, CaseIterable {
    /// Count it as sold: the customer most likely got the item.
    case assumeDispensed = "assume-dispensed"
    /// Give the price back as credit: the customer never pays for what may not have dropped.
    case refundCredit = "refund-credit"
}

/// What happens to the price of a vend the drop sensor says did not drop.
public enum FailedVendPolicy: String, Hashable, Sendable, Codable, CaseIterable {
    /// Back into credit, so the customer can choose again or press coin return.
    case keepCredit = "keep-credit"
    /// Paid out at once (needs a payout device).
    case payOut = "pay-out"
}

/// Everything about the machine that comes from its configuration rather than from use.
public struct MachineSetup: Hashable, Sendable, Codable {
    public let currency: Currency
    public let catalog: Catalog
    /// In display order.
    public let slots: [SlotSetup]
    /// Coin acceptance is inhibited once credit reaches this.
    public let maximumCredit: Money
    /// A vend with no reported outcome after this long is resolved by `unknownOutcomePolicy`.
    public var vendTimeout: Duration { .milliseconds(vendTimeoutMilliseconds) }
    private let vendTimeoutMilliseconds: Int64
    public let unknownOutcomePolicy: UnknownOutcomePolicy
    public let failedVendPolicy: FailedVendPolicy
    /// How money goes back to a customer.
    public let payoutPolicy: PayoutPolicy
    /// Whether the machine can hand money back (coin return / refunds); without it credit stays
    /// in the machine until spent.
    public var payoutAvailable: Bool { payoutPolicy != .none }
    /// How many past sales the history keeps; totals per product are kept regardless.
    public let historyLimit: Int
    /// Zones whose health lock stops every slot, not only their perishable ones (`lock: machine`).
    public let machineLockZones: Set<ZoneID>
    /// Price lists, time bands and the cards' lists (`pricing:`); `standard` without them.
    public let pricing: PricingSetup
    /// The age verifier's timing (`age_verification:`); nil: no verifier, restricted slots sell nothing.
    public let ageVerification: AgeVerificationSetup?

    public init(
        currency: Currency,
        catalog: Catalog,
        slots: [SlotSetup],
        maximumCredit: Money,
        vendTimeout: Duration = .seconds(30),
        unknownOutcomePolicy: UnknownOutcomePolicy = .refundCredit,
        failedVendPolicy: FailedVendPolicy = .keepCredit,
        payoutPolicy: PayoutPolicy = .none,
        historyLimit: Int = 10_000,
        machineLockZones: Set<ZoneID> = [],
        pricing: PricingSetup = .standard,
        ageVerification: AgeVerificationSetup? = nil
    ) throws(SetupError) {
        self.currency = currency
        self.catalog = catalog
        self.slots = slots
        self.maximumCredit = maximumCredit
        self.vendTimeoutMilliseconds = vendTimeout.wholeMilliseconds
        self.unknownOutcomePolicy = unknownOutcomePolicy
        self.failedVendPolicy = failedVendPolicy
        self.payoutPolicy = payoutPolicy
        self.historyLimit = historyLimit
        self.machineLockZones = machineLockZones
        self.pricing = pricing
        self.ageVerification = ageVerification
        if let problem = firstProblem { throw problem }
    }

    /// The MDB item number a card reader and the DEX audit know a slot by: its place in the
    /// file, from 1 (FFFFh is "undefined" in MDB).
    public func itemNumber(of slot: SlotID) -> UInt16? {
        slots.firstIndex { $0.id == slot }.flatMap { UInt16(exactly: $0 + 1) }
    }

    public func slot(_ id: SlotID) -> SlotSetup? { slots.first { $0.id == id } }

    private enum CodingKeys: String, CodingKey {
        case currency, catalog, slots, maximumCredit, vendTimeoutMilliseconds, unknownOutcomePolicy, failedVendPolicy
        case payoutPolicy, historyLimit, machineLockZones, pricing, ageVerification
        /// Written before payout policies: true meant `manual`.
        case payoutAvailable
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        currency = try container.decode(Currency.self, forKey: .currency)
        catalog = try container.decode(Catalog.self, forKey: .catalog)
        slots = try container.decode([SlotSetup].self, forKey: .slots)
        maximumCredit = try container.decode(Money.self, forKey: .maximumCredit)
        vendTimeoutMilliseconds = try container.decode(Int64.self, forKey: .vendTimeoutMilliseconds)
        unknownOutcomePolicy = try container.decode(UnknownOutcomePolicy.self, forKey: .unknownOutcomePolicy)
        failedVendPolicy = try container.decode(FailedVendPolicy.self, forKey: .failedVendPolicy)
        if let policy = try container.decodeIfPresent(PayoutPolicy.self, forKey: .payoutPolicy) {
            payoutPolicy = policy
        } else {
            payoutPolicy = try container.decode(Bool.self, forKey: .payoutAvailable) ? .manual : .none
        }
        historyLimit = try container.decode(Int.self, forKey: .historyLimit)
        machineLockZones = try container.decodeIfPresent(Set<ZoneID>.self, forKey: .machineLockZones) ?? []
        pricing = try container.decodeIfPresent(PricingSetup.self, forKey: .pricing) ?? .standard
        ageVerification = try container.decodeIfPresent(AgeVerificationSetup.self, forKey: .ageVerification)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(currency, forKey: .currency)
        try container.encode(catalog, forKey: .catalog)
        try container.encode(slots, forKey: .slots)
        try container.encode(maximumCredit, forKey: .maximumCredit)
        try container.encode(vendTimeoutMilliseconds, forKey: .vendTimeoutMilliseconds)
        try container.encode(unknownOutcomePolicy, forKey: .unknownOutcomePolicy)
        try container.encode(failedVendPolicy, forKey: .failedVendPolicy)
        try container.encode(payoutPolicy, forKey: .payoutPolicy)
        try container.encode(historyLimit, forKey: .historyLimit)
        // Written only when used, so that a file without it stays readable by an older vendd.
        if !machineLockZones.isEmpty { try container.encode(machineLockZones, forKey: .machineLockZones) }
        if pricing != .standard { try container.encode(pricing, forKey: .pricing) }
        try container.encodeIfPresent(ageVerification, forKey: .ageVerification)
    }

    /// The configuration module reports these with file positions first; this check keeps the
    /// core safe against any other caller.
    private var firstProblem: SetupError? {
        var seen = Set<SlotID>()
        for slot in slots {
            if !seen.insert(slot.id).inserted { return .duplicateSlot(slot.id) }
            if catalog[slot.product] == nil { return .unknownProduct(slot.id, slot.product) }
            if slot.price.currency != currency || slot.price.minorUnits <= 0 {
                return .invalidPrice(slot.id)
            }
            if slot.capacity < 1 { return .invalidCapacity(slot.id) }
            if let age = slot.minimumAge, !(1...99).contains(age) { return .invalidMinimumAge(slot.id) }
            let lines = slot.priceLines + (catalog[slot.product]?.priceLines ?? [])
            if lines.contains(where: { $0.price.currency != currency || $0.price.minorUnits <= 0 }) {
                return .invalidPrice(slot.id)
            }
        }
        if maximumCredit.currency != currency || maximumCredit.minorUnits <= 0 {
            return .invalidMaximumCredit
        }
        if vendTimeout <= .zero { return .invalidVendTimeout }
        if historyLimit < 0 { return .invalidHistoryLimit }
        if failedVendPolicy == .payOut && !payoutAvailable { return .payOutWithoutPayoutDevice }
        return nil
    }
}

public enum SetupError: Error, Hashable, Sendable, CustomStringConvertible {
    case duplicateSlot(SlotID)
    case unknownProduct(SlotID, ProductID)
    case invalidPrice(SlotID)
    case invalidCapacity(SlotID)
    case invalidMaximumCredit
    case invalidVendTimeout
    case invalidHistoryLimit
    case payOutWithoutPayoutDevice
    case invalidMinimumAge(SlotID)

    public var description: String {
        switch self {
        case .duplicateSlot(let slot): "slot \(slot) is defined twice"
        case .unknownProduct(let slot, let product): "slot \(slot) holds unknown product '\(product)'"
        case .invalidPrice(let slot): "slot \(slot) needs a positive price in the machine's currency"
        case .invalidCapacity(let slot): "slot \(slot) needs a capacity of at least 1"
        case .invalidMinimumAge(let slot): "slot \(slot) needs a restricted age from 1 to 99"
        case .invalidMaximumCredit: "the maximum credit must be positive, in the machine's currency"
        case .invalidVendTimeout: "the vend timeout must be positive"
        case .invalidHistoryLimit: "the history limit cannot be negative"
        case .payOutWithoutPayoutDevice: "paying out failed vends needs a payout device"
        }
    }
}

/// Why an amount cannot be a slot's price: the one rule for the prices in the file
/// (`check-config`) and for a price set at run time (`vendctl price`).
public enum PriceProblem: Hashable, Sendable, Codable {
    case wrongCurrency
    case notPositive
    /// Coins are refused once credit reaches the maximum, so this price could never be paid.
    case aboveMaximumCredit(Money)

    /// Nil when `price` may be a slot's price on a machine with this currency and maximum credit.
    public static func of(_ price: Money, currency: Currency, maximumCredit: Money) -> PriceProblem? {
        guard price.currency == currency else { return .wrongCurrency }
        guard price.minorUnits > 0 else { return .notPositive }
        guard price <= maximumCredit else { return .aboveMaximumCredit(maximumCredit) }
        return nil
    }

    /// The sentence for the technician, amounts in the machine's format.
    public func describe(_ price: Money, format: MoneyFormat) -> String {
        switch self {
        case .wrongCurrency: "\(price) is not in the machine's currency"
        case .notPositive: "a price must be more than \(format.string(for: .zero(price.currency)))"
        case .aboveMaximumCredit(let maximum):
            "\(format.string(for: price)) is above machine.maximum_credit (\(format.string(for: maximum))), so it could never be paid"
        }
    }
}

extension MachineSetup {
    /// Why `price` cannot be a slot's price on this machine, if it cannot.
    public func priceProblem(_ price: Money) -> PriceProblem? {
        PriceProblem.of(price, currency: currency, maximumCredit: maximumCredit)
    }
}
