extension DEXAudit {
    /// The figures since the last reset: the last DEX read a handheld acknowledged.
    public struct Interim: Sendable, Equatable {
        /// Per selection id; a selection not listed sold nothing since the reset.
        public let selections: [Selection]
        public let cash: Cash

        public init(selections: [Selection], cash: Cash) {
            self.selections = selections
            self.cash = cash
        }

        public var paidVends: Int { selections.reduce(0) { $0 + $1.vends } }
        public var paidValue: Int64 { selections.reduce(0) { $0 + $1.value } }

        func selection(_ id: String) -> Selection? { selections.first { $0.id == id } }
    }

    /// The interim figures the file reports: the whole-life ones for a machine never read.
    public var interimOrTotal: Interim { sinceReset ?? Interim(selections: selections, cash: cash) }
}
