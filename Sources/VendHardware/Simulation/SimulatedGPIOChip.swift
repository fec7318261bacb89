import Synchronization
import VendSettings
import VendTime

/// GPIO in memory: inputs are driven by `drive(_:active:)`, outputs are recorded and observed.
/// It behaves like the kernel where it matters: a line can be requested once, outputs start
/// inactive, released outputs go inactive.
public final class SimulatedGPIOChip: GPIOChipBackend {
    /// Told a line and its new level (active = true).
    public typealias LineObserver = @Sendable (LineReference, Bool) -> Void

    private struct State {
        var inputs: [LineReference: (group: SimulatedInputGroup, index: Int)] = [:]
        var inputLevels: [LineReference: Bool] = [:]
        var outputs: [LineReference: Bool] = [:]
        /// Who requested each line, as the kernel reports a busy line's consumer.
        var consumers: [LineReference: String] = [:]
        var observers: [LineObserver] = []
        var inputObservers: [LineObserver] = []

        func checkFree(_ lines: [(LineReference, ConfigOrigin)]) throws(GPIOError) {
            for (line, origin) in lines {
                if let holder = consumers[line] { throw GPIOError.lineBusy(line, origin: origin, consumer: holder) }
            }
        }
    }

    public let name: String
    private let state = Mutex(State())
    /// Stamps input edges, as the kernel stamps them with its monotonic clock.
    let timekeeper: any Timekeeper

    public init(name: String = "simulated-gpio", timekeeper: any Timekeeper) {
        self.name = name
        self.timekeeper = timekeeper
    }

    public func requestInputs(_ lines: [InputLineConfig], consumer: String) throws(GPIOError) -> any GPIOInputGroup {
        try state.withLock { state throws(GPIOError) in
            try state.checkFree(lines.map { ($0.line, $0.origin) })
            let group = SimulatedInputGroup(chip: self, levels: lines.map { state.inputLevels[$0.line] ?? false })
            for (index, line) in lines.enumerated() {
                state.inputs[line.line] = (group, index)
                state.consumers[line.line] = consumer
            }
            return group
        }
    }

    public func requestOutputs(_ lines: [OutputLineConfig], consumer: String) throws(GPIOError) -> any GPIOOutputGroup {
        try state.withLock { state throws(GPIOError) in
            try state.checkFree(lines.map { ($0.line, $0.origin) })
            for line in lines {
                state.outputs[line.line] = false
                state.consumers[line.line] = consumer
            }
            return SimulatedOutputGroup(chip: self, lines: lines.map(\.line))
        }
    }

    /// Sets an input line's level (active = pressed / sensing), as the outside world would.
    /// `at` stamps the edge, as the kernel stamps an edge with when it happened (now if not given).
    public func drive(_ line: LineReference, active: Bool, at instant: ContinuousClock.Instant? = nil) {
        let (target, observers) = state.withLock { state in
            let changed = (state.inputLevels[line] ?? false) != active
            state.inputLevels[line] = active
            return (state.inputs[line], changed ? state.inputObservers : [])
        }
        for observer in observers { observer(line, active) }
        if let target { target.group.change(target.index, to: active, at: instant ?? timekeeper.now) }
    }

    /// Whether an output line is active now.
    public func isActive(_ line: LineReference) -> Bool {
        state.withLock { $0.outputs[line] ?? false }
    }

    /// Called on every output change, from the thread that made it.
    public func observeOutputs(_ observer: @escaping LineObserver) {
        state.withLock { $0.observers.append(observer) }
    }

    /// Called on every change of an input's level, from the thread that drives it, before the
    /// edge is delivered.
    public func observeInputs(_ observer: @escaping LineObserver) {
        state.withLock { $0.inputObservers.append(observer) }
    }

    /// False when the line is not requested (released), as the kernel refuses such a write.
    @discardableResult
    fileprivate func setOutput(_ line: LineReference, active: Bool) -> Bool {
        let (held, observers) = state.withLock { state -> (Bool, [LineObserver]) in
            guard let level = state.outputs[line] else { return (false, []) }
            guard level != active else { return (true, []) }
            state.outputs[line] = active
            return (true, state.observers)
        }
        for observer in observers { observer(line, active) }
        return held
    }

    fileprivate func releaseOutputs(_ lines: [LineReference]) {
        for line in lines { setOutput(line, active: false) }
        state.withLock { state in
            for line in lines {
                state.outputs[line] = nil
                state.consumers[line] = nil
            }
        }
    }

    fileprivate func releaseInputs(of group: SimulatedInputGroup) {
        state.withLock { state in
            for (line, input) in state.inputs where input.group === group {
                state.inputs[line] = nil
                state.consumers[line] = nil
            }
        }
    }
}

final class SimulatedInputGroup: GPIOInputGroup {
    private struct State {
        var levels: [Bool]
        var deliver: (@Sendable ([LineEvent]) -> Void)?
    }

    private let chip: SimulatedGPIOChip
    private let state: Mutex<State>
    let isDebouncedByBackend = false

    init(chip: SimulatedGPIOChip, levels: [Bool]) {
        self.chip = chip
        state = Mutex(State(levels: levels))
    }

    func start(deliver: @escaping @Sendable ([LineEvent]) -> Void, lost: @escaping @Sendable () -> Void) {
        state.withLock { $0.deliver = deliver }
    }

    /// Delivered on the caller's thread, as the reader thread delivers real edges.
    func change(_ index: Int, to active: Bool, at instant: ContinuousClock.Instant) {
        let deliver = state.withLock { state in
            state.levels[index] = active
            return state.deliver
        }
        deliver?([LineEvent(index: index, isActive: active, at: instant)])
    }

    func currentValues() throws(GPIOError) -> [Bool] { state.withLock { $0.levels } }

    func release() {
        chip.releaseInputs(of: self)
        state.withLock { $0.deliver = nil }
    }
}

final class SimulatedOutputGroup: GPIOOutputGroup {
    private let chip: SimulatedGPIOChip
    private let lines: [LineReference]

    init(chip: SimulatedGPIOChip, lines: [LineReference]) {
        self.chip = chip
        self.lines = lines
    }

    func set(_ index: Int, active: Bool) throws(GPIOError) {
        guard chip.setOutput(lines[index], active: active) else {
            throw .ioFailure("line \(lines[index]) on \(chip.name) was released", origin: nil)
        }
    }

    func release() { chip.releaseOutputs(lines) }
}
