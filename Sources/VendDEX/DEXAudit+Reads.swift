/// EA3, the reads of the audit unit (EVA-DTS 6.1.1 p.39 and the data dictionary, p.231–232):
/// EA301 "number of times that the audit unit has been interrogated with reset", EA302/EA303
/// "date/time of this interrogation", EA304 "the terminal's identification data", EA305/EA306
/// "date/time of the previous interrogation", EA307 "the identification data of the terminal
/// that performed the previous interrogation" (at most 12 characters), EA309 "number of reads
/// with or without reset since initialization" and EA310 "number of resets since initialization
/// (Not Event Resets)", both M ("Mandatory (must be transferred)", p.41) and non-resettable.
///
/// The counts are of reads completed before this one: this read is counted once its handheld
/// acknowledged it, so a read that fails halfway never shows in a later count.
extension DEXAudit {
    public struct Reads: Sendable, Equatable {
        public var reads = 0
        public var readsWithReset = 0
        public var resets = 0
        /// This read: when the audit was made, and who asked (nil: `vendctl audit`, no handheld).
        public var now: Int64?
        public var nowSecondsEast = 0
        public var terminal: String?
        /// The previous completed read.
        public var last: Read?

        public struct Read: Sendable, Equatable {
            public let at: Int64
            public let secondsEast: Int
            public let terminal: String

            public init(at: Int64, secondsEast: Int, terminal: String) {
                self.at = at
                self.secondsEast = secondsEast
                self.terminal = terminal
            }
        }

        public init() {}

        /// `EA3*<EA301>*<EA302>*<EA303>*<EA304>*<EA305>*<EA306>*<EA307>**<EA309>*<EA310>`.
        var segment: [String] {
            let this = now.map { DEXDate.fields(millisecondsSinceEpoch: $0, secondsEast: nowSecondsEast) }
            let previous = last.map { DEXDate.fields(millisecondsSinceEpoch: $0.at, secondsEast: $0.secondsEast) }
            return [
                "EA3", String(readsWithReset), this?.date ?? "", this?.time ?? "", String((terminal ?? "").prefix(20)),
                previous?.date ?? "", previous?.time ?? "", String((last?.terminal ?? "").prefix(12)), "", String(reads), String(resets),
            ]
        }
    }
}
