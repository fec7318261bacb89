/// Numbers payouts in the order they start; never reused, also across restarts.
public struct PayoutID: RawRepresentable, Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public var description: String { "payout#\(rawValue)" }
    public static func < (lhs: PayoutID, rhs: PayoutID) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(UInt64.self)
    }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// How money goes back to a customer.
public enum PayoutPolicy: String, Hashable, Sendable, Codable, CaseIterable {
    /// The machine cannot hand money back: credit stays until spent.
    case none
    /// An attendant pays refunds by hand; each one is logged for them. No change after a sale.
    case manual
    /// Payout devices (hoppers, a coin changer) give change after a sale and pay coin return and
    /// refunds, two-phase: the intent is durable before a device is told.
    case change
}

/// Why money is paid out.
public enum PayoutReason: String, Hashable, Sendable, Codable {
    /// What was left of the credit after a sale.
    case change
    /// The customer pressed coin return.
    case coinReturn = "coin-return"
    /// The price of a vend that did not drop (failed vend policy `pay-out`).
    case failedVend = "failed-vend"
    /// The technician's payout test: from the devices' stock, not from any credit.
    case test

    /// Whether the amount came out of a customer's credit (and what is not paid goes back to it).
    public var isCustomers: Bool { self != .test }
}

/// A payout the devices were (or are about to be) told to make. Its amount is held, neither
/// credit nor paid, until `Input.payoutEnded` says what the devices really paid.
public struct PendingPayout: Hashable, Sendable, Codable {
    public let id: PayoutID
    public let amount: Money
    public let reason: PayoutReason
    public let startedAt: Instant
    /// The devices (by identity) the shell said it is about to tell, in order: a device not in
    /// here was never asked to pay any of it. Nil when not recorded (a payout written before
    /// devices were marked): then any device may have been asked.
    public internal(set) var askedDevices: [String]? = []
    /// What each asked device that keeps no payout counter held just before it was told (see
    /// `Input.payoutDeviceAsked`), by identity; empty when none said.
    public internal(set) var holdings: [String: [ChangeStock]] = [:]

    init(id: PayoutID, amount: Money, reason: PayoutReason, startedAt: Instant) {
        self.id = id
        self.amount = amount
        self.reason = reason
        self.startedAt = startedAt
    }

    /// A payout recorded before devices were marked asked reads as "any may have been".
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(PayoutID.self, forKey: .id)
        amount = try container.decode(Money.self, forKey: .amount)
        reason = try container.decode(PayoutReason.self, forKey: .reason)
        startedAt = try container.decode(Instant.self, forKey: .startedAt)
        askedDevices = try container.decodeIfPresent([String].self, forKey: .askedDevices)
        holdings = try container.decodeIfPresent([String: [ChangeStock]].self, forKey: .holdings) ?? [:]
    }
}

/// Coins of one value that the payout devices can pay now.
public struct ChangeStock: Hashable, Sendable, Codable {
    public let value: Money
    /// Nil when the device cannot count them (a hopper without level sensors): taken as plenty.
    public let count: Int?

    public init(value: Money, count: Int?) {
        self.value = value
        self.count = count
    }
}

extension Machine {
    /// True when the machine gives change but could not pay some change it may owe after selling
    /// its cheapest available product at `instant` for cash: the customer should pay the exact price.
    ///
    /// The prices are the cash prices in force then (a band's list during a band); with no
    /// instant, list 1's. The change the machine may owe is any multiple of the money step (the
    /// greatest common divisor of those prices and the payout coins) up to `maximumCredit −
    /// cheapest price`; every such amount must be payable from `changeInventory`.
    public func needsExactChange(at instant: Instant?) -> Bool {
        guard setup.payoutPolicy == .change else { return false }
        let cashPrices = offers.compactMap { offer -> (price: Money, available: Bool)? in
            let cash =
                instant.map { price(of: offer.slot, payment: .cash, at: $0)?.price }
                ?? price(of: offer.slot, on: .standardList, payment: .cash)?.price
            return cash.map { ($0, offer.available > 0) }
        }
        guard let cheapest = cashPrices.filter(\.available).map(\.price).min() else { return false }
        let largestChange = setup.maximumCredit.minorUnits - cheapest.minorUnits
        guard largestChange > 0 else { return false }
        let coins = changeInventory.filter { $0.value.currency == setup.currency && $0.value.minorUnits > 0 && $0.count != 0 }
        let step = (cashPrices.map(\.price.minorUnits) + coins.map(\.value.minorUnits)).reduce(0, greatestCommonDivisor)
        guard step > 0, largestChange >= step else { return false }
        return !ChangeMaker(coins: coins, step: step).canPayEveryStep(upTo: largestChange)
    }
}

/// Which amounts a set of coins (some of unknown count) can pay exactly.
struct ChangeMaker {
    let coins: [ChangeStock]
    let step: Int64

    /// Bounded change-making over amounts in steps: `fewest[a]` is the fewest coins of the value
    /// being added that reach `a`, or nil.
    func canPayEveryStep(upTo limit: Int64) -> Bool {
        let size = Int(limit / step)
        var payable = [Bool](repeating: false, count: size + 1)
        payable[0] = true
        for coin in coins {
            let units = Int(coin.value.minorUnits / step)
            guard units > 0, units <= size else { continue }
            var used = [Int](repeating: 0, count: size + 1)
            for amount in units...size where !payable[amount] && payable[amount - units] {
                let count = used[amount - units] + 1
                if coin.count.map({ count <= $0 }) ?? true {
                    payable[amount] = true
                    used[amount] = count
                }
            }
        }
        return !payable.contains(false)
    }
}

private func greatestCommonDivisor(_ a: Int64, _ b: Int64) -> Int64 {
    b == 0 ? abs(a) : greatestCommonDivisor(b, a % b)
}
