import Synchronization
import VendSettings
import VendingCore

/// What `vendctl sim motor` does to a simulated spiral motor's next turn.
public enum SimulatedMotorFault: String, Sendable, CaseIterable {
    /// The spiral stops away from home (its cam never comes back).
    case jam
    /// No motor on the line: the cam never leaves home.
    case missing
    /// The technician's hand: a stopped cam goes back home, faults are forgotten.
    case free
}

/// The simulated motors' wiring: which output lines power which motor (its own line, or a
/// matrix row and column both active), and each motor's turn in progress.
final class SimulatedMotors: Sendable {
    /// One turn of a motor; the world's timers check it is still the current one.
    struct Turn: Sendable, Equatable {
        let number: UInt64
        let jams: Bool
    }

    private struct State {
        var active: Set<String> = []
        var powered: Set<SlotID> = []
        var turns: [SlotID: Turn] = [:]
        var faults: [SlotID: SimulatedMotorFault] = [:]
        var count: UInt64 = 0
    }

    /// For each motor: the lines that must all be active to power it.
    private let wiring: [(slot: SlotConfig, spiral: SpiralConfig, lines: [String])]
    private let state = Mutex(State())

    init(slots: [SlotConfig], matrix: MotorMatrixConfig?, key: (String?, LineReference) -> String) {
        wiring = slots.compactMap { slot in
            guard let spiral = slot.spiral else { return nil }
            switch spiral.power {
            case .line(let line): return (slot, spiral, [key(line.chip, line.line)])
            case .matrix(let row, let column):
                guard let matrix else { return nil }
                let (rowLine, columnLine) = (matrix.rows[row], matrix.columns[column])
                return (slot, spiral, [key(rowLine.chip, rowLine.line), key(columnLine.chip, columnLine.line)])
            }
        }
    }

    /// An output line changed: the motors that just got power and those that lost it (a motor
    /// losing power stops where it is, its turn no longer current).
    func outputChanged(_ line: String, active: Bool) -> (started: [(SlotConfig, SpiralConfig)], stopped: [SpiralConfig]) {
        state.withLock { state in
            if active { state.active.insert(line) } else { state.active.remove(line) }
            var started: [(SlotConfig, SpiralConfig)] = []
            var stopped: [SpiralConfig] = []
            for motor in wiring {
                let powered = motor.lines.allSatisfy { state.active.contains($0) }
                let was = state.powered.contains(motor.slot.id)
                if powered, !was {
                    state.powered.insert(motor.slot.id)
                    started.append((motor.slot, motor.spiral))
                } else if !powered, was {
                    state.powered.remove(motor.slot.id)
                    state.turns[motor.slot.id] = nil
                    stopped.append(motor.spiral)
                }
            }
            return (started, stopped)
        }
    }

    func isPowered(_ slot: SlotID) -> Bool {
        state.withLock { $0.powered.contains(slot) }
    }

    /// A powered motor's turn begins, with the fault set for it (used up); nil for a missing motor.
    func startTurn(_ slot: SlotID) -> Turn? {
        state.withLock { state in
            let fault = state.faults.removeValue(forKey: slot)
            guard fault != .missing else { return nil }
            state.count += 1
            let turn = Turn(number: state.count, jams: fault == .jam)
            state.turns[slot] = turn
            return turn
        }
    }

    /// Whether `turn` is still the motor's turn under power.
    func isTurning(_ slot: SlotID, _ turn: Turn) -> Bool {
        state.withLock { $0.turns[slot] == turn }
    }

    func setFault(_ fault: SimulatedMotorFault?, of slot: SlotID) {
        state.withLock { $0.faults[slot] = fault }
    }
}
