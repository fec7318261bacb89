extension SalesReport {
    /// The figures since the last DEX read a handheld acknowledged: the audit's "since last
    /// reset" elements. Exact decimal amounts, like the whole-life ones.
    public struct Interim: Codable, Sendable, Equatable {
        public struct Slot: Codable, Sendable, Equatable {
            public let slot: String
            public let sold: SalesFigures

            public init(slot: String, sold: SalesFigures) {
                self.slot = slot
                self.sold = sold
            }
        }

        /// Slots that sold since the read.
        public let slots: [Slot]
        public let total: SalesFigures
        public let coinsIn: String
        public let cash: CashFigures
        /// `total` by how it was paid, as `SalesReport.byPayment`.
        public var byPayment: [String: SalesFigures]? = nil

        public init(slots: [Slot], total: SalesFigures, coinsIn: String, cash: CashFigures) {
            self.slots = slots
            self.total = total
            self.coinsIn = coinsIn
            self.cash = cash
        }
    }
}
