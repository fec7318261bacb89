import MDB
import VendHardware
import VendingCore

/// The coins in the changer's tubes, per coin type, as evidence of what a payout took from them.
/// A tube reported "full with 0" (a jam or a bad sensor) or at 255 (the most TUBE STATUS can
/// say) is not counted.
struct TubeHolding: Equatable {
    var counts: [Int]
    let uncounted: Set<Int>

    init(_ status: TubeStatus) {
        counts = status.counts.map(Int.init)
        uncounted = Set(status.suspectTubes + status.counts.indices.filter { status.counts[$0] == 255 })
    }

    /// By coin value, for the types the changer and the table agree on: the count of a value is
    /// nil when one of its types is not counted.
    func byValue(_ values: [Int: Money]) -> [ChangeStock] {
        var byValue: [Money: Int?] = [:]
        for (type, value) in values {
            let count: Int? = uncounted.contains(type) ? nil : counts[type]
            // updateValue: a nil count is kept as "not counted", not as "no entry".
            if let sofar = byValue[value] {
                byValue.updateValue(sofar.flatMap { sum in count.map { sum + $0 } }, forKey: value)
            } else {
                byValue.updateValue(count, forKey: value)
            }
        }
        return byValue.map { ChangeStock(value: $0.key, count: $0.value) }.sorted { $0.value < $1.value }
    }

    /// What a payout of `amount` cut short by a restart paid, from the tubes by value when it was
    /// asked (`before`, revised for coins that went in or out other than by paying) and now: what
    /// left them. It cannot tell for a value not counted then or now, or whose tube holds more
    /// now than then (coins put in by hand while vendd was not running); nor at all when more
    /// left than the payout could take (counts lost in a reset, tubes emptied by hand).
    static func paid(before: [ChangeStock], now: [ChangeStock], of amount: Money) -> InterruptedPayoutPart {
        var paid = Money.zero(amount.currency)
        var cannotTell: [String] = []
        let nowByValue = Dictionary(now.map { ($0.value, $0.count) }, uniquingKeysWith: { $1 })
        for tube in before {
            guard let then = tube.count, let counted = nowByValue[tube.value], let left = counted else {
                cannotTell.append("the \(tube.value.decimalString) tube is not counted (full with 0, 255 or more, or no longer in the table)")
                continue
            }
            if left > then {
                cannotTell.append("the \(tube.value.decimalString) tube holds \(left - then) more coins than when the payout began (filled by hand?)")
            } else {
                paid += tube.value * (then - left)
            }
        }
        guard paid <= amount else {
            return InterruptedPayoutPart(
                paid: .zero(amount.currency),
                cannotTell:
                    "its tubes hold \(paid.decimalString) less than when the payout of \(amount.decimalString) began: more than it could have paid (counts lost, or coins taken out by hand)"
            )
        }
        return InterruptedPayoutPart(paid: paid, cannotTell: cannotTell.isEmpty ? nil : cannotTell.joined(separator: "; "))
    }
}
