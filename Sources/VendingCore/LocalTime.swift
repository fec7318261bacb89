/// A day of the week, as time bands name them.
public enum Weekday: Int, Hashable, Comparable, Sendable, Codable, CaseIterable, CustomStringConvertible {
    case sunday = 0, monday, tuesday, wednesday, thursday, friday, saturday

    public static func < (lhs: Weekday, rhs: Weekday) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The day before (a band that crosses midnight began on it).
    public var previous: Weekday { Weekday(rawValue: (rawValue + 6) % 7)! }

    /// The day after (a band that crosses midnight ends on it).
    public var next: Weekday { Weekday(rawValue: (rawValue + 1) % 7)! }

    /// The three letters the configuration file uses: `mon`, `tue`, …
    public var description: String { ["sun", "mon", "tue", "wed", "thu", "fri", "sat"][rawValue] }
}

/// A wall-clock reading in the machine's time zone: what a time band is judged by.
public struct LocalTime: Hashable, Sendable, CustomStringConvertible {
    public let weekday: Weekday
    /// Minutes since local midnight, 0 to 1439.
    public let minuteOfDay: Int

    public init(weekday: Weekday, minuteOfDay: Int) {
        self.weekday = weekday
        self.minuteOfDay = minuteOfDay
    }

    public var description: String { "\(weekday) \(Self.clock(minuteOfDay))" }

    /// `HH:MM`, as the file writes a band's ends.
    public static func clock(_ minutes: Int) -> String {
        let hours = minutes / 60
        let rest = minutes % 60
        return (hours < 10 ? "0" : "") + "\(hours):" + (rest < 10 ? "0" : "") + "\(rest)"
    }
}

/// The machine's time zone as the system's tz database gives it (a TZif file's transitions,
/// read by the configuration loader): the core turns an instant into local time with no clock
/// and no C call, so a replayed input meets the same band.
public struct TimeZoneRules: Hashable, Sendable, Codable {
    /// The zone's name (`Europe/Berlin`), or the file it was read from.
    public let name: String
    /// The UTC offset in seconds before the first transition.
    public let initialOffset: Int
    /// Each change of offset: from `at` (seconds since the epoch) on, `offset` seconds east of UTC.
    /// Ascending; past the last one its offset holds.
    public let transitions: [Transition]

    public struct Transition: Hashable, Sendable, Codable {
        public let at: Int64
        public let offset: Int

        public init(at: Int64, offset: Int) {
            self.at = at
            self.offset = offset
        }
    }

    public init(name: String, initialOffset: Int, transitions: [Transition]) {
        self.name = name
        self.initialOffset = initialOffset
        self.transitions = transitions.sorted { $0.at < $1.at }
    }

    public static let utc = TimeZoneRules(name: "UTC", initialOffset: 0, transitions: [])

    /// Seconds east of UTC at `instant`.
    public func offset(at instant: Instant) -> Int {
        let seconds = Self.floorDivide(instant.millisecondsSinceEpoch, 1_000)
        // The last transition at or before `seconds` (binary search: a zone has a few hundred).
        var low = 0
        var high = transitions.count
        while low < high {
            let middle = (low + high) / 2
            if transitions[middle].at <= seconds { low = middle + 1 } else { high = middle }
        }
        return low == 0 ? initialOffset : transitions[low - 1].offset
    }

    /// The local weekday and time of day at `instant`.
    public func localTime(at instant: Instant) -> LocalTime {
        let seconds = Self.floorDivide(instant.millisecondsSinceEpoch, 1_000) + Int64(offset(at: instant))
        let days = Self.floorDivide(seconds, 86_400)
        let secondOfDay = seconds - days * 86_400
        // 1 January 1970 was a Thursday.
        let weekday = Weekday(rawValue: Int((days % 7 + 7 + 4) % 7))!
        return LocalTime(weekday: weekday, minuteOfDay: Int(secondOfDay / 60))
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        value >= 0 ? value / divisor : -((-value + divisor - 1) / divisor)
    }
}
