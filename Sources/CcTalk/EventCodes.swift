/// Coin-acceptor error and status events: `result A` = 0, code in `result B` (Part 3 Table 2).
public enum AcceptorEventCode {
    /// Whether the coin that caused the event went back to the customer.
    public enum Rejected: String, Sendable { case yes, no, possibly }

    public static func name(_ code: UInt8) -> String {
        if let entry = table[code] { return entry.name }
        switch code {
        case 128...159: return "inhibited coin (type \(code - 127))"
        case 160...191: return "reserved for credit cancelling (\(code))"
        default: return "unknown event code \(code)"
        }
    }

    public static func rejected(_ code: UInt8) -> Rejected {
        if let entry = table[code] { return entry.rejected }
        return (128...159).contains(code) ? .yes : .possibly
    }

    /// Events that are part of normal use: a coin refused because it is bad or inhibited.
    /// Anything else hints at a device problem and counts towards a self-check.
    public static func isRoutine(_ code: UInt8) -> Bool {
        [0, 1, 2, 25].contains(code) || (128...159).contains(code)
    }

    /// The dummy event some devices add after a reset to say they inhibited themselves (§3.27.1).
    public static let inhibitedCoin: UInt8 = 2
    public static let nullEvent: UInt8 = 0

    private static let table: [UInt8: (name: String, rejected: Rejected)] = [
        0: ("null event", .no), 1: ("reject coin", .yes), 2: ("inhibited coin", .yes),
        3: ("multiple window", .yes), 4: ("wake-up timeout", .possibly), 5: ("validation timeout", .possibly),
        6: ("credit sensor timeout", .possibly), 7: ("sorter opto timeout", .no),
        8: ("2nd close coin error", .yes), 9: ("accept gate not ready", .yes),
        10: ("credit sensor not ready", .yes), 11: ("sorter not ready", .yes),
        12: ("reject coin not cleared", .yes), 13: ("validation sensor not ready", .yes),
        14: ("credit sensor blocked", .yes), 15: ("sorter opto blocked", .yes),
        16: ("credit sequence error", .no), 17: ("coin going backwards", .no),
        18: ("coin too fast (over credit sensor)", .no), 19: ("coin too slow (over credit sensor)", .no),
        20: ("C.O.S. mechanism activated (coin-on-string)", .no), 21: ("DCE opto timeout", .possibly),
        22: ("DCE opto not seen", .yes), 23: ("credit sensor reached too early", .no),
        24: ("reject coin (repeated sequential trip)", .yes), 25: ("reject slug", .yes),
        26: ("reject sensor blocked", .no), 27: ("games overload", .no),
        28: ("max. coin meter pulses exceeded", .no), 29: ("accept gate open not closed", .no),
        30: ("accept gate closed not open", .yes), 31: ("manifold opto timeout", .no),
        32: ("manifold opto blocked", .yes), 33: ("manifold not ready", .yes),
        34: ("security status changed", .possibly), 35: ("motor exception", .possibly),
        36: ("swallowed coin", .no), 37: ("coin too fast (over validation sensor)", .yes),
        38: ("coin too slow (over validation sensor)", .yes), 39: ("coin incorrectly sorted", .no),
        40: ("external light attack", .no), 253: ("data block request", .no),
        254: ("coin return mechanism activated (flight deck open)", .no), 255: ("unspecified alarm code", .no),
    ]
}

/// Results of `perform self-check` (header 232; Part 3 Table 3).
public enum FaultCode {
    public static let ok: UInt8 = 0

    public static func name(_ code: UInt8) -> String {
        names[code] ?? "unknown fault code \(code)"
    }

    private static let names: [UInt8: String] = [
        0: "OK", 1: "EEPROM checksum corrupted", 2: "fault on inductive coils", 3: "fault on credit sensor",
        4: "fault on piezo sensor", 5: "fault on reflective sensor", 6: "fault on diameter sensor",
        7: "fault on wake-up sensor", 8: "fault on sorter exit sensors", 9: "NVRAM checksum corrupted",
        10: "coin dispensing error", 11: "low level sensor error", 12: "high level sensor error",
        13: "coin counting error", 14: "keypad error", 15: "button error", 16: "display error",
        17: "coin auditing error", 18: "fault on reject sensor", 19: "fault on coin return mechanism",
        20: "fault on C.O.S. mechanism", 21: "fault on rim sensor", 22: "fault on thermistor",
        23: "payout motor fault", 24: "payout timeout", 25: "payout jammed", 26: "payout sensor fault",
        27: "level sensor error", 28: "personality module not fitted", 29: "personality checksum corrupted",
        30: "ROM checksum mismatch", 31: "missing slave device", 32: "internal comms bad",
        33: "supply voltage outside operating limits", 34: "temperature outside operating limits",
        35: "D.C.E. fault", 36: "fault on bill validation sensor", 37: "fault on bill transport motor",
        38: "fault on stacker", 39: "bill jammed", 40: "RAM test fail", 41: "fault on string sensor",
        42: "accept gate failed open", 43: "accept gate failed closed", 44: "stacker missing",
        45: "stacker full", 46: "flash memory erase fail", 47: "flash memory write fail",
        48: "slave device not responding", 49: "fault on opto sensor", 50: "battery fault",
        51: "door open", 52: "microswitch fault", 53: "RTC fault", 54: "firmware error",
        55: "initialisation error", 56: "supply current outside operating limits",
        57: "forced bootloader mode", 255: "unspecified fault code",
    ]
}
