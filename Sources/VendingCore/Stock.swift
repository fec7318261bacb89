/// Items loaded into a slot together, sharing a load instant (and so an expiry).
public struct Lot: Hashable, Sendable, Codable {
    public fileprivate(set) var count: Int
    public let loadedAt: Instant

    public init(count: Int, loadedAt: Instant) {
        self.count = count
        self.loadedAt = loadedAt
    }

    /// When the lot's items stop being sellable; nil for products without a shelf life.
    public func expiry(shelfLifeDays: Int?) -> Instant? {
        shelfLifeDays.map { loadedAt.adding(days: $0) }
    }
}

/// The items in one slot, oldest lot first: a spiral or column dispenses what was loaded first.
public struct SlotStock: Hashable, Sendable, Codable {
    public private(set) var lots: [Lot] = []

    public init(lots: [Lot] = []) {
        self.lots = lots.filter { $0.count > 0 }
    }

    public var count: Int { lots.reduce(0) { $0 + $1.count } }

    mutating func load(_ count: Int, at instant: Instant) {
        precondition(count > 0)
        lots.append(Lot(count: count, loadedAt: instant))
    }

    /// Removes up to `count` items, oldest first; returns how many were removed.
    @discardableResult
    mutating func removeOldest(_ count: Int) -> Int {
        var remaining = count
        while remaining > 0, !lots.isEmpty {
            let taken = min(remaining, lots[0].count)
            lots[0].count -= taken
            remaining -= taken
            if lots[0].count == 0 { lots.removeFirst() }
        }
        return count - remaining
    }

    /// How many items have expired at `instant` (an item expires at the moment its shelf life
    /// ends).
    public func expiredCount(at instant: Instant, shelfLifeDays: Int?) -> Int {
        lots.reduce(0) { total, lot in
            guard let expiry = lot.expiry(shelfLifeDays: shelfLifeDays), expiry <= instant else { return total }
            return total + lot.count
        }
    }

    /// How many of the `count` oldest items (the next to drop or be unloaded) have expired at
    /// `instant`.
    public func expiredCount(ofOldest count: Int, at instant: Instant, shelfLifeDays: Int?) -> Int {
        var remaining = count
        var expired = 0
        for lot in lots where remaining > 0 {
            let taken = min(remaining, lot.count)
            remaining -= taken
            if let expiry = lot.expiry(shelfLifeDays: shelfLifeDays), expiry <= instant { expired += taken }
        }
        return expired
    }

    public func earliestExpiry(shelfLifeDays: Int?) -> Instant? {
        lots.compactMap { $0.expiry(shelfLifeDays: shelfLifeDays) }.min()
    }
}
