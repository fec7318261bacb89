import Synchronization
import VendConfig

/// GPIO in memory: inputs are driven by `drive(_:active:)`, outputs are recorded and observed.
/// It behaves like the kernel where it matters: a line can be requested once, outputs start
/// inactive, released outputs go inactive.
public final class SimulatedGPIOChip: GPIOChipBackend {
    public typealias OutputObserver = @Sendable (LineReference, Bool) -> Void

    private struct State {
        var inputs: [LineReference: (group: SimulatedInputGroup, index: Int)] = [:]
        var inputLevels: [LineReference: Bool] = [:]
        var outputs: [LineReference: Bool] = [:]
        /// Who requested each line, as the kernel reports a busy line's consumer.
        var consumers: [LineReference: String] = [:]
        var observers: [OutputObserver] = []

        func checkFree(_ lines: [(LineReference, ConfigOrigin)]) throws(GPIOError) {
            for (line, origin) in lines {
                if let holder = consumers[line] { throw GPIOError.lineBusy(line, origin: origin, consumer: holder) }
            }
        }
    }

    public let name: String
    private let state = Mutex(State())

    public init(name: String = "simulated-gpio") {
        self.name = name
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
    public func drive(_ line: LineReference, active: Bool) {
        let target = state.withLock { state in
            state.inputLevels[line] = active
            return state.inputs[line]
        }
        if let target { target.group.change(target.index, to: active) }
    }

    /// Whether an output line is active now.
    public func isActive(_ line: LineReference) -> Bool {
        state.withLock { $0.outputs[line] ?? false }
    }

    /// Called on every output change, from the thread that made it.
    public func observeOutputs(_ observer: @escaping OutputObserver) {
        state.withLock { $0.observers.append(observer) }
    }

    fileprivate func setOutput(_ line: LineReference, active: Bool) {
        let observers = state.withLock { state -> [OutputObserver] in
            guard state.outputs[line] != nil, state.outputs[line] != active else { return [] }
            state.outputs[line] = active
            return state.observers
        }
        for observer in observers { observer(line, active) }
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
    let events: AsyncStream<LineEvent>
    private let continuation: AsyncStream<LineEvent>.Continuation
    private let chip: SimulatedGPIOChip
    private let levels: Mutex<[Bool]>
    let isDebouncedByBackend = false

    init(chip: SimulatedGPIOChip, levels: [Bool]) {
        self.chip = chip
        self.levels = Mutex(levels)
        (events, continuation) = AsyncStream.makeStream(of: LineEvent.self, bufferingPolicy: .unbounded)
    }

    func change(_ index: Int, to active: Bool) {
        levels.withLock { $0[index] = active }
        continuation.yield(LineEvent(index: index, isActive: active, at: .now))
    }

    func currentValues() throws(GPIOError) -> [Bool] { levels.withLock { $0 } }

    func release() {
        chip.releaseInputs(of: self)
        continuation.finish()
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
        chip.setOutput(lines[index], active: active)
    }

    func release() { chip.releaseOutputs(lines) }
}
