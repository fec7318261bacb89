/// What went into the cash box since it was last emptied: coins the acceptor or changer routed
/// to it (not the tubes) and bills stacked, per denomination. A collection hands the counts over
/// to its record and starts them again from zero; the tubes and hoppers are not part of it.
public struct CashBox: Hashable, Sendable, Codable {
    /// Coins per denomination, smallest first.
    public private(set) var coins: [CoinCount] = []
    /// Bills per denomination, smallest first.
    public private(set) var bills: [CoinCount] = []
    /// The number the next collection takes: collections are numbered 1, 2, 3… for the machine's life.
    public private(set) var nextCollection: UInt64 = 1
    /// When the last collection was made (nil: never, the counts run since the machine was new).
    public private(set) var lastCollectedAt: Instant?

    public init() {}

    /// Everything the counts add up to, in `currency` (zero when empty).
    public func total(in currency: Currency) -> Money {
        (coins + bills).reduce(Money.zero(currency)) { $0 + $1.value * $1.count }
    }

    mutating func addCoin(_ value: Money) { coins.count(value) }
    mutating func addBill(_ value: Money) { bills.count(value) }

    /// The record of emptying the box now, and the box emptied.
    mutating func collect(at now: Instant, by technician: String, currency: Currency) -> CashCollection {
        let collection = CashCollection(
            number: nextCollection, at: now, since: lastCollectedAt, coins: coins, bills: bills, total: total(in: currency), by: technician)
        coins = []
        bills = []
        nextCollection += 1
        lastCollectedAt = now
        return collection
    }
}

/// One emptying of the cash box: what the machine counted into it since the previous one
/// (`since`; nil for the first), per denomination. The driver's own count is compared with it in
/// the back office.
public struct CashCollection: Hashable, Sendable, Codable {
    public let number: UInt64
    public let at: Instant
    public let since: Instant?
    public let coins: [CoinCount]
    public let bills: [CoinCount]
    public let total: Money
    /// Who collected it, as the control socket knew them.
    public let by: String
}

extension [CoinCount] {
    /// One more of `value`, kept smallest first.
    mutating func count(_ value: Money) {
        if let index = firstIndex(where: { $0.value == value }) {
            self[index].count += 1
        } else {
            append(CoinCount(value: value, count: 1))
            sort { $0.value < $1.value }
        }
    }
}
