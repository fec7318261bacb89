extension SalesReport {
    /// The DEX port's reads for the audit's EA3 (EVA-DTS 6.1.1 p.39): counts since
    /// initialisation, when this report was made, and the last read.
    public struct DEXReads: Codable, Sendable, Equatable {
        /// Reads completed, with or without reset (EA309); of them, those with reset (EA301).
        public let reads: Int
        public let readsWithReset: Int
        /// Interval resets, by a read or by a handheld's SD105 RESET (EA310).
        public let resets: Int
        /// When the report was made: "this readout" (EA302, EA303).
        public let at: Int64
        /// The last completed read (EA305–EA307).
        public let lastReadAt: Int64?
        public let lastTerminal: String?

        public init(reads: Int, readsWithReset: Int, resets: Int, at: Int64, lastReadAt: Int64?, lastTerminal: String?) {
            self.reads = reads
            self.readsWithReset = readsWithReset
            self.resets = resets
            self.at = at
            self.lastReadAt = lastReadAt
            self.lastTerminal = lastTerminal
        }
    }
}
