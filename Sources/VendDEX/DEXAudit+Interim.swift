extension DEXAudit {
    /// The figures since the last reset: the last DEX read a handheld acknowledged.
    public struct Interim: Sendable, Equatable {
        /// Per selection id; a selection not listed sold nothing since the reset.
        public let selections: [Selection]
        public let cash: Cash
        public var byPayment: [String: Sales] = [:]

        public init(selections: [Selection], cash: Cash, byPayment: [String: Sales] = [:]) {
            self.selections = selections
            self.cash = cash
            self.byPayment = byPayment
        }

        public var paidVends: Int { selections.reduce(0) { $0 + $1.vends } }
        public var paidValue: Int64 { selections.reduce(0) { $0 + $1.value } }

        func selection(_ id: String) -> Selection? { selections.first { $0.id == id } }
    }

    /// The interim figures the file reports: the whole-life ones for a machine never read.
    public var interimOrTotal: Interim { sinceReset ?? Interim(selections: selections, cash: cash, byPayment: byPayment) }

    /// The sales paid by `payment`; with no split known, cash is every paid vend.
    static func sales(_ payment: String, in byPayment: [String: Sales], paidVends: Int, paidValue: Int64) -> Sales? {
        guard !byPayment.isEmpty else { return payment == "cash" ? Sales(vends: paidVends, value: paidValue) : nil }
        return byPayment[payment]
    }
}
