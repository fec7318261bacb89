/// Reply of `request hopper status` (header 166, Part 2 §3.87).
public struct HopperStatus: Sendable, Equatable {
    /// 0 after power-up or reset; then 1…255, counted once per valid dispense command, 255 → 1.
    public let eventCounter: UInt8
    /// Coins of the current payout still to pay (0 when idle).
    public let coinsRemaining: UInt8
    /// The last payout's coins paid and unpaid.
    public let lastPaid: UInt8
    public let lastUnpaid: UInt8

    public init(eventCounter: UInt8, coinsRemaining: UInt8, lastPaid: UInt8, lastUnpaid: UInt8) {
        self.eventCounter = eventCounter
        self.coinsRemaining = coinsRemaining
        self.lastPaid = lastPaid
        self.lastUnpaid = lastUnpaid
    }

    /// Nil unless exactly the four bytes the spec gives.
    public init?(_ data: [UInt8]) {
        guard data.count == 4 else { return nil }
        self.init(eventCounter: data[0], coinsRemaining: data[1], lastPaid: data[2], lastUnpaid: data[3])
    }

    public var encoded: [UInt8] { [eventCounter, coinsRemaining, lastPaid, lastUnpaid] }

    /// Reset since power-up: what the last payout did can no longer be told.
    public var wasReset: Bool { eventCounter == 0 }
    /// A payout is still running.
    public var isPaying: Bool { coinsRemaining > 0 }
}

/// Reply of `test hopper` (header 163, Part 2 §3.90): one to three status registers, by model
/// (SCH1, SCH2, SCH3). Missing registers read as all clear.
public struct HopperTest: Sendable, Equatable {
    public let registers: [UInt8]

    public init?(_ data: [UInt8]) {
        guard (1...3).contains(data.count) else { return nil }
        registers = data
    }

    private func bit(_ register: Int, _ bit: UInt8) -> Bool {
        register < registers.count && registers[register] & (1 << bit) != 0
    }

    /// Register 3 bit 4: the hopper wants encrypted dispense commands (a proprietary algorithm).
    public var encryptionEnabled: Bool { bit(2, 4) }
    /// Register 1 bit 7.
    public var payoutDisabled: Bool { bit(0, 7) }
    /// Register 1 bit 6.
    public var powerUpDetected: Bool { bit(0, 6) }
    /// Register 3 bit 0: it lost power in the middle of a payout.
    public var powerDownDuringPayout: Bool { bit(2, 0) }

    /// Every flag that is set, by the spec's name, for the log.
    public var flags: [String] {
        Self.names.enumerated().flatMap { register, names in
            names.enumerated().compactMap { bit, name in name.flatMap { self.bit(register, UInt8(bit)) ? $0 : nil } }
        }
    }

    private static let names: [[String?]] = [
        [
            "absolute maximum current exceeded", "payout timeout", "motor reversed during last payout to clear a jam",
            "opto fraud: path blocked during idle", "opto fraud: short-circuit during idle", "opto blocked permanently during payout",
            "power-up detected", "payout disabled",
        ],
        [
            "opto fraud: short-circuit during payout", "single coin payout mode", "use other hopper for change",
            "opto fraud: finger/slider mismatch", "motor reverse limit reached", "inductive coil fault", "NV memory checksum error",
            "PIN number mechanism",
        ],
        [
            "power-down during payout", "unknown coin type paid", "PIN number incorrect", "incorrect cipher key",
            "encryption enabled", nil, nil, nil,
        ],
    ]
}

extension Payload {
    /// `enable hopper` data: 165 (0xA5) enables payout, anything else disables it (Part 2 §3.89).
    public static func hopperEnable(_ enabled: Bool) -> [UInt8] { [enabled ? 0xA5 : 0] }

    /// `dispense hopper coins` data for a hopper without encryption: its serial number's three
    /// bytes (least significant first) as the security bytes, then the count, 1…255 (Part 2
    /// §3.86; the security algorithm of encrypted hoppers is not public). Nil outside 1…255.
    public static func dispense(_ coins: Int, serialNumber: UInt32) -> [UInt8]? {
        guard (1...255).contains(coins) else { return nil }
        return (0..<3).map { UInt8(truncatingIfNeeded: serialNumber >> (8 * $0)) } + [UInt8(coins)]
    }
}

/// Reply of `request payout high / low status` (header 217, Part 2 §3.39): the level sensors of a
/// payout system. Bits 0 and 1 say a sensor is triggered, bits 4 and 5 that it is fitted; the
/// trigger levels are set mechanically, so a hopper says "below the low mark", never a count.
public struct HopperLevel: Sendable, Equatable {
    public let status: UInt8

    public init(status: UInt8) { self.status = status }

    /// Nil unless exactly the one byte the spec gives.
    public init?(_ data: [UInt8]) {
        guard data.count == 1 else { return nil }
        status = data[0]
    }

    public var encoded: [UInt8] { [status] }

    /// Bit 4: a low level sensor is supported and fitted.
    public var hasLowSensor: Bool { status & 0x10 != 0 }
    /// Bit 5: a high level sensor is supported and fitted.
    public var hasHighSensor: Bool { status & 0x20 != 0 }
    /// Bit 0 of a fitted low sensor: fewer coins than its trigger level.
    public var isBelowLow: Bool { hasLowSensor && status & 0x01 != 0 }
    /// Bit 1 of a fitted high sensor: as many coins as its trigger level or more.
    public var isAtOrAboveHigh: Bool { hasHighSensor && status & 0x02 != 0 }

    /// The status byte a hopper with the given sensors sends (a simulator's side).
    public init(lowSensor: Bool, belowLow: Bool, highSensor: Bool, atOrAboveHigh: Bool) {
        status =
            (lowSensor ? 0x10 : 0) | (highSensor ? 0x20 : 0) | (lowSensor && belowLow ? 0x01 : 0)
            | (highSensor && atOrAboveHigh ? 0x02 : 0)
    }
}
