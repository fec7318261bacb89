import VendFleetStore

/// What a route driver typed as counted for one collection, checked: a whole number from 0 to
/// `largestCount` for each field, named `coin:0.50` or `bill:5.00`, of a denomination the machine
/// counts (in any of its collections); an empty field is 0.
enum CashEntry {
    static let largestCount: Int64 = 1_000_000

    /// The form field of a denomination.
    static func field(_ kind: DenominationCount.Kind, _ value: String) -> String { "\(kind.rawValue):\(value)" }

    /// The denominations a machine counts, from all its collections, coins then bills, smallest first.
    static func known(_ collections: [CollectionRecord]) -> [(kind: DenominationCount.Kind, value: String)] {
        var seen: Set<String> = []
        var known: [DenominationCount] = []
        for count in collections.flatMap(\.columns.denominations) where seen.insert(field(count.kind, count.value)).inserted {
            known.append(DenominationCount(kind: count.kind, value: count.value, count: 0))
        }
        // Amounts have at most 4 digits after the point.
        func order(_ count: DenominationCount) -> (Int, Int64) { (count.kind == .coin ? 0 : 1, Amount(count.value)?.units(at: 4) ?? .max) }
        return known.sorted { order($0) < order($1) }.map { ($0.kind, $0.value) }
    }

    /// The counts, or why not (a sentence for the driver). The total they make, and its
    /// difference from `machineTotal`, are checked to fit in 64 bits at the finest scale of the
    /// values and the total, as `CollectionRecord.countedTotal` computes them.
    static func parse(
        _ form: [String: String], known: [(kind: DenominationCount.Kind, value: String)], machineTotal: String
    ) -> Result<[DenominationCount], OfficeRecords.Refusal> {
        let names = Set(known.map { field($0.kind, $0.value) })
        for name in form.keys.sorted() where (name.hasPrefix("coin:") || name.hasPrefix("bill:")) && !names.contains(name) {
            let list = known.map { "\($0.kind.rawValue) \($0.value)" }.joined(separator: ", ")
            return .failure(.init(description: "\(name.replacingFirstColon) is not a denomination this machine counts (\(list))"))
        }
        guard form.keys.contains(where: { names.contains($0) }) else {
            return .failure(.init(description: "enter the counted number of each coin and bill (0 for none)"))
        }
        guard let total = Amount(machineTotal) else {
            return .failure(.init(description: "the machine's total '\(machineTotal)' is not an amount the office can compare"))
        }
        let values = known.map { Amount($0.value) }
        let scale = values.reduce(total.digits) { max($0, $1?.digits ?? 0) }
        var counts: [DenominationCount] = []
        var sum: Int64 = 0
        for ((kind, value), amount) in zip(known, values) {
            let text = form[field(kind, value)] ?? ""
            guard text.count <= 7, text.allSatisfy({ $0.isASCII && $0.isNumber }), let count = text.isEmpty ? 0 : Int64(text) else {
                return .failure(.init(description: "\(kind.rawValue) \(value): '\(text)' is not a whole number of \(kind.rawValue)s (0 or more)"))
            }
            guard count <= largestCount else {
                return .failure(.init(description: "\(kind.rawValue) \(value): \(count) is more than \(largestCount) \(kind.rawValue)s"))
            }
            // A machine's denomination could be large enough for the total to overflow.
            guard let units = amount?.checkedUnits(at: scale), case let (part, false) = units.multipliedReportingOverflow(by: count),
                case let (next, false) = sum.addingReportingOverflow(part), total.checkedUnits(at: scale) != nil
            else { return .failure(.init(description: "the total of these counts is too large to be a cash box's")) }
            sum = next
            counts.append(DenominationCount(kind: kind, value: value, count: count))
        }
        return .success(counts)
    }
}

extension String {
    /// "coin:0.50" as "coin 0.50".
    fileprivate var replacingFirstColon: String {
        guard let colon = firstIndex(of: ":") else { return self }
        return self[..<colon] + " " + self[index(after: colon)...]
    }
}
