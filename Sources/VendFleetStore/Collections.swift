/// Cash box collections (schema version 3): what each machine counted into its cash box between
/// two collections, per denomination, from its `cash-collected` events; and what the route driver
/// counted in the bag, entered afterwards. Amounts are the machine's exact decimal strings.

/// A coin or a bill value and how many of it.
public struct DenominationCount: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case coin
        case bill
    }

    public let kind: Kind
    public let value: String
    public let count: Int64

    public init(kind: Kind, value: String, count: Int64) {
        self.kind = kind
        self.value = value
        self.count = count
    }
}

/// What a `cash-collected` event says, as columns.
public struct CollectionColumns: Sendable, Equatable {
    /// The machine's collection number (1, 2, 3…).
    public let number: Int64
    public let currency: String
    public let total: String
    /// When the previous collection was made; nil for the machine's first.
    public let since: Int64?
    public let collectedBy: String?
    public let denominations: [DenominationCount]

    public init(number: Int64, currency: String, total: String, since: Int64?, collectedBy: String?, denominations: [DenominationCount]) {
        self.number = number
        self.currency = currency
        self.total = total
        self.since = since
        self.collectedBy = collectedBy
        self.denominations = denominations
    }
}

/// One collection as the store holds it: the machine's count, and the driver's if entered.
public struct CollectionRecord: Sendable, Equatable {
    public let machine: String
    /// The event's sequence number: the collection's key in the store.
    public let seq: Int64
    /// When the cash box was emptied, by the machine's clock.
    public let at: Int64
    public let columns: CollectionColumns
    /// What the driver counted; nil until entered.
    public let counted: CountedCollection?

    public init(machine: String, seq: Int64, at: Int64, columns: CollectionColumns, counted: CountedCollection?) {
        self.machine = machine
        self.seq = seq
        self.at = at
        self.columns = columns
        self.counted = counted
    }

    /// Per denomination (the machine's and the driver's together, coins first, smallest
    /// first): the machine's count, the driver's (nil before an entry), and counted − machine.
    public var comparison: [DenominationComparison] {
        var rows: [DenominationComparison] = []
        for kind in DenominationCount.Kind.allCases {
            let machine = columns.denominations.filter { $0.kind == kind }
            let driver = counted?.denominations.filter { $0.kind == kind } ?? []
            let values = Set(machine.map(\.value) + driver.map(\.value)).sorted { ExactDecimal($0) < ExactDecimal($1) }
            for value in values {
                let machineCount = machine.first { $0.value == value }?.count ?? 0
                let driverCount = counted.map { _ in driver.first { $0.value == value }?.count ?? 0 }
                rows.append(DenominationComparison(kind: kind, value: value, machine: machineCount, counted: driverCount))
            }
        }
        return rows
    }

    /// What the driver counted in total, in the machine's decimal form; nil before an entry.
    public var countedTotal: String? {
        counted.map { ExactDecimal.total($0.denominations, like: columns.total) }
    }

    /// counted − machine, as an amount ("-500", "0.00"); nil before an entry.
    public var difference: String? {
        countedTotal.map { ExactDecimal.difference($0, columns.total) }
    }
}

public struct DenominationComparison: Sendable, Equatable {
    public let kind: DenominationCount.Kind
    public let value: String
    public let machine: Int64
    public let counted: Int64?

    /// counted − machine; nil before the driver's entry.
    public var difference: Int64? { counted.map { $0 - machine } }
}

/// What the route driver entered as counted for one collection.
public struct CountedCollection: Sendable, Equatable {
    public let denominations: [DenominationCount]
    public let enteredBy: String
    /// Milliseconds since the Unix epoch.
    public let enteredAt: Int64

    public init(denominations: [DenominationCount], enteredBy: String, enteredAt: Int64) {
        self.denominations = denominations
        self.enteredBy = enteredBy
        self.enteredAt = enteredAt
    }
}

/// An exact decimal amount as vendd writes it ("1.50", "1200"): digits and their scale.
struct ExactDecimal: Comparable {
    let units: Int64
    let scale: Int

    /// A text that is not an exact decimal reads as zero: the ingest refuses those.
    init(_ text: String) {
        let negative = text.hasPrefix("-")
        let parts = (negative ? text.dropFirst() : Substring(text)).split(separator: ".", omittingEmptySubsequences: false)
        let digits = parts.joined()
        let magnitude = Int64(digits) ?? 0
        units = negative ? -magnitude : magnitude
        scale = parts.count == 2 ? parts[1].count : 0
    }

    init(units: Int64, scale: Int) {
        self.units = units
        self.scale = scale
    }

    func scaled(to target: Int) -> Int64 {
        var value = units
        for _ in scale..<max(scale, target) { value *= 10 }
        return value
    }

    var text: String {
        guard scale > 0 else { return String(units) }
        let magnitude = String(units.magnitude)
        let padded = String(repeating: "0", count: max(0, scale + 1 - magnitude.count)) + magnitude
        return (units < 0 ? "-" : "") + padded.dropLast(scale) + "." + padded.suffix(scale)
    }

    static func < (lhs: ExactDecimal, rhs: ExactDecimal) -> Bool {
        let scale = max(lhs.scale, rhs.scale)
        return lhs.scaled(to: scale) < rhs.scaled(to: scale)
    }

    /// Σ value × count, with the scale of `model` (the machine's total) or of the values if finer.
    static func total(_ counts: [DenominationCount], like model: String) -> String {
        let scale = counts.map { ExactDecimal($0.value).scale }.reduce(ExactDecimal(model).scale, max)
        let units = counts.reduce(Int64(0)) { $0 + ExactDecimal($1.value).scaled(to: scale) * $1.count }
        return ExactDecimal(units: units, scale: scale).text
    }

    static func difference(_ lhs: String, _ rhs: String) -> String {
        let (left, right) = (ExactDecimal(lhs), ExactDecimal(rhs))
        let scale = max(left.scale, right.scale)
        return ExactDecimal(units: left.scaled(to: scale) - right.scaled(to: scale), scale: scale).text
    }
}

/// The collection tables read and the driver's count written, the same statements on both
/// engines (the stores' `collections(of:)` and `recordCount`, and the back office).
public struct CollectionBook {
    let sql: FleetSQL

    public init(_ sql: FleetSQL) { self.sql = sql }

    /// A machine's collections, oldest first, each with the driver's count if entered.
    public func collections(of machine: String) throws -> [CollectionRecord] {
        func int(_ text: String?) -> Int64 { text.flatMap { Int64($0) } ?? 0 }
        let denominations = try sql.rows("SELECT seq, kind, value, count FROM collection_denominations WHERE machine = ?", [.text(machine)]).map {
            (int($0[0]), CollectionRows.denomination($0[1] ?? "", $0[2] ?? "", int($0[3])))
        }
        let counts = try sql.rows(
            "SELECT seq, kind, value, count, entered_by, entered_at FROM collection_counts WHERE machine = ?", [.text(machine)]
        ).map { (int($0[0]), CollectionRows.denomination($0[1] ?? "", $0[2] ?? "", int($0[3])), enteredBy: $0[4] ?? "", enteredAt: int($0[5])) }
        let heads = try sql.rows(
            "SELECT seq, collection, at, since, currency, total, collected_by FROM collections WHERE machine = ? ORDER BY seq", [.text(machine)]
        ).map {
            CollectionRows.Head(
                seq: int($0[0]), number: int($0[1]), at: int($0[2]), since: $0[3].flatMap { Int64($0) }, currency: $0[4] ?? "", total: $0[5] ?? "",
                collectedBy: $0[6])
        }
        return CollectionRows.records(machine: machine, heads: heads, denominations: denominations, counts: counts)
    }

    /// Replaces the driver's count of the collection stored as `seq` of `machine`; throws if
    /// no such collection is stored. Run it in the caller's transaction.
    public func recordCount(machine: String, seq: Int64, counted: CountedCollection) throws {
        guard !(try sql.rows("SELECT 1 FROM collections WHERE machine = ? AND seq = ?", [.text(machine), .integer(seq)])).isEmpty else {
            throw CollectionRows.unknown(machine: machine, seq: seq)
        }
        try sql.rows("DELETE FROM collection_counts WHERE machine = ? AND seq = ?", [.text(machine), .integer(seq)])
        for count in counted.denominations {
            try sql.rows(
                "INSERT INTO collection_counts (machine, seq, kind, value, count, entered_by, entered_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    .text(machine), .integer(seq), .text(count.kind.rawValue), .text(count.value), .integer(count.count), .text(counted.enteredBy),
                    .integer(counted.enteredAt),
                ])
        }
    }
}

/// Rows of the three collection tables put together, the same on both engines.
enum CollectionRows {
    struct Head {
        let seq: Int64
        let number: Int64
        let at: Int64
        let since: Int64?
        let currency: String
        let total: String
        let collectedBy: String?
    }

    /// A kind the store wrote itself; anything else reads as a coin.
    static func denomination(_ kind: String, _ value: String, _ count: Int64) -> DenominationCount {
        DenominationCount(kind: DenominationCount.Kind(rawValue: kind) ?? .coin, value: value, count: count)
    }

    static func unknown(machine: String, seq: Int64) -> FleetStoreError {
        FleetStoreError("no collection of machine \(machine) is stored as event \(seq): pick one from the machine's collections")
    }

    static func records(
        machine: String, heads: [Head], denominations: [(Int64, DenominationCount)],
        counts: [(Int64, DenominationCount, enteredBy: String, enteredAt: Int64)]
    ) -> [CollectionRecord] {
        let machineCounts = Dictionary(grouping: denominations, by: \.0)
        let driverCounts = Dictionary(grouping: counts, by: \.0)
        return heads.map { head in
            let counted = driverCounts[head.seq].flatMap { rows in
                rows.first.map { CountedCollection(denominations: sorted(rows.map(\.1)), enteredBy: $0.enteredBy, enteredAt: $0.enteredAt) }
            }
            return CollectionRecord(
                machine: machine, seq: head.seq, at: head.at,
                columns: CollectionColumns(
                    number: head.number, currency: head.currency, total: head.total, since: head.since, collectedBy: head.collectedBy,
                    denominations: sorted((machineCounts[head.seq] ?? []).map(\.1))),
                counted: counted)
        }
    }

    /// Coins before bills, each smallest first.
    static func sorted(_ counts: [DenominationCount]) -> [DenominationCount] {
        counts.sorted {
            $0.kind != $1.kind ? $0.kind == .coin : ExactDecimal($0.value) < ExactDecimal($1.value)
        }
    }
}
