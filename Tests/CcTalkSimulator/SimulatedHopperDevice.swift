import CcTalk

/// A ccTalk hopper (SCH3-like) as Part 2 §3.81–3.90 describes it, without I/O: a packet in, a
/// packet (or silence) out. It pays one coin per `payOneCoin()` (the test's clock drives it, or
/// `turnMotor()` at a slower pace),
/// can jam after some coins, and can lose power mid-payout (counter back to 0, last payout
/// forgotten). Dispense needs the enable code and its serial number as the security bytes. A low
/// level sensor, if fitted, is triggered below a set number of coins (Part 2 §3.39).
public struct SimulatedHopperDevice: Sendable {
    public struct Settings: Sendable {
        public var address: UInt8 = 3
        public var serialNumber: UInt32 = 7_654_321
        public var coins = 50
        /// Wants encrypted dispense commands (test hopper register 3 bit 4).
        public var encrypted = false
        /// How many turns of the motor (`turnMotor()`) one coin takes: more is a slower hopper.
        public var turnsPerCoin = 1
        /// A low level sensor is fitted and triggered below this many coins; nil: none fitted.
        public var lowLevelTrigger: Int?

        public init() {}
    }

    public var settings: Settings
    public private(set) var counter: UInt8 = 0
    public private(set) var remaining: UInt8 = 0
    public private(set) var paid: UInt8 = 0
    public private(set) var unpaid: UInt8 = 0
    public private(set) var enabled = false
    public private(set) var coins: Int
    /// The next payout stops (a jam) after this many coins.
    public var jamAfter: Int?
    public private(set) var dispenseCommands = 0
    public private(set) var emergencyStops = 0
    private var turns = 0

    public init(settings: Settings = Settings()) {
        self.settings = settings
        coins = settings.coins
    }

    /// The motor turns once: every `turnsPerCoin` turns, `payOneCoin()`.
    public mutating func turnMotor() {
        guard remaining > 0 else { return }
        turns += 1
        guard turns >= settings.turnsPerCoin else { return }
        turns = 0
        payOneCoin()
    }

    /// One coin out, or the payout ends (done, empty or jammed).
    public mutating func payOneCoin() {
        guard remaining > 0 else { return }
        if coins == 0 || jamAfter.map({ Int(paid) >= $0 }) == true {
            unpaid = remaining
            remaining = 0
            jamAfter = nil
            return
        }
        coins -= 1
        paid += 1
        remaining -= 1
        unpaid = remaining
    }

    /// Coins put in by hand (a technician refilling it).
    public mutating func refill(_ added: Int) {
        coins += added
    }

    /// What its level sensors say now.
    public var level: HopperLevel {
        HopperLevel(
            lowSensor: settings.lowLevelTrigger != nil, belowLow: coins < settings.lowLevelTrigger ?? 0,
            highSensor: false, atOrAboveHigh: false)
    }

    /// Power cut: the motor stops, the counter and the last payout are forgotten.
    public mutating func powerCut() {
        counter = 0
        remaining = 0
        paid = 0
        unpaid = 0
        enabled = false
    }

    public mutating func respond(to request: Frame) -> Frame? {
        guard request.destination == settings.address else { return nil }
        guard let header = Header(rawValue: request.header), let data = reply(to: header, request.data) else { return nil }
        return Frame(destination: request.source ?? 1, source: settings.address, header: Header.reply.rawValue, data: data)
    }

    private mutating func reply(to header: Header, _ data: [UInt8]) -> [UInt8]? {
        switch header {
        case .simplePoll: return []
        case .requestEquipmentCategory: return Array("Payout".utf8)
        case .requestSerialNumber:
            return (0..<3).map { UInt8(truncatingIfNeeded: settings.serialNumber >> (8 * $0)) }
        case .testHopper: return [enabled ? 0 : 0x80, 0, settings.encrypted ? 0x10 : 0]
        case .enableHopper:
            guard data.count == 1 else { return nil }
            enabled = data[0] == 0xA5
            return []
        case .requestHopperStatus: return [counter, remaining, paid, unpaid]
        case .requestPayoutHighLowStatus: return level.encoded
        case .dispenseHopperCoins:
            // NAK (no reply data here: silence) unless enabled, idle and with the right security bytes.
            guard enabled, remaining == 0, !settings.encrypted, data.count == 4,
                Array(data.prefix(3)) == Payload.dispense(1, serialNumber: settings.serialNumber)?.prefix(3).map({ $0 }),
                data[3] > 0
            else { return nil }
            dispenseCommands += 1
            counter = counter == 255 ? 1 : counter + 1
            remaining = data[3]
            paid = 0
            unpaid = data[3]
            return [counter]
        case .emergencyStop:
            emergencyStops += 1
            let left = remaining
            unpaid = remaining
            remaining = 0
            return [left]
        default: return nil
        }
    }
}
