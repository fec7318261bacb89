/// A cashless reader's embedded age verification: two DIAGNOSTICS commands (EXPANSION 17h FFh)
/// that the reader ACKs at once and answers on a later POLL, with a diagnostic response (FFh)
/// that echoes the command's tag. MDB 4.3 defines them; its text is not to hand, so the bytes
/// follow the integrators' traces: senvend/mdb `age_verification.md` (a payment terminal's raw
/// bus log) and ICT's DCM5 test log (blog.csdn.net/hbstart/article/details/140190380).
///
/// - DRAVP `17 FF 05 06 <age> "DRAVP"`: the age the reader checks for from now on (0: off).
///   Answered `FF 05 06 <status> "DRAVP"`.
/// - DRAVS `17 FF 06 06 00 "DRAVS"`: check the customer now (the reader prompts for an ID).
///   Answered, once the customer has shown one or given up, `FF 06 07 Z4 Z5 "DRAVS"`: Z4 bit 4 set
///   when the customer is at least the age; `00 00` when no age could be read. The samples:
///   `1E 10` and SENVEND's `9F 10` approved, `0E 10` too young.
public enum AgeVerification {
    static let setAgeFunction: UInt8 = 0x05
    static let checkFunction: UInt8 = 0x06
    static let diagnostics: UInt8 = 0xFF
    static let setAgeTag = Array("DRAVP".utf8)
    static let checkTag = Array("DRAVS".utf8)
    /// Z4's "at least the age" bit.
    static let oldEnough: UInt8 = 0x10

    /// EXPANSION's data for DRAVP (after the command byte 17h).
    static func setAge(_ age: UInt8) -> [UInt8] { [diagnostics, setAgeFunction, 0x06, age] + setAgeTag }

    /// EXPANSION's data for DRAVS.
    static let check: [UInt8] = [diagnostics, checkFunction, 0x06, 0x00] + checkTag

    /// What a reader said, read from a diagnostic response's data (after FFh).
    public enum Reply: Equatable, Sendable {
        /// DRAVP taken; `status` as the reader gave it (0 in every trace).
        case ageSet(status: UInt8)
        /// DRAVS answered.
        case checked(Outcome)
    }

    public enum Outcome: Equatable, Sendable {
        /// The customer is at least the age set.
        case oldEnough
        /// An ID was read and the customer is younger.
        case tooYoung
        /// No age could be read (the customer gave up, or the medium carries none).
        case noAge
    }

    /// The reply in a diagnostic response, or nil when it is another diagnostic (a reader's
    /// manufacturer data) or malformed: it is then no answer to an age check.
    public static func reply(diagnostic data: [UInt8]) -> Reply? {
        guard data.count >= 2, Int(data[1]) == data.count - 2 else { return nil }
        switch (data[0], data.count) {
        case (setAgeFunction, 8) where Array(data[3...]) == setAgeTag:
            return .ageSet(status: data[2])
        case (checkFunction, 9) where Array(data[4...]) == checkTag:
            let flags = data[2]
            let card = data[3]
            if flags & oldEnough != 0 { return .checked(.oldEnough) }
            return .checked(flags == 0 && card == 0 ? .noAge : .tooYoung)
        default:
            return nil
        }
    }
}
