import Synchronization
import VendSettings
import VendTime
import VendingCore

/// Drives the dispensing relays and spiral motors: one slot at a time (interlock), a relay pulse
/// of the configured length or a spiral's turn judged by its home switch (`SpiralCycle`), a
/// maximum on-time enforced by its own timer, and the drop-sensor window that turns a pulse or a
/// turn into an outcome. `start` powers the drive on the caller's thread (the hot path); the end
/// of the pulse, the turn's limits, the window and the guard run on the timekeeper, home-switch
/// edges on the GPIO backend's thread.
public final class Dispenser: Sendable {
    public typealias Completion = @Sendable (VendOutcome) -> Void

    private struct Vend {
        let slot: SlotID
        let drive: Drive
        let config: SlotConfig
        let started: ContinuousClock.Instant
        let completion: Completion
        /// The relay's pulse ended, or the spiral's turn.
        var pulseEnded = false
        var dropAfter: Duration?
        var windowTimer: TimerID?
        var guardTimer: TimerID?
        /// A spiral's turn while the motor runs, and the timer that looks at it next.
        var cycle: SpiralCycle?
        var cycleTimer: TimerID?
        /// When a spiral's turn ended (its drop window counts from there).
        var turnEnded: ContinuousClock.Instant?

        /// A relay's window runs from the pulse's start; a spiral's is open all through the turn
        /// and for the window after it.
        func accepts(dropAt instant: ContinuousClock.Instant, window: Duration) -> Bool {
            guard cycle != nil else { return instant <= started + window }
            guard let turnEnded else { return true }
            return instant <= turnEnded + window
        }
    }

    /// Where a slot's drive is: its line in `outputs`, or its crossing in the matrix; and for a
    /// spiral, its home switch in `homes`.
    private enum Drive: Sendable {
        case relay(output: Int)
        case spiralLine(output: Int, home: Int)
        case spiralMatrix(row: Int, column: Int, home: Int)

        var home: Int? {
            switch self {
            case .relay: nil
            case .spiralLine(_, let home), .spiralMatrix(_, _, let home): home
            }
        }
    }

    private let outputs: any GPIOOutputGroup
    private let matrix: MotorMatrix?
    /// The home switches, each line once (a matrix's shared one serves every slot on it).
    private let homes: (any GPIOInputGroup)?
    private let slots: [SlotID: (drive: Drive, config: SlotConfig)]
    /// Indexes in `homes` of the lines that serve more than one motor.
    private let sharedHomes: Set<Int>
    private let timekeeper: any Timekeeper
    private let notify: HardwareNoticeHandler
    private let vending = Mutex<Vend?>(nil)

    /// Requests every slot's relay or motor line and the matrix lines, inactive, and the home
    /// switches, watched from now on.
    public init(
        chip: any GPIOChipBackend, slots: [SlotConfig], matrix matrixConfig: MotorMatrixConfig? = nil, timekeeper: any Timekeeper,
        notify: @escaping HardwareNoticeHandler
    ) throws(GPIOError) {
        var outputLines: [OutputLineConfig] = []
        var homeLines: [InputLineConfig] = []
        var drives: [SlotID: (Drive, SlotConfig)] = [:]
        for slot in slots {
            switch slot.drive {
            case .relay(let relay):
                drives[slot.id] = (.relay(output: outputLines.count), slot)
                outputLines.append(relay.line)
            case .spiral(let spiral):
                let key = LineKey(spiral.home)
                let home = homeLines.firstIndex { LineKey($0) == key } ?? homeLines.count
                if home == homeLines.count { homeLines.append(Self.undebounced(spiral.home)) }
                switch spiral.power {
                case .line(let motor):
                    drives[slot.id] = (.spiralLine(output: outputLines.count, home: home), slot)
                    outputLines.append(motor)
                case .matrix(let row, let column):
                    drives[slot.id] = (.spiralMatrix(row: row, column: column, home: home), slot)
                }
            }
        }
        outputs = try chip.requestOutputs(outputLines, consumer: "vendd")
        do {
            matrix = try matrixConfig.map { config throws(GPIOError) in try MotorMatrix(chip: chip, config: config) }
        } catch {
            outputs.release()
            throw error
        }
        do {
            homes = homeLines.isEmpty ? nil : try chip.requestInputs(homeLines, consumer: "vendd")
        } catch {
            matrix?.releaseAll()
            outputs.release()
            throw error
        }
        self.slots = drives.mapValues { (drive: $0.0, config: $0.1) }
        let homeUses = drives.values.compactMap(\.0.home)
        sharedHomes = Set(homeUses.filter { home in homeUses.count { $0 == home } > 1 })
        self.timekeeper = timekeeper
        self.notify = notify
        homes?.start(
            deliver: { [weak self] edges in self?.homeSwitchEdges(edges) },
            lost: { notify(.fault("the motors' home switches stopped delivering events")) })
    }

    /// A home switch is requested with no debounce of its own: the turn judges its bounces
    /// (`motors.cam_debounce_ms`), and libgpiod v2's kernel debounce (`gpio.debounce_ms`) would
    /// delay every edge on top of that, and the motor's release with it.
    static func undebounced(_ line: InputLineConfig) -> InputLineConfig {
        InputLineConfig(line: line.line, activeLow: line.activeLow, bias: line.bias, debounce: .zero, origin: line.origin, chip: line.chip)
    }

    /// Powers the slot's relay or motor now. Returns nil when it is on: the outcome comes later
    /// through `completion`, from the timekeeper or the sensors' threads, never from within this
    /// call. Returns the outcome at once when the drive could not be powered, or when a spiral's
    /// home switch says its motor is not at home: such a motor is never turned blindly.
    public func start(_ slotID: SlotID, completion: @escaping Completion) -> VendOutcome? {
        guard let (drive, slot) = slots[slotID] else {
            notify(.fault("no relay or motor is configured for slot \(slotID)"))
            return .notDropped
        }
        // On the relay lane (SCHED_FIFO in vendd), as the pulse's end is: an ordinary thread
        // preempted between powering the drive and reading the clock, or before scheduling the
        // pulse's end, would lengthen the pulse by as long as it waited for a core (a 13 ms tail
        // with the machine's lane doing it).
        if let (notice, outcome) = timekeeper.perform({ [self] in powerOn(slotID, drive: drive, slot: slot, completion: completion) }) {
            notify(notice)
            return outcome
        }
        switch slot.drive {
        case .relay(let relay): notify(.relayEnergised(slotID, line: relay.line.line))
        case .spiral: notify(.motorStarted(slotID))
        }
        return nil
    }

    /// Powers the drive, unless another vend holds the machine or a spiral is away from home,
    /// and times what follows from the instant it was powered: a relay's pulse and guard, a
    /// spiral's guard and cycle. The refusal, or nil.
    private func powerOn(_ slotID: SlotID, drive: Drive, slot: SlotConfig, completion: @escaping Completion) -> (HardwareNotice, VendOutcome)? {
        vending.withLock { vending in
            if let busy = vending { return (.interlockRefused(slotID, busyWith: busy.slot), .notDropped) }
            if let home = drive.home, !isAtHome(home) {
                // A shared line away may be another motor's cam: this slot keeps its service.
                return sharedHomes.contains(home) ? (.sharedHomeLineAway(slotID), .notDropped) : (.motorAwayFromHome(slotID), .motorJammed)
            }
            do {
                try power(drive, on: true)
            } catch {
                try? power(drive, on: false)
                return (.fault("the drive of slot \(slotID) could not be powered: \(error)"), .notDropped)
            }
            let poweredAt = timekeeper.now
            var vend = Vend(
                slot: slotID, drive: drive, config: slot, started: poweredAt, completion: completion,
                cycle: slot.spiral.map { SpiralCycle(timing: $0.timing, startedAt: poweredAt) })
            switch slot.drive {
            case .relay(let relay):
                // The pulse's end first: at equal deadlines it runs first and cancels the guard.
                timekeeper.schedule(at: poweredAt + relay.pulse) { [self] in endPulse() }
                vend.guardTimer = timekeeper.schedule(at: poweredAt + relay.maximumOn) { [self] in
                    cutByGuard(drive, slot: slot, limit: relay.maximumOn)
                }
                vending = vend
            case .spiral(let spiral):
                // The cycle's own limit ends the turn; the guard, a little later, cuts the motor
                // even if that logic failed.
                let limit = spiral.timing.turnLimit + spiral.timing.camDebounce + Self.guardMargin
                vend.guardTimer = timekeeper.schedule(at: poweredAt + limit) { [self] in cutByGuard(drive, slot: slot, limit: limit) }
                vending = vend
                scheduleCycle(&vending)
            }
            return nil
        }
    }

    /// How long after a spiral's turn limit the guard cuts its motor regardless.
    static let guardMargin: Duration = .milliseconds(100)

    /// A drop sensor line became active at `instant` (now if not given): it confirms the vend
    /// whose window was open on it then, however late the event is handled.
    public func dropSensed(on line: LineReference, at instant: ContinuousClock.Instant? = nil) {
        let now = instant ?? timekeeper.now
        let finished: (Vend, VendOutcome)? = vending.withLock { vending in
            guard var vend = vending, let sensor = vend.config.dropSensor, sensor.input.line == line,
                vend.accepts(dropAt: now, window: sensor.window)
            else { return nil }
            if vend.dropAfter == nil { vend.dropAfter = now - vend.started }
            vending = vend
            // Before the pulse ends the drop is kept; the pulse's end then completes the vend.
            guard vend.pulseEnded else { return nil }
            vending = nil
            return (vend, .dropped)
        }
        guard let (vend, outcome) = finished else {
            if !isWindowOpen(on: line) { notify(.dropOutsideWindow(line)) }
            return
        }
        complete(vend, outcome)
    }

    /// Every relay and motor inactive and released; for shutdown and fatal errors.
    public func releaseAll() {
        outputs.release()
        matrix?.releaseAll()
        homes?.release()
    }

    private func isWindowOpen(on line: LineReference) -> Bool {
        vending.withLock { $0?.config.dropSensor?.input.line == line }
    }

    private func endPulse() {
        let ended: (Vend, VendOutcome?)? = vending.withLock { vending in
            guard var vend = vending, !vend.pulseEnded else { return nil }
            vend.pulseEnded = true
            release(vend)
            return afterDrive(vend, in: &vending)
        }
        guard let (vend, outcome) = ended else { return }
        if let guardTimer = vend.guardTimer { timekeeper.cancel(guardTimer) }
        if let relay = vend.config.relay {
            notify(.relayReleased(vend.slot, line: relay.line.line, after: timekeeper.now - vend.started))
        }
        if let outcome { complete(vend, outcome) }
    }

    /// The drive has stopped after a full pulse or turn: the outcome if it is known now, else the
    /// drop window stays open until its end. Called with the lock held.
    private func afterDrive(_ ended: Vend, in vending: inout Vend?) -> (Vend, VendOutcome?) {
        var vend = ended
        guard let sensor = vend.config.dropSensor else {
            vending = nil
            return (vend, .pulsedWithoutSensor)
        }
        if vend.dropAfter != nil {
            vending = nil
            return (vend, .dropped)
        }
        vend.windowTimer = timekeeper.schedule(at: windowEnd(of: vend, sensor)) { [self] in closeWindow() }
        vending = vend
        return (vend, nil)
    }

    /// A relay's drop window counts from the pulse's start. A spiral's counts from the end of its
    /// turn: the item leaves the spiral as the turn ends, whenever that is within the limit.
    private func windowEnd(of vend: Vend, _ sensor: DropSensorConfig) -> ContinuousClock.Instant {
        vend.turnEnded.map { $0 + sensor.window } ?? vend.started + sensor.window
    }

    // MARK: - Spiral motors

    /// Home-switch edges, on the backend's thread: they feed the turn in flight, if its motor's.
    private func homeSwitchEdges(_ edges: [LineEvent]) {
        for edge in edges {
            let result: (Vend, SpiralCycle.Result)? = vending.withLock { vending in
                guard var vend = vending, var cycle = vend.cycle, !vend.pulseEnded, vend.drive.home == edge.index else { return nil }
                let result = cycle.homeSwitch(atHome: edge.isActive, at: edge.at)
                vend.cycle = cycle
                vending = vend
                if let result { return (vend, result) }
                scheduleCycle(&vending)
                return nil
            }
            if let (vend, result) = result { endTurn(vend, result) }
        }
    }

    /// The turn's next limit or debounce deadline came.
    private func cycleTimePassed() {
        let result: (Vend, SpiralCycle.Result)? = vending.withLock { vending in
            guard var vend = vending, var cycle = vend.cycle, !vend.pulseEnded else { return nil }
            let result = cycle.timePassed(to: timekeeper.now)
            vend.cycle = cycle
            vend.cycleTimer = nil
            vending = vend
            if let result { return (vend, result) }
            scheduleCycle(&vending)
            return nil
        }
        if let (vend, result) = result { endTurn(vend, result) }
    }

    /// Called with the lock held: the one timer that looks at the turn next.
    private func scheduleCycle(_ vending: inout Vend?) {
        guard var vend = vending, let deadline = vend.cycle?.nextDeadline else { return }
        if let timer = vend.cycleTimer { timekeeper.cancel(timer) }
        vend.cycleTimer = timekeeper.schedule(at: deadline) { [self] in cycleTimePassed() }
        vending = vend
    }

    /// The motor stops (the home switch said so, or a limit passed): a full turn goes on to the
    /// drop window like a pulse's end; a motor that never left home is missing, one that never
    /// came back is jammed (unless the item was seen to fall first: then it is sold, and still
    /// jammed).
    private func endTurn(_ turning: Vend, _ result: SpiralCycle.Result) {
        let ended: (Vend, VendOutcome?)? = vending.withLock { vending in
            guard var vend = vending, vend.slot == turning.slot, !vend.pulseEnded else { return nil }
            vend.pulseEnded = true
            vend.turnEnded = timekeeper.now
            release(vend)
            if let timer = vend.cycleTimer { timekeeper.cancel(timer) }
            switch result {
            case .turned: return afterDrive(vend, in: &vending)
            case .noDeparture:
                vending = nil
                return (vend, .motorMissing)
            case .noReturn:
                vending = nil
                return (vend, vend.dropAfter == nil ? .motorJammed : .droppedMotorJammed)
            }
        }
        guard let (vend, outcome) = ended else { return }
        if let guardTimer = vend.guardTimer { timekeeper.cancel(guardTimer) }
        switch result {
        case .turned(let after): notify(.motorTurned(vend.slot, after: after))
        case .noDeparture: notify(.motorDidNotLeaveHome(vend.slot, limit: vend.config.spiral?.timing.departureLimit ?? .zero))
        case .noReturn: notify(.motorDidNotReturnHome(vend.slot, limit: vend.config.spiral?.timing.turnLimit ?? .zero))
        }
        if let outcome { complete(vend, outcome) }
    }

    /// Whether the home switch at `index` in `homes` is at home now. Called with the lock held.
    private func isAtHome(_ index: Int) -> Bool {
        ((try? homes?.currentValues()) ?? [])[safe: index] ?? false
    }

    /// The slots whose motor is away from home at start, a motor stopped mid-turn (a power cut):
    /// reported, never turned to find out. `turning` is the slot whose vend the journal says was
    /// in flight. A motor's own home switch tells; a line bussed to several motors may show only
    /// the one under power, so there the journal names the motor, and a shared line that reads
    /// away without one locks every motor on it.
    public func motorsAwayFromHome(turning: SlotID? = nil) -> [SlotID] {
        let levels = (try? homes?.currentValues()) ?? []
        let turningHome = turning.flatMap { slots[$0]?.drive.home }
        return slots.filter { id, slot in
            guard let home = slot.drive.home else { return false }
            let away = !(levels[safe: home] ?? false)
            guard sharedHomes.contains(home) else { return away }
            return home == turningHome ? id == turning : away
        }.keys.sorted()
    }

    /// Whether `slot`'s motor is on a home line bussed to other motors.
    public func sharesHomeLine(_ slot: SlotID) -> Bool {
        slots[slot]?.drive.home.map(sharedHomes.contains) ?? false
    }

    private func closeWindow() {
        let expired: Vend? = vending.withLock { vending in
            defer { vending = nil }
            return vending
        }
        guard let expired else { return }
        complete(expired, .notDropped)
    }

    private func complete(_ vend: Vend, _ outcome: VendOutcome) {
        if let windowTimer = vend.windowTimer { timekeeper.cancel(windowTimer) }
        switch outcome {
        case .dropped: notify(.dropSensed(vend.slot, after: vend.dropAfter ?? .zero))
        case .notDropped: notify(.noDropWithinWindow(vend.slot, window: vend.config.dropSensor?.window ?? .zero))
        default: break
        }
        vend.completion(outcome)
    }

    /// A relay or single-line motor: its line. A matrix motor: its row then column on, or its
    /// column then row off (`MotorMatrix`).
    private func power(_ drive: Drive, on: Bool) throws(GPIOError) {
        switch drive {
        case .relay(let output), .spiralLine(let output, _): try outputs.set(output, active: on)
        case .spiralMatrix(let row, let column, _):
            if on { try matrix?.energise(row: row, column: column) } else { matrix?.release() }
        }
    }

    /// Called with the lock held.
    private func release(_ vend: Vend) {
        do {
            try power(vend.drive, on: false)
        } catch {
            notify(.fault("the drive of slot \(vend.slot) could not be released: \(error); releasing every relay and motor"))
            outputs.release()
            matrix?.releaseAll()
        }
    }

    /// Cuts the relay or motor after its maximum on-time whatever the pulse or turn logic does:
    /// it needs only the output lines.
    private func cutByGuard(_ drive: Drive, slot: SlotConfig, limit: Duration) {
        try? power(drive, on: false)
        if let relay = slot.relay {
            notify(.relayCutByMaximumOnTime(slot.id, line: relay.line.line, limit: limit))
        } else {
            notify(.motorCutByGuard(slot.id, limit: limit))
        }
    }
}

/// One line on one chip, to request a shared line once.
struct LineKey: Hashable {
    let chip: String?
    let line: LineReference

    init(_ input: InputLineConfig) {
        chip = input.chip
        line = input.line
    }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
