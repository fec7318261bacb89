import MDB
import VendHardware
import VendSettings
import VendingCore

/// What a payout really paid, read back from the changer.
public struct MDBPayoutResult: Sendable, Equatable, CustomStringConvertible {
    /// Asked, paid and provably not paid; what may or may not have left is unknown: a payout
    /// command whose end the changer never reported, a DISPENSE whose tube then read "full
    /// with 0" (jam or bad sensor), one from a tube whose count was capped at 255.
    public let tally: PayoutTally
    /// Coins paid for certain, by value.
    public let coins: [Money: Int]
    /// False when the changer reset, was lost or stopped making progress mid-payout: `paid` is
    /// what its tubes say.
    public let certain: Bool

    public var requested: Money { tally.asked }
    public var paid: Money { tally.paid }
    public var unknown: Money { tally.unknown }

    static func neverStarted(_ amount: Money) -> MDBPayoutResult {
        MDBPayoutResult(tally: .neverStarted(amount), coins: [:], certain: true)
    }

    public var description: String { text(.plain(requested.currency)) }

    /// "paid 800원 of 800원 (1 × 500원, 3 × 100원)", in the machine's money format.
    public func text(_ format: MoneyFormat) -> String {
        let list = coins.sorted { $0.key > $1.key }.map { "\($0.value) × \(format.string(for: $0.key))" }.joined(separator: ", ")
        return
            "paid \(format.string(for: paid)) of \(format.string(for: requested))\(list.isEmpty ? "" : " (\(list))")\(unknown.isZero ? "" : ", \(format.string(for: unknown)) unknown")\(certain ? "" : ", uncertain")"
    }
}

/// A payout asked of the changer; `completion` runs exactly once, on the bus thread. `holding`
/// gets the tubes before the first coin is asked for, and again when they change other than by
/// paying: at a restart, what left them since is what was paid.
struct MDBPayoutRequest: Sendable {
    let amount: Money
    var holding: @Sendable ([ChangeStock]) -> Void = { _ in }
    let completion: @Sendable (MDBPayoutResult) -> Void
}

/// The coin changer (08h) driver: credits deposited coins, follows the machine's acceptance,
/// reports its tubes, and pays out — by ALTERNATIVE PAYOUT when the level-3 changer offers it,
/// else by DISPENSE per coin type with TUBE STATUS before and after (§5.6). A money command is
/// never repeated on silence; what was paid is always read back.
final class MDBCoinChanger: MDBPeripheralDriver {
    let peripheral = MDBPeripheral.coinChanger
    let nonResponseTime: Duration = .seconds(2)
    /// Without other news of a payout for this long, its tubes are read to see whether coins
    /// still leave them.
    static let tubeCheckInterval: Duration = .seconds(2)

    private let settings: MDBChangerSettings
    private let currency: Currency
    /// How amounts read in its notices: the machine's money format.
    private let format: MoneyFormat
    private let currencyNumeric: Int?
    private let source: String
    private let emit: MDBEventHandler
    private let wantsAcceptance: () -> Bool
    private let takePayout: () -> MDBPayoutRequest?
    /// Emergency stop: no further DISPENSE or chunk; what was paid is read back as usual.
    private let payoutStopped: () -> Bool
    /// Each TUBE STATUS read, by value: evidence for a payout cut short by a restart.
    private let tubesRead: ([ChangeStock]) -> Void
    private var sequence: UInt64

    private var setup: ChangerSetup?
    private var alternativePayout = false
    /// Coin types whose value the changer and the table agree on, with that value.
    private var values: [Int: Money] = [:]
    private var tubes: TubeStatus?
    /// The acceptance last sent with COIN TYPE (nil: not since the last reset).
    private var applied: Bool?
    private var payout: Payout?
    /// Statuses the changer repeats every POLL while true: said once per change.
    private var lastRepeatingStatus: ChangerStatus?

    init(
        settings: MDBChangerSettings, currency: Currency, format: MoneyFormat? = nil, currencyNumeric: Int?, source: String, lastSequence: UInt64?,
        emit: @escaping MDBEventHandler,
        wantsAcceptance: @escaping () -> Bool, takePayout: @escaping () -> MDBPayoutRequest?, payoutStopped: @escaping () -> Bool = { false },
        tubesRead: @escaping ([ChangeStock]) -> Void = { _ in }
    ) {
        self.settings = settings
        self.currency = currency
        self.format = format ?? .plain(currency)
        self.currencyNumeric = currencyNumeric
        self.source = source
        self.emit = MDBEvent.naming("coin changer", emit)
        self.wantsAcceptance = wantsAcceptance
        self.takePayout = takePayout
        self.payoutStopped = payoutStopped
        self.tubesRead = tubesRead
        sequence = lastSequence ?? 0
    }

    func isJustReset(_ poll: [UInt8]) -> Bool {
        (try? ChangerActivity.parse(poll))?.contains(.status(.justReset)) ?? false
    }

    // MARK: - Initialisation (§5.6)

    func initialise(_ bus: MDBDeviceBus) throws(MDBFailure) {
        applied = nil
        let setup = try bus.request(ChangerCommand.setup.block, ChangerSetup.init)
        self.setup = setup
        values = checkedValues(setup)
        var summary = "level \(setup.level), \(setup.currency), scaling \(setup.scalingFactor)"
        alternativePayout = false
        if setup.level >= 3 {
            let id = try bus.request(ChangerCommand.identification.block) { (bytes) throws(MDBDecodeError) in
                try PeripheralIdentification(bytes, withFeatures: true)
            }
            let offered = ChangerFeatures(rawValue: id.features)
            let wanted = offered.intersection(.alternativePayout)
            _ = try bus.send(ChangerCommand.featureEnable(wanted).block)
            alternativePayout = wanted.contains(.alternativePayout)
            summary = "\(id.summary), " + summary
        }
        emit(
            .notice(
                "coin changer: \(summary), coins \(values.keys.sorted().map { "\($0)=\(format.string(for: values[$0]!))" }.joined(separator: " ")), pays by \(alternativePayout ? "alternative payout" : "DISPENSE")",
                isFault: false))
        try readTubes(bus)
        if var job = payout, job.isUnderway {
            // Reset mid-payout: it pays no more, and what it paid is what left the tubes.
            job.plan.removeAll()
            settleFromTubes(&job, changerStopped: true)
            finish(job, uncertain: true, note: "the changer reset during the payout; what left its tubes is paid")
        }
        try applyAcceptance(bus)
    }

    /// The table's types whose value SETUP confirms; the others are refused, loudly.
    private func checkedValues(_ setup: ChangerSetup) -> [Int: Money] {
        let (values, refusals) = settings.coins.confirmed(
            by: setup.currency, expectedNumeric: currencyNumeric, machineCurrency: currency,
            wording: MDBTableWording(device: "coin changer", item: "coin"), reportedValue: setup.value(ofType:))
        for refusal in refusals { emit(.notice(refusal, isFault: true)) }
        return values
    }

    // MARK: - Polling

    /// POLL comes first, so that a changer that reset itself mid-payout is noticed at once (its
    /// POLL says JUST RESET; the payout commands go unanswered after a reset).
    func tick(_ bus: MDBDeviceBus) throws(MDBFailure) -> Bool {
        let answer = try bus.send(ChangerCommand.poll.block)
        var busy = false
        if case .data(let bytes) = answer {
            let activities: [ChangerActivity]
            do { activities = try ChangerActivity.parse(bytes) } catch { throw .badAnswer(ChangerCommand.poll.block, error) }
            var justReset = false
            for activity in activities {
                switch activity {
                case .status(.justReset): justReset = true
                case .status(.payoutBusy): busy = true
                default: handle(activity)
                }
            }
            if justReset { return true }
            if busy { lastRepeatingStatus = .payoutBusy }
        } else {
            lastRepeatingStatus = nil
        }
        try settleDispense(bus, busy: busy)
        if payout == nil, let request = takePayout() { payout = Payout(request) }
        try applyAcceptance(bus)
        if payout != nil { try stepPayout(bus) }
        return false
    }

    private func handle(_ activity: ChangerActivity) {
        switch activity {
        case .deposited(let type, let routing, let tubeCount):
            guard routing == .cashBox || routing == .tubes else {
                emit(
                    .notice(
                        "a coin of type \(type)\(typeValue(type)) was \(routing == .rejected ? "returned to the customer" : "routed nowhere (routing 10)"): not credited\(disabledNote(type))",
                        isFault: routing != .rejected))
                return
            }
            guard let value = values[type] else {
                emit(
                    .notice(
                        "a coin of type \(type) went to the \(routing == .tubes ? "tubes" : "cash box") but is not in mdb.changer.coins (or disagrees with the changer): NOT credited. Map the type or disable it",
                        isFault: true))
                return
            }
            sequence += 1
            emit(
                .coinDeposited(
                    AcceptedCoin(
                        channel: type, value: value, event: CoinEventID(source: source, sequence: sequence),
                        route: routing == .tubes ? .tubes : .cashBox)))
            if routing == .tubes {
                tubes = tubes.map { TubeStatus(full: $0.full, counts: replacing($0.counts, at: type, with: tubeCount)) }
                reportInventory()
                reviseHolding(type, by: 1)
            }
        case .manuallyDispensed(let type, let count, let left):
            emit(
                .notice(
                    "\(count) coin(s) of type \(type)\(typeValue(type)) paid out by the changer's own buttons (\(left) left in the tube): not a sale, not change",
                    isFault: false))
            if let value = values[type], count > 0 { emit(.dispensedManually(value * count)) }
            tubes = tubes.map { TubeStatus(full: $0.full, counts: replacing($0.counts, at: type, with: left)) }
            reportInventory()
            reviseHolding(type, by: -count)
        case .slugs(let count):
            emit(.notice("the changer rejected \(count) slug(s)", isFault: false))
        case .status(let status):
            guard status != lastRepeatingStatus else { return }
            if status == .acceptorUnplugged || status == .changerBusy { lastRepeatingStatus = status }
            emit(.notice(status.name, isFault: status.isFault))
            if status == .tubeJam { payout?.jammed = true }
        case .unknown(let byte):
            emit(.notice("undefined POLL byte \(byte)", isFault: true))
        }
    }

    /// " (10원)": a type's value, from the table or the changer's SETUP; nothing when unknown.
    private func typeValue(_ type: Int) -> String {
        let value = values[type] ?? settings.coins.first { $0.type == type }?.value
        return value.map { " (\(format.string(for: $0)))" } ?? ""
    }

    /// Why a configured type is refused: its row says `enabled: false`.
    private func disabledNote(_ type: Int) -> String {
        guard let row = settings.coins.first(where: { $0.type == type && !$0.enabled }) else { return "" }
        return " (\(row.origin.path) is enabled: false, at \(row.origin.location))"
    }

    /// Coins went in or out of a tube other than by paying while a payout runs: what the tubes
    /// would hold had it paid nothing changes with them, and is said again.
    /// So does the count a DISPENSE of that type is settled against.
    private func reviseHolding(_ type: Int, by change: Int) {
        guard var job = payout, var holding = job.holding else { return }
        holding.counts[type] = max(0, holding.counts[type] + change)
        job.holding = holding
        if case .settling(type, let count, let acknowledged, let before) = job.phase {
            job.phase = .settling(type: type, count: count, acknowledged: acknowledged, before: UInt8(clamping: Int(before) + change))
        }
        payout = job
        job.request.holding(holding.byValue(values))
    }

    private func replacing(_ counts: [UInt8], at index: Int, with value: UInt8) -> [UInt8] {
        var counts = counts
        counts[index] = value
        return counts
    }

    var hasWorkInProgress: Bool { payout != nil }

    func lost() {
        applied = nil
        lastRepeatingStatus = nil
    }

    /// A changer that stays silent mid-payout past the stall limit cannot be waited for: what it
    /// reported paid is paid, and what it was still asked to pay is unknown (its tubes cannot be
    /// read). The machine is free again; a changer that comes back is read at its reset.
    func stillOffline(_ now: ContinuousClock.Instant) {
        guard let job = payout, job.isUnderway, let last = job.lastProgress, now - last >= settings.payoutStallLimit else { return }
        finish(
            job, uncertain: true,
            note:
                "it has not answered for \(settings.payoutStallLimit) (mdb.changer.payout_stall_ms) mid-payout: what it was still asked to pay is unknown — count the tubes"
        )
    }

    // MARK: - Acceptance and tubes

    /// Coins are refused while the machine cannot sell and while paying out (a coin going into
    /// a tube would blur the before/after count).
    private func applyAcceptance(_ bus: MDBDeviceBus) throws(MDBFailure) {
        let wanted = wantsAcceptance() && payout == nil
        guard applied != wanted else { return }
        let accept = wanted ? settings.coins.filter { $0.enabled && values[$0.type] != nil }.map(\.type) : []
        // The changer's own payout buttons stay enabled, as after a reset (§5.2 COIN TYPE).
        _ = try bus.send(ChangerCommand.coinType(accept: accept, manualDispense: Array(0..<16)).block)
        applied = wanted
    }

    private func readTubes(_ bus: MDBDeviceBus) throws(MDBFailure) {
        let status = try bus.request(ChangerCommand.tubeStatus.block, TubeStatus.init)
        if !status.suspectTubes.isEmpty, status.suspectTubes != tubes?.suspectTubes {
            emit(.notice("coin changer reports tube(s) \(status.suspectTubes) full with 0 coins: a jam or a bad tube sensor", isFault: true))
        }
        tubes = status
        reportInventory()
        tubesRead(TubeHolding(status).byValue(values))
    }

    private func reportInventory() {
        guard let tubes else { return }
        var inventory: [Money: Int] = [:]
        for (type, value) in values where tubes.counts[type] > 0 { inventory[value, default: 0] += Int(tubes.counts[type]) }
        emit(.changeInventory(inventory))
    }

    // MARK: - Payout

    private struct Payout {
        enum Phase {
            case start
            /// Coins were refused (COIN TYPE) as the payout was taken, and the POLL after it
            /// reported those already in: the tubes now count what the payout starts from.
            case counting
            /// DISPENSE the next (type, count) of the plan.
            case dispense
            /// A DISPENSE was sent when the tube held `before`; wait for "payout busy" to end.
            /// `acknowledged` false: the changer did not answer it, so it may or may not be paying.
            case settling(type: Int, count: Int, acknowledged: Bool, before: UInt8)
            /// ALTERNATIVE PAYOUT sent for `scaled`; PAYOUT VALUE POLL until ACK alone.
            case alternative(scaled: Int)
            case alternativeStatus(scaled: Int)
        }

        let request: MDBPayoutRequest
        var phase = Phase.start
        /// The tubes when the payout began, plus coins that went in and minus those paid by hand
        /// since: what the tubes would hold had it paid nothing. Nil until told to `holding`.
        var holding: TubeHolding?
        var plan: [(type: Int, count: Int)] = []
        /// Coins the changer reported paid (PAYOUT STATUS, or a DISPENSE read back).
        var paid: [Int: Int] = [:]
        /// Minor units the tubes say left for a command whose own report never came.
        var paidByTubes: Int64 = 0
        /// Minor units asked of the changer whose end it has not reported: paid or unknown,
        /// never credit, until the changer or its tubes say otherwise.
        var open: Int64 = 0
        /// The last sign that the payout moves (a command sent or ended, coins counted out).
        var lastProgress: ContinuousClock.Instant?
        var lastTubeCheck: ContinuousClock.Instant?
        var jammed = false
        var uncertain = false
        /// A DISPENSE paid fewer coins than its tube held, or was not answered: a fault, unlike
        /// a payout cut short because the tubes held too little (the plan was short).
        var fellShortOfPlan = false

        init(_ request: MDBPayoutRequest) { self.request = request }

        var isUnderway: Bool {
            switch phase {
            case .start, .counting: false
            default: true
            }
        }
    }

    private func stepPayout(_ bus: MDBDeviceBus) throws(MDBFailure) {
        guard var job = payout, let setup else { return }
        let now = bus.timekeeper.now
        switch job.phase {
        case .start:
            job.phase = .counting
        case .counting:
            // Stopped before any coin was asked for: nothing to count, nothing paid.
            guard !payoutStopped() else { return finish(job, uncertain: false, note: nil) }
            try readTubes(bus)
            if let tubes {
                // Durable before the first coin is asked for (the payout bank's `asking`).
                let holding = TubeHolding(tubes)
                job.holding = holding
                job.request.holding(holding.byValue(values))
            }
            job.lastProgress = now
            if alternativePayout {
                guard try askAlternative(bus, job: &job, scaling: Int64(setup.scalingFactor)) else {
                    return finish(job, uncertain: false, note: nil)
                }
            } else {
                job.plan = plan(job.request.amount)
                job.phase = .dispense
            }
        case .dispense:
            guard !job.jammed, !payoutStopped(), let next = job.plan.first, let tubes else {
                payout = job
                return finish(job, uncertain: job.uncertain, note: nil)
            }
            job.plan.removeFirst()
            // Open before it goes out: an unanswered DISPENSE may still be paying.
            job.open += Int64(next.count) * (values[next.type]?.minorUnits ?? 0)
            job.phase = .settling(type: next.type, count: next.count, acknowledged: false, before: tubes.counts[next.type])
            job.lastProgress = now
            let answer = try sendPaying(ChangerCommand.dispense(type: next.type, count: next.count).block, bus, job: job)
            job.phase = .settling(type: next.type, count: next.count, acknowledged: answer != .noAnswer, before: tubes.counts[next.type])
        case .alternative(let scaled):
            // Data is the value paid since the last value poll; ACK alone means the payout ended.
            switch try bus.send(ChangerCommand.payoutValuePoll.block) {
            case .ack: job.phase = .alternativeStatus(scaled: scaled)
            case .data(let bytes) where bytes.contains { $0 != 0 }: job.lastProgress = now
            default: break
            }
        case .alternativeStatus(let scaled):
            let answer = try bus.send(ChangerCommand.payoutStatus.block)
            guard case .data(let bytes) = answer else { break }  // ACK alone: still paying
            let status: PayoutStatus
            do { status = try PayoutStatus(bytes) } catch { throw .badAnswer(ChangerCommand.payoutStatus.block, error) }
            var chunk: [Int: Int] = [:]
            for (type, count) in status.coinsPaid.enumerated() where count > 0 { chunk[type] = Int(count) }
            job.paid.merge(chunk, uniquingKeysWith: +)
            // The changer says this command ended: what it did not pay of it, it never will.
            job.open = max(0, job.open - Int64(scaled) * Int64(setup.scalingFactor))
            job.lastProgress = now
            // The next chunk while each pays something: the tubes may not make a chunk's exact
            // value, and one that pays nothing means the changer can pay no more.
            let mayPayMore = !paidMoney(chunk).isZero && !job.jammed && !payoutStopped()
            guard mayPayMore, try askAlternative(bus, job: &job, scaling: Int64(setup.scalingFactor)) else {
                payout = job
                try readTubes(bus)
                return finish(job, uncertain: job.uncertain, note: nil)
            }
        case .settling:
            break  // advanced by the POLL in `settleDispense`
        }
        if job.isUnderway, let last = job.lastProgress {
            if now - last >= settings.payoutStallLimit {
                payout = job
                try readTubes(bus)
                settleFromTubes(&job, changerStopped: false)
                return finish(
                    job, uncertain: true,
                    note:
                        "no sign of progress for \(settings.payoutStallLimit) (mdb.changer.payout_stall_ms): what left the tubes is paid; what it was still asked to pay is unknown — count the tubes"
                )
            }
            if now - last >= Self.tubeCheckInterval, now - (job.lastTubeCheck ?? last) >= Self.tubeCheckInterval {
                job.lastTubeCheck = now
                if try tubesMoved(bus) { job.lastProgress = now }
            }
        }
        payout = job
    }

    /// Asks ALTERNATIVE PAYOUT for as much of what is left as one command carries (255 scaled
    /// units), counting it open first. False when nothing is left to ask for.
    private func askAlternative(_ bus: MDBDeviceBus, job: inout Payout, scaling: Int64) throws(MDBFailure) -> Bool {
        let remaining = job.request.amount.minorUnits - paidMoney(job.paid).minorUnits - job.paidByTubes - job.open
        let scaled = Int(min(remaining / scaling, 255))
        guard scaled > 0 else { return false }
        job.open += Int64(scaled) * scaling
        job.phase = .alternative(scaled: scaled)
        // Silence is fine: PAYOUT VALUE POLL and PAYOUT STATUS tell whether it ran.
        _ = try sendPaying(ChangerCommand.alternativePayout(scaledValue: UInt8(scaled)).block, bus, job: job)
        return true
    }

    /// Sends a command that pays coins with the payout kept first as it stands once the command
    /// is out: a link lost between the command reaching the changer and its answer leaves the
    /// command open (paid or unknown), never forgotten and asked again.
    private func sendPaying(_ block: MDBBlock, _ bus: MDBDeviceBus, job: Payout) throws(MDBFailure) -> MDBAnswer {
        payout = job
        return try bus.sendOnce(block)
    }

    /// Reads the tubes for a payout with no other news: true when a count went down (coins
    /// leaving). A changer that does not answer TUBE STATUS while it pays says nothing.
    private func tubesMoved(_ bus: MDBDeviceBus) throws(MDBFailure) -> Bool {
        let before = tubes
        do {
            try readTubes(bus)
        } catch {
            if case .link = error { throw error }
            return false
        }
        guard let before, let after = tubes else { return false }
        return zip(before.counts, after.counts).contains { $1 < $0 }
    }

    /// After each POLL while a DISPENSE settles: once the changer no longer says "payout busy",
    /// the tubes say what left them.
    private func settleDispense(_ bus: MDBDeviceBus, busy: Bool) throws(MDBFailure) {
        guard var job = payout, case .settling(let type, let count, let acknowledged, let before) = job.phase, !busy else { return }
        try readTubes(bus)
        guard let after = tubes else { return }
        let value = values[type]?.minorUnits ?? 0
        let left = max(0, Int(before) - Int(after.counts[type]))
        var paidNow = min(left, count)
        // The changer says this DISPENSE ended: what did not leave the tube, it never will.
        job.open = max(0, job.open - Int64(count) * value)
        if after.suspectTubes.contains(type) {
            // "Full with 0" is a jam or a bad sensor, not an empty tube: the count says nothing.
            paidNow = 0
            job.open += Int64(count) * value
        } else if before == 255, left < count {
            // Capped at 255 before: the tube may have paid more than the count shows.
            job.open += Int64(count - left) * value
        }
        if !acknowledged {
            emit(
                .notice(
                    "the changer did not answer DISPENSE \(count) × type \(type); it was not repeated. The tubes say \(paidNow) left", isFault: true))
        }
        if paidNow > 0 { job.paid[type, default: 0] += paidNow }
        if !acknowledged || paidNow < count {
            job.plan.removeAll()
            job.fellShortOfPlan = true
        }
        job.phase = .dispense
        job.lastProgress = bus.timekeeper.now
        payout = job
    }

    /// What the tubes say left since the payout began, beyond the coins the changer reported,
    /// is paid from the command still open. When the changer has stopped (it reset), the rest
    /// of that command never left: not paid. When the tubes cannot tell (a tube not counted,
    /// coins put in by hand, more gone than asked), the open command stays unknown.
    private func settleFromTubes(_ job: inout Payout, changerStopped: Bool) {
        guard job.open > 0, let holding = job.holding, let tubes else { return }
        let evidence = TubeHolding.paid(before: holding.byValue(values), now: TubeHolding(tubes).byValue(values), of: job.request.amount)
        guard evidence.cannotTell == nil else {
            emit(
                .notice(
                    "its tubes cannot say what the payout paid (\(evidence.cannotTell!)): the part still open is unknown", isFault: true
                ))
            return
        }
        let fromOpen = evidence.paid.minorUnits - paidMoney(job.paid).minorUnits - job.paidByTubes
        guard fromOpen >= 0, fromOpen <= job.open else {
            emit(
                .notice(
                    "its tubes say \(format.string(for: evidence.paid)) left, which the payout's own reports cannot explain: the part still open is unknown",
                    isFault: true))
            return
        }
        job.paidByTubes += fromOpen
        job.open = changerStopped ? 0 : job.open - fromOpen
        job.uncertain = true
    }

    /// Coins for `amount` from what the tubes hold: highest value first; of two types with the
    /// same value, the higher type first (§5.2 DISPENSE); at most 15 per DISPENSE.
    private func plan(_ amount: Money) -> [(type: Int, count: Int)] {
        guard let tubes else { return [] }
        var left = amount.minorUnits
        var plan: [(type: Int, count: Int)] = []
        let order = values.keys.sorted { (values[$0]!, $0) > (values[$1]!, $1) }
        for type in order where !tubes.suspectTubes.contains(type) {
            let value = values[type]!.minorUnits
            var count = min(Int(left / value), Int(tubes.counts[type]))
            left -= Int64(count) * value
            while count > 0 {
                plan.append((type, min(count, 15)))
                count -= min(count, 15)
            }
        }
        return plan
    }

    private func paidMoney(_ coins: [Int: Int]) -> Money {
        coins.reduce(.zero(currency)) { total, entry in
            guard let value = values[entry.key] ?? setup?.value(ofType: entry.key).map({ Money(minorUnits: $0, currency: currency) }) else {
                return total
            }
            return total + value * entry.value
        }
    }

    /// Ends the payout: paid is what the changer reported and what the tubes showed; whatever
    /// is still open stays unknown (see `PayoutTally`).
    private func finish(_ job: Payout, uncertain: Bool, note: String?) {
        payout = nil
        var coins: [Money: Int] = [:]
        for (type, count) in job.paid {
            if let value = values[type] { coins[value, default: 0] += count }
        }
        let amount = job.request.amount
        let paid = paidMoney(job.paid) + Money(minorUnits: job.paidByTubes, currency: currency)
        let open = Money(minorUnits: job.open, currency: currency)
        let result = MDBPayoutResult(
            tally: PayoutTally(asked: amount, paid: paid, provablyUnpaid: amount - paid - open), coins: coins,
            certain: !uncertain && !job.uncertain)
        // Paying less than asked because the tubes ran out is no fault of the changer; a jam, a
        // DISPENSE that paid short, or an uncertain outcome is.
        let isFault = !result.certain || !result.unknown.isZero || job.jammed || job.fellShortOfPlan || note != nil
        emit(.notice("\(result.text(format))\(note.map { ": \($0)" } ?? "")", isFault: isFault))
        job.request.completion(result)
    }
}
