/// EVA-DTS events (EA1 and EA2). The layout is EVA-DTS 6.1.1 (December 2012, the copy committed
/// as `EVA-DTS 6.1.1 NEW.pdf` in github.com/nodestark/mdb-esp32-cashless):
///
/// - §2.8 (p.45–51): EA1 carries the date, time and duration of an event, EA2 its counts and
///   whether it is active. An event is sent only while active or if it occurred since the last
///   reset (§2.8.1); only events no longer active are reset (§2.8.2). Example 3 (p.50–51) shows
///   `EA1*EJJ*020624*1500*22` then `EA2*EJJ*1*2**1`: a refrigeration event that began at 15:00,
///   has lasted 22 minutes, once since the last reset, twice in all, active now.
/// - Data dictionary (p.231–232): EA101 event identification, EA102 date (DT: YYMMDD), EA103 time
///   (TM: HHMM), EA104 duration in minutes, EA105 in milliseconds, EA106 user defined; EA201
///   identification, EA202 number since last reset, EA203 number since initialisation, EA204 user
///   defined, EA205 event activity (1 active, 0 or empty inactive), EA206 duration in state 2.
/// - Appendix C (p.278–279, 293–294, 300): codes EJB dispense motor, EJH health timer, EJJ
///   refrigeration, EOA temperature sensor; a product's event takes "_" and the PA101 product
///   number (`EJB_A1`), one of several alike devices "_" and its number (`EJH_2`); a refrigeration
///   system's event of several takes the system's number directly (`EOA1`, Table 15's note).
extension DEXAudit {
    public struct Event: Sendable, Equatable {
        /// EA101/EA201, e.g. `EJH`, `EJB_A1`, `EOA2`.
        public let code: String
        /// When the latest occurrence began: milliseconds since the epoch.
        public let startedAt: Int64
        /// Seconds east of UTC in force at `startedAt`: EA102/EA103 are the machine's local time.
        public let secondsEast: Int
        /// How long the latest occurrence lasted, or has lasted when the audit was made (EA104).
        public let durationMinutes: Int
        public let sinceReset: Int
        public let sinceInitialisation: Int
        public let active: Bool

        public init(
            code: String, startedAt: Int64, secondsEast: Int = 0, durationMinutes: Int, sinceReset: Int, sinceInitialisation: Int,
            active: Bool
        ) {
            self.code = code
            self.startedAt = startedAt
            self.secondsEast = secondsEast
            self.durationMinutes = durationMinutes
            self.sinceReset = sinceReset
            self.sinceInitialisation = sinceInitialisation
            self.active = active
        }

        /// Sent only active or new since the last reset (EVA-DTS §2.8.1: states 2 and 3).
        public var isReported: Bool { active || sinceReset > 0 }

        /// `EA1*<code>*<YYMMDD>*<HHMM>*<minutes>` and `EA2*<code>*<since reset>*<since init>**<1|0>`.
        var segments: [[String]] {
            let (date, time) = DEXDate.fields(millisecondsSinceEpoch: startedAt, secondsEast: secondsEast)
            return [
                ["EA1", code, date, time, String(durationMinutes)],
                ["EA2", code, String(sinceReset), String(sinceInitialisation), "", active ? "1" : "0"],
            ]
        }
    }

    /// The EVA-DTS event codes vendd reports (Appendix C).
    public enum EventCode {
        /// EJH: the zone's health rule was violated and its food is out of service.
        public static func healthTimer(zone number: Int?) -> String { "EJH" + (number.map { "_\($0)" } ?? "") }
        /// EJJ: the cooling unit does not cool down to its temperature.
        public static func refrigeration(zone number: Int?) -> String { "EJJ" + (number.map { "_\($0)" } ?? "") }
        /// EOA: a temperature sensor failed or reads wrong; Table 15 appends the system's number.
        public static func temperatureSensor(zone number: Int?) -> String { "EOA" + (number.map { String($0) } ?? "") }
        /// EJB: the selection's dispense motor (jammed, not home, missing).
        public static func dispenseMotor(selection: String) -> String { "EJB_" + selection }
    }
}

/// EVA-DTS dates and times (§2.3.2.1): `YYMMDD` and `HHMM` on the 24-hour clock.
public enum DEXDate {
    public static func fields(millisecondsSinceEpoch: Int64, secondsEast: Int) -> (date: String, time: String) {
        let seconds = millisecondsSinceEpoch.floorDivided(by: 1_000) + Int64(secondsEast)
        let days = seconds.floorDivided(by: 86_400)
        let minuteOfDay = (seconds - days * 86_400) / 60
        let (year, month, day) = civil(daysSinceEpoch: days)
        return (two(year % 100) + two(month) + two(day), two(Int(minuteOfDay / 60)) + two(Int(minuteOfDay % 60)))
    }

    private static func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

    /// The proleptic Gregorian date of a day number (days since 1970-01-01), by Howard
    /// Hinnant's `civil_from_days`.
    static func civil(daysSinceEpoch: Int64) -> (year: Int, month: Int, day: Int) {
        let z = daysSinceEpoch + 719_468
        let era = z.floorDivided(by: 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }
}

extension Int64 {
    fileprivate func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
