import VendingCore

/// How a device's part of a payout ended, in the only form the machine accepts it: what was asked
/// of it, what it paid, and what it *provably* never paid — never asked of the hardware, refused by
/// it, or stopped with the device's own word (its counters, its payout status, its tubes after a
/// reset) for what did not leave. Everything else is unknown by construction: an amount a device
/// may still be paying can never go back to the customer's credit, because no device can say
/// "unknown" too little — only "unpaid" too much, and that needs evidence it has to name.
public struct PayoutTally: Sendable, Hashable, CustomStringConvertible {
    public let asked: Money
    public let paid: Money
    /// Left the machine for certain not, and never will for this payout.
    public let provablyUnpaid: Money

    /// Neither paid nor provably unpaid: for the technician to count, never credit.
    public var unknown: Money { max(.zero(asked.currency), asked - paid - provablyUnpaid) }

    /// `provablyUnpaid` is capped at what was asked and not paid: a device cannot prove more.
    public init(asked: Money, paid: Money, provablyUnpaid: Money) {
        let zero = Money.zero(asked.currency)
        self.asked = asked
        self.paid = max(zero, paid)
        self.provablyUnpaid = min(max(zero, provablyUnpaid), max(zero, asked - self.paid))
    }

    /// Nothing of `asked` was told to the hardware.
    public static func neverStarted(_ asked: Money) -> PayoutTally {
        PayoutTally(asked: asked, paid: .zero(asked.currency), provablyUnpaid: asked)
    }

    /// The device paid `paid` and says, by its own evidence, that nothing more of `asked` left.
    public static func ended(_ asked: Money, paid: Money) -> PayoutTally {
        PayoutTally(asked: asked, paid: paid, provablyUnpaid: asked - paid)
    }

    /// The device may have paid any of `asked` beyond `paid`: the rest is unknown.
    public static func cannotTell(_ asked: Money, paid: Money) -> PayoutTally {
        PayoutTally(asked: asked, paid: paid, provablyUnpaid: .zero(asked.currency))
    }

    public var description: String {
        "paid \(paid) of \(asked)\(provablyUnpaid.isZero ? "" : ", \(provablyUnpaid) not paid")\(unknown.isZero ? "" : ", \(unknown) unknown")"
    }
}
