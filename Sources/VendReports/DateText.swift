import Foundation

/// Dates as a technician types and reads them: local time unless an offset is given.
public enum DateText {
    /// What `parse` accepts, for error messages and `--help`.
    public static let acceptedFormats = "YYYY-MM-DD, YYYY-MM-DDTHH:MM or YYYY-MM-DD HH:MM[:SS], local time unless followed by Z or ±HH:MM"

    public struct Invalid: Error, CustomStringConvertible {
        public let text: String
        public init(text: String) { self.text = text }
        public var description: String { "'\(text)' is not a date; use \(DateText.acceptedFormats)" }
    }

    /// Milliseconds since the Unix epoch for a date such as `2025-03-01`, `2025-03-01T09:30` or
    /// `2025-03-01 09:30:15+09:00`. A date alone means its midnight.
    public static func parse(_ text: String, timeZone: TimeZone = .current) throws(Invalid) -> Int64 {
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
            zone = TimeZone(secondsFromGMT: 0)!
        } else if let sign = rest.first, sign == "+" || sign == "-" {
            rest = rest.dropFirst()
            guard let h = number(2), skip(":"), let m = number(2), h < 24, m < 60 else { throw Invalid(text: text) }
            zone = TimeZone(secondsFromGMT: (sign == "+" ? 1 : -1) * (h * 3600 + m * 60))!
        }
        guard rest.isEmpty else { throw Invalid(text: text) }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        // Calendar rolls 2025-02-30 over into March: reading the fields back catches that.
        guard let date = calendar.date(from: components) else { throw Invalid(text: text) }
        let back = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        guard [back.year, back.month, back.day, back.hour, back.minute, back.second] == [year, month, day, hour, minute, second] else {
            throw Invalid(text: text)
        }
        return Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    /// `2025-03-01 09:30` (or with seconds) in `timeZone`.
    public static func format(_ milliseconds: Int64, seconds: Bool = false, timeZone: TimeZone = .current) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ value: Int?) -> String { value.map { $0 < 10 ? "0\($0)" : "\($0)" } ?? "??" }
        let minutes = "\(c.year ?? 0)-\(two(c.month))-\(two(c.day)) \(two(c.hour)):\(two(c.minute))"
        return seconds ? minutes + ":" + two(c.second) : minutes
    }
}
