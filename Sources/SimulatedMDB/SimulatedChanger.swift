import MDB

/// A level-3 coin changer written from MDB §5: four KRW coin types (10/50/100/500 won,
/// scaling 10) with tubes, DISPENSE and ALTERNATIVE PAYOUT, and faults on demand.
public final class SimulatedChanger: SimulatedPeripheral {
    public let address = MDBPeripheral.coinChanger

    public struct Faults: Sendable, Equatable {
        /// Answers nothing at all (unpowered, cable cut).
        public var silent = false
        /// Each payout keeps "payout busy" on this many extra POLLs.
        public var payoutBusyPolls = 0
        /// The next payout jams after its first coin (status TUBE JAM, tube shown full with 0).
        public var tubeJam = false
        /// DISPENSE is carried out but its ACK is lost.
        public var dropDispenseAck = false
        /// DISPENSE pays as a motor does: one coin leaves the tubes per POLL, "payout busy"
        /// until the last; a reset stops it with the rest still in the tubes.
        public var slowPayout = false
        /// With `clock` set: each coin of a payout (DISPENSE or ALTERNATIVE PAYOUT) takes this
        /// long to leave its tube, as a motor pays coin by coin. "Payout busy" lasts until the
        /// last coin; a reset stops the payout with the rest still in the tubes.
        public var coinInterval: Duration?
        /// With `coinInterval`: PAYOUT VALUE POLL says `00` until the payout ends (a changer
        /// that counts its coins only at the end of a cycle), instead of the value paid so far.
        public var valueOnlyAtEnd = false
        public init() {}
    }

    /// The time, for a payout paced by `faults.coinInterval`.
    public var clock: (() -> ContinuousClock.Instant)?

    public var faults = Faults()
    public var level: UInt8 = 3
    public var setup = ChangerSetup(
        level: 3, currency: MDBCurrencyCode(raw: 0x1410), scalingFactor: 10, decimalPlaces: 0,
        routableToTubes: [0, 1, 2, 3], coinCredits: [1, 5, 10, 50])
    public var tubes: [Int] = [0, 0, 0, 0] + [Int](repeating: 0, count: 12)
    public var tubeCapacity = 100
    public private(set) var acceptMask: [Int] = []
    public private(set) var featuresEnabled = ChangerFeatures()
    /// Coins that went in (tubes or cash box): what the machine must credit, once each.
    public private(set) var coinsTaken: [Int] = []
    /// Coins that left through payouts, by type.
    public private(set) var coinsPaid: [Int] = []
    public private(set) var pollCount = 0

    private var queue = ActivityQueue<ChangerActivity>()
    private var busyPolls = 0
    /// Coin types still to leave the tubes, one per POLL (`slowPayout`).
    private var paying: [Int] = []
    private var jammedTube: Int?
    private var lastPayout: [UInt8]?
    private var valuePolls: [UInt8] = []
    /// A payout paced by the clock: coin types still to leave, when the next one does, and
    /// (for ALTERNATIVE PAYOUT) what it paid so far and since the last value poll.
    private var timed: TimedPayout?

    private struct TimedPayout {
        var coins: [Int]
        var nextCoinAt: ContinuousClock.Instant
        var alternative: Bool
        var status = [UInt8](repeating: 0, count: 16)
        var valueSincePoll = 0
    }

    public init() { busReset() }

    public func value(ofType type: Int) -> Int { Int(setup.value(ofType: type) ?? 0) }

    /// A customer's coin: into the tube if it is enabled and the tube has room, else the cash box.
    @discardableResult
    public func insert(type: Int) -> CoinRouting {
        guard acceptMask.contains(type), !faults.silent else {
            queue.append(.deposited(type: type, routing: .rejected, tubeCount: UInt8(min(tubes[type], 255))))
            return .rejected
        }
        let toTube = setup.routableToTubes.contains(type) && tubes[type] < tubeCapacity
        if toTube { tubes[type] += 1 }
        coinsTaken.append(type)
        let routing: CoinRouting = toTube ? .tubes : .cashBox
        queue.append(.deposited(type: type, routing: routing, tubeCount: UInt8(min(tubes[type], 255))))
        return routing
    }

    /// The technician's payout button.
    public func manualDispense(type: Int, count: Int) {
        let paid = min(count, tubes[type])
        tubes[type] -= paid
        queue.append(.manuallyDispensed(type: type, count: paid, tubeCount: UInt8(min(tubes[type], 255))))
    }

    /// Coins loaded into a tube by hand (a technician refilling it from the top): the changer
    /// reports nothing; its next TUBE STATUS counts them.
    public func fillByHand(type: Int, count: Int) {
        tubes[type] += count
    }

    public func report(_ status: ChangerStatus) { queue.append(.status(status)) }

    /// Power cycle or watchdog: enables off, JUST RESET on the next POLL.
    public func resetItself() { busReset() }

    public func busReset() {
        queue.clear()
        queue.append(.status(.justReset))
        acceptMask = []
        featuresEnabled = []
        busyPolls = 0
        valuePolls = []
        paying = []
        timed = nil
    }

    /// Coins whose time has come leave the tubes (a paced payout). Called before every answer,
    /// and by a test between two exchanges (the motor runs while the bus is quiet).
    public func advance() {
        guard var payout = timed, !payout.coins.isEmpty, let now = clock?(), let interval = faults.coinInterval else { return }
        while !payout.coins.isEmpty, payout.nextCoinAt <= now {
            let type = payout.coins.removeFirst()
            guard tubes[type] > 0 else {
                // Emptied by hand meanwhile: the payout ends short.
                payout.coins.removeAll()
                break
            }
            tubes[type] -= 1
            coinsPaid.append(type)
            payout.status[type] += 1
            payout.valueSincePoll += value(ofType: type)
            payout.nextCoinAt += interval
        }
        timed = payout
        if payout.coins.isEmpty, payout.alternative { lastPayout = payout.status }
    }

    /// Whether something waits to be told on the next POLL (a coin in, a payout's end…).
    public var hasPendingReports: Bool { !queue.items.isEmpty }

    /// Whether a paced payout still has coins to pay.
    public var isPaying: Bool { !(timed?.coins.isEmpty ?? true) || !paying.isEmpty }

    public func respond(to block: MDBBlock) -> MDBAnswer {
        advance()
        guard !faults.silent else { return .noAnswer }
        switch (block.command, block.data.first) {
        case (0, _):
            busReset()
            return .ack
        case (1, _):
            var bytes = setup.bytes
            bytes[0] = level
            return .data(bytes)
        case (2, _):
            var full = (0..<16).filter { tubes[$0] >= tubeCapacity }
            var counts = tubes.map { UInt8(min($0, 255)) }
            if let jammedTube {
                full.append(jammedTube)
                counts[jammedTube] = 0
            }
            return .data(TubeStatus(full: full, counts: counts).bytes)
        case (3, _):
            pollCount += 1
            if !paying.isEmpty {
                let type = paying.removeFirst()
                tubes[type] -= 1
                coinsPaid.append(type)
                return .data([ChangerStatus.payoutBusy.rawValue])
            }
            if busyPolls > 0 || timed?.coins.isEmpty == false {
                // Busy, with whatever else happened since (a coin paid by hand, a jam).
                busyPolls = max(0, busyPolls - 1)
                return .data([ChangerStatus.payoutBusy.rawValue] + queue.take(maxBytes: 15) { $0.bytes.count }.flatMap(\.bytes))
            }
            let activities = queue.take { $0.bytes.count }
            return activities.isEmpty ? .ack : .data(activities.flatMap(\.bytes))
        case (4, _) where block.data.count == 4:
            acceptMask = (0..<16).filter { word(block.data, 0) & 1 << $0 != 0 }
            return .ack
        case (5, _) where block.data.count == 1:
            let type = Int(block.data[0] & 0x0F), count = Int(block.data[0] >> 4)
            if startTimed([type: min(count, tubes[type])], alternative: false) {
                // paced by the clock
            } else if faults.slowPayout {
                paying += [Int](repeating: type, count: min(count, tubes[type]))
            } else {
                _ = pay([type: count])
            }
            return faults.dropDispenseAck ? .noAnswer : .ack
        case (7, 0x00) where level >= 3:
            return .data(
                PeripheralIdentification(
                    manufacturer: "VSM", serialNumber: "000000000808", model: "SIM-CHANGER",
                    softwareVersion: 0x0100, features: ChangerFeatures.alternativePayout.rawValue
                ).bytes(withFeatures: true))
        case (7, 0x01) where level >= 3 && block.data.count == 5:
            featuresEnabled = ChangerFeatures(rawValue: block.data[1...4].reduce(0) { $0 << 8 | UInt32($1) })
            return .ack
        case (7, 0x02) where featuresEnabled.contains(.alternativePayout) && block.data.count == 2:
            payAlternative(scaled: Int(block.data[1]))
            return .ack
        case (7, 0x03) where featuresEnabled.contains(.alternativePayout):
            if busyPolls > 0 || isPaying { return .ack }
            defer { lastPayout = nil }
            return .data(lastPayout ?? [0x00])
        case (7, 0x04) where featuresEnabled.contains(.alternativePayout):
            if var payout = timed {
                // The value paid since the last value poll; ACK alone once the payout is over.
                if payout.coins.isEmpty, payout.valueSincePoll == 0 { return .ack }
                if faults.valueOnlyAtEnd, !payout.coins.isEmpty { return .data([0]) }
                defer {
                    payout.valueSincePoll = 0
                    timed = payout
                }
                return .data([UInt8(payout.valueSincePoll / Int(setup.scalingFactor))])
            }
            if busyPolls > 0 {
                busyPolls -= 1
                return .data([valuePolls.isEmpty ? 0 : valuePolls.removeFirst()])
            }
            return valuePolls.isEmpty ? .ack : .data([valuePolls.removeFirst()])
        default:
            // Level-2 changers and disabled options ignore what they do not support (§1.3.2).
            return .noAnswer
        }
    }

    /// Pays coins from the tubes; a jam stops after the first coin. Returns coins paid per type.
    private func pay(_ wanted: [Int: Int]) -> [Int: Int] {
        var paid: [Int: Int] = [:]
        for (type, count) in wanted.sorted(by: { $0.key > $1.key }) {
            var n = min(count, tubes[type])
            if faults.tubeJam {
                n = min(n, 1)
                faults.tubeJam = false
                jammedTube = type
                queue.append(.status(.tubeJam))
            }
            tubes[type] -= n
            coinsPaid += [Int](repeating: type, count: n)
            paid[type] = n
            if jammedTube != nil { break }
        }
        busyPolls = 1 + faults.payoutBusyPolls
        return paid
    }

    /// Starts a payout paced by the clock, if one is set: true when it did.
    private func startTimed(_ wanted: [Int: Int], alternative: Bool) -> Bool {
        guard let now = clock?(), let interval = faults.coinInterval else { return false }
        var coins: [Int] = []
        for (type, count) in wanted.sorted(by: { $0.key > $1.key }) { coins += [Int](repeating: type, count: count) }
        if faults.tubeJam, let first = coins.first {
            faults.tubeJam = false
            jammedTube = first
            coins = [first]
            queue.append(.status(.tubeJam))
        }
        timed = TimedPayout(coins: coins, nextCoinAt: now + interval, alternative: alternative)
        lastPayout = coins.isEmpty && alternative ? [0x00] : nil
        return true
    }

    private func payAlternative(scaled: Int) {
        var left = scaled * Int(setup.scalingFactor)
        var wanted: [Int: Int] = [:]
        for type in (0..<16).sorted(by: { value(ofType: $0) > value(ofType: $1) }) where value(ofType: type) > 0 {
            let count = min(left / value(ofType: type), tubes[type])
            if count > 0 { wanted[type] = count }
            left -= count * value(ofType: type)
        }
        if startTimed(wanted, alternative: true) { return }
        let paid = pay(wanted)
        var status = [UInt8](repeating: 0, count: 16)
        var total = 0
        for (type, count) in paid {
            status[type] = UInt8(count)
            total += count * value(ofType: type)
        }
        lastPayout = status
        valuePolls = total > 0 ? [UInt8(total / Int(setup.scalingFactor))] : []
    }

    /// Clears a jam: the tube reads true again.
    public func clearJam() { jammedTube = nil }

    /// A tube's sensor fails: TUBE STATUS reports it full with 0 coins until `clearJam`.
    public func breakTubeSensor(type: Int) { jammedTube = type }
}

func word(_ bytes: [UInt8], _ index: Int) -> UInt16 { UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1]) }
