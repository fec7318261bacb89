extension StatusReport {
    /// One temperature zone as its controller and the machine see it. Temperatures are exact
    /// decimal degrees Celsius ("4.5"); instants are milliseconds since the Unix epoch.
    public struct Zone: Codable, Sendable, Equatable {
        public let id: String
        /// cold, hot or ambient.
        public let kind: String
        /// The zone's reading (its worst sensor); absent while a sensor is faulty or before the first read.
        public let temperature: String?
        /// Why the sensors give no temperature.
        public let sensorFault: String?
        public let setPoint: String?
        /// The compressor (cold) or heater (hot); absent for a zone without one.
        public let relayOn: Bool?
        /// idle, defrosting or dripping.
        public let defrost: String
        public let doorOpen: Bool
        /// Inside a recovery window (door close, defrost, power-on, service): the health timer waits.
        public let recovering: Bool
        /// Past the health limit outside a recovery window: since when, and the worst reached.
        public let excursionSince: Int64?
        public let excursionWorst: String?
        /// The latched food-safety lock; absent while the zone is healthy.
        public let lock: Lock?

        public init(
            id: String, kind: String, temperature: String?, sensorFault: String?, setPoint: String?, relayOn: Bool?, defrost: String,
            doorOpen: Bool, recovering: Bool, excursionSince: Int64?, excursionWorst: String?, lock: Lock?
        ) {
            self.id = id
            self.kind = kind
            self.temperature = temperature
            self.sensorFault = sensorFault
            self.setPoint = setPoint
            self.relayOn = relayOn
            self.defrost = defrost
            self.doorOpen = doorOpen
            self.recovering = recovering
            self.excursionSince = excursionSince
            self.excursionWorst = excursionWorst
            self.lock = lock
        }
    }

    /// A zone's health lock: why, since when the condition held, when it latched, the worst reached.
    public struct Lock: Codable, Sendable, Equatable {
        public let cause: String
        public let since: Int64
        public let lockedAt: Int64
        public let worst: String?

        public init(cause: String, since: Int64, lockedAt: Int64, worst: String?) {
            self.cause = cause
            self.since = since
            self.lockedAt = lockedAt
            self.worst = worst
        }
    }
}
