#if canImport(Glibc)
    import Glibc
#endif

/// Dates as a technician types and reads them: local time unless an offset is given. The C
/// library's calendar (timegm, gmtime_r, localtime_r) rather than Foundation's, which would
/// bring ICU into vendctl.
public enum DateText {
    /// What `parse` accepts, for error messages and `--help`.
    public static let acceptedFormats = "YYYY-MM-DD, YYYY-MM-DDTHH:MM or YYYY-MM-DD HH:MM[:SS], local time unless followed by Z or ±HH:MM"

    /// Where a date's fields are read: the system's local time or a fixed offset from UTC.
    public enum Zone: Sendable, Equatable {
        /// The system's time zone (TZ, else /etc/localtime), daylight saving time included.
        case local
        /// Seconds east of UTC.
        case offset(seconds: Int)

        public static let utc = Zone.offset(seconds: 0)

        /// Seconds east of UTC in force at `seconds` since the epoch.
        func secondsEast(at seconds: Int64) -> Int64 {
            switch self {
            case .offset(let offset): return Int64(offset)
            case .local:
                var time = time_t(seconds)
                var fields = tm()
                guard localtime_r(&time, &fields) != nil else { return 0 }
                return Int64(fields.tm_gmtoff)
            }
        }
    }

    public struct Invalid: Error, CustomStringConvertible {
        public let text: String
        public init(text: String) { self.text = text }
        public var description: String { "'\(text)' is not a date; use \(DateText.acceptedFormats)" }
    }

    /// Milliseconds since the Unix epoch for a date such as `2025-03-01`, `2025-03-01T09:30` or
    /// `2025-03-01 09:30:15+09:00`. A date alone means its midnight.
    public static func parse(_ text: String, timeZone: Zone = .local) throws(Invalid) -> Int64 {
        var rest = Substring(text)
        func number(_ digits: Int) -> Int? {
            let prefix = rest.prefix(digits)
            guard prefix.count == digits, prefix.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            rest = rest.dropFirst(digits)
            return Int(prefix)
        }
        func skip(_ character: Character) -> Bool {
            guard rest.first == character else { return false }
            rest = rest.dropFirst()
            return true
        }
        guard let year = number(4), skip("-"), let month = number(2), skip("-"), let day = number(2) else {
            throw Invalid(text: text)
        }
        var hour = 0, minute = 0, second = 0
        if skip("T") || skip(" ") {
            guard let h = number(2), skip(":"), let m = number(2) else { throw Invalid(text: text) }
            hour = h
            minute = m
            if skip(":") {
                guard let s = number(2) else { throw Invalid(text: text) }
                second = s
            }
        }
        var zone = timeZone
        if skip("Z") {
            zone = .utc
        } else if let sign = rest.first, sign == "+" || sign == "-" {
            rest = rest.dropFirst()
            guard let h = number(2), skip(":"), let m = number(2), h < 24, m < 60 else { throw Invalid(text: text) }
            zone = .offset(seconds: (sign == "+" ? 1 : -1) * (h * 3600 + m * 60))
        }
        guard rest.isEmpty else { throw Invalid(text: text) }
        let typed = Fields(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        // The fields as if in UTC, moved by the zone's offset a day before and a day after: where
        // the clocks went back the time exists twice (the earlier is taken, as Foundation's
        // calendar took it), where they went forward not at all, and timegm rolls 2025-02-30
        // over into March. Reading the fields back tells which candidates are the typed time.
        let asUTC = typed.secondsAsUTC
        let candidates = [-86_400, 86_400].map { asUTC - zone.secondsEast(at: asUTC + $0) }
        guard let seconds = candidates.filter({ Fields($0, zone) == typed }).min() else { throw Invalid(text: text) }
        return seconds * 1000
    }

    /// `2025-03-01 09:30` (or with seconds) in `timeZone`.
    public static func format(_ milliseconds: Int64, seconds: Bool = false, timeZone: Zone = .local) -> String {
        // Whole seconds, rounded down (towards the past for dates before 1970 too).
        let whole = milliseconds / 1000 - (milliseconds % 1000 < 0 ? 1 : 0)
        let c = Fields(whole, timeZone)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let minutes = "\(c.year)-\(two(c.month))-\(two(c.day)) \(two(c.hour)):\(two(c.minute))"
        return seconds ? minutes + ":" + two(c.second) : minutes
    }

    /// A date's fields on the proleptic Gregorian calendar.
    struct Fields: Equatable {
        var year, month, day, hour, minute, second: Int

        /// Seconds since the epoch were these fields UTC's; out-of-range fields roll over.
        var secondsAsUTC: Int64 {
            var c = tm()
            c.tm_year = Int32(year - 1900)
            c.tm_mon = Int32(month - 1)
            c.tm_mday = Int32(day)
            c.tm_hour = Int32(hour)
            c.tm_min = Int32(minute)
            c.tm_sec = Int32(second)
            return Int64(timegm(&c))
        }
    }
}

extension DateText.Fields {
    /// The fields of `seconds` since the epoch in `zone`.
    init(_ seconds: Int64, _ zone: DateText.Zone) {
        var time = time_t(seconds + zone.secondsEast(at: seconds))
        var c = tm()
        _ = gmtime_r(&time, &c)
        self.init(
            year: Int(c.tm_year) + 1900, month: Int(c.tm_mon) + 1, day: Int(c.tm_mday), hour: Int(c.tm_hour), minute: Int(c.tm_min),
            second: Int(c.tm_sec))
    }
}
