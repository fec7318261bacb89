/// `vendctl temps`: each zone's recent temperatures, one sample per interval (a minute), oldest
/// first. Temperatures are exact decimal degrees Celsius ("4.5"); `temperatureUnit` says how the
/// machine's file asks to show them to people. Kept in vendd's memory: a restart starts afresh.
public struct TempsReport: Codable, Sendable, Equatable {
    public struct Sample: Codable, Sendable, Equatable {
        /// The start of the interval, milliseconds since the Unix epoch.
        public let at: Int64
        /// Lowest, highest and last good reading in the interval; absent when none was good.
        public let lowest: String?
        public let highest: String?
        public let last: String?
        /// Reads in the interval that gave no temperature.
        public let faults: Int

        public init(at: Int64, lowest: String?, highest: String?, last: String?, faults: Int) {
            self.at = at
            self.lowest = lowest
            self.highest = highest
            self.last = last
            self.faults = faults
        }
    }

    public struct Zone: Codable, Sendable, Equatable {
        public let id: String
        public let kind: String
        public let intervalSeconds: Int
        public let samples: [Sample]

        public init(id: String, kind: String, intervalSeconds: Int, samples: [Sample]) {
            self.id = id
            self.kind = kind
            self.intervalSeconds = intervalSeconds
            self.samples = samples
        }
    }

    /// `C` or `F`.
    public let temperatureUnit: String
    public let zones: [Zone]

    public init(temperatureUnit: String, zones: [Zone]) {
        self.temperatureUnit = temperatureUnit
        self.zones = zones
    }
}
