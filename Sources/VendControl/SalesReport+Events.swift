#if canImport(Glibc)
    import Glibc
#endif

extension SalesReport {
    /// An incident as the DEX audit reports it (EA1/EA2): `vendctl report --json` shows them, and
    /// `vendctl audit` and the fleet's `dex` command write them.
    public struct Event: Codable, Sendable, Equatable {
        /// The EVA-DTS event code: `EJH`, `EJJ_2`, `EOA1`, `EJB_A1`.
        public let code: String
        /// `health-lock`, `over-limit`, `sensor-fault` or `motor-fault`.
        public let kind: String
        /// The zone or slot.
        public let subject: String
        /// What the latest occurrence was ("jammed", "sensor missing").
        public let detail: String
        /// Occurrences since the machine was new, and since the last DEX read with reset.
        public let occurrences: Int
        public let sinceLastRead: Int
        public let active: Bool
        /// When the latest occurrence began, and ended (absent while active): milliseconds since the epoch.
        public let startedAt: Int64
        public let endedAt: Int64?
        /// Of the latest occurrence, until it ended or until the report was made.
        public let durationMinutes: Int

        public init(
            code: String, kind: String, subject: String, detail: String, occurrences: Int, sinceLastRead: Int, active: Bool,
            startedAt: Int64, endedAt: Int64?, durationMinutes: Int
        ) {
            self.code = code
            self.kind = kind
            self.subject = subject
            self.detail = detail
            self.occurrences = occurrences
            self.sinceLastRead = sinceLastRead
            self.active = active
            self.startedAt = startedAt
            self.endedAt = endedAt
            self.durationMinutes = durationMinutes
        }
    }

    /// Seconds east of UTC in this system's time zone at `milliseconds` (TZ, else /etc/localtime):
    /// the DEX audit's dates are the machine's local time.
    public static func localSecondsEast(at milliseconds: Int64) -> Int {
        var time = time_t(milliseconds / 1_000)
        var fields = tm()
        guard localtime_r(&time, &fields) != nil else { return 0 }
        return Int(fields.tm_gmtoff)
    }
}
