import VendSettings

/// One turn of a spiral motor judged by its home (cam) switch, as a pure state machine: the
/// motor is powered at `startedAt` with the switch at home; the switch must leave home within
/// the departure limit (else the motor is missing or stalled) and come back within the turn
/// limit (else the spiral is jammed). A change of the switch counts once it has held for the cam
/// debounce, and counts as of when it began, as the drop sensor's edges do. It reads no clock:
/// the driver feeds it edges and the passing of time, and asks when next to look.
public struct SpiralCycle: Sendable {
    public enum Result: Sendable, Equatable {
        /// Left home and came back: one full turn, `after` the motor was powered.
        case turned(after: Duration)
        /// The switch never left home: no motor, a broken coupling, or a motor that cannot start.
        case noDeparture
        /// The switch left home but never came back: something holds the spiral.
        case noReturn
    }

    private enum Phase: Sendable {
        case leavingHome, returningHome, ended
    }

    private let timing: SpiralTiming
    private let startedAt: ContinuousClock.Instant
    private var phase = Phase.leavingHome
    /// The switch's level as debounced.
    private var atHome = true
    /// A change not yet held for the debounce period: the new level and when it began.
    private var pending: (atHome: Bool, since: ContinuousClock.Instant)?

    public init(timing: SpiralTiming, startedAt: ContinuousClock.Instant) {
        self.timing = timing
        self.startedAt = startedAt
    }

    /// When the cycle must be looked at again (`timePassed`) if no edge comes first; nil once
    /// it has ended.
    public var nextDeadline: ContinuousClock.Instant? {
        guard let limit = phaseLimit else { return nil }
        guard let pending else { return limit }
        let confirmed = pending.since + timing.camDebounce
        // A change begun before the limit is judged first: it may still count.
        return pending.since <= limit ? confirmed : min(confirmed, limit)
    }

    /// The home switch went to `atHome` at `instant` (a raw edge, bounces included).
    public mutating func homeSwitch(atHome level: Bool, at instant: ContinuousClock.Instant) -> Result? {
        if let result = timePassed(to: instant) { return result }
        guard phase != .ended else { return nil }
        if level == atHome {
            pending = nil  // a bounce: back where it was before it held
        } else if pending == nil {
            pending = (level, instant)
        }
        return nil
    }

    /// Time is now `now`: confirms a change that held, or ends the cycle at a passed limit.
    public mutating func timePassed(to now: ContinuousClock.Instant) -> Result? {
        guard phase != .ended else { return nil }
        if let change = pending, now >= change.since + timing.camDebounce, let limit = phaseLimit, change.since <= limit {
            pending = nil
            atHome = change.atHome
            switch (phase, atHome) {
            case (.leavingHome, false): phase = .returningHome
            case (.returningHome, true):
                phase = .ended
                return .turned(after: change.since - startedAt)
            default: break
            }
        }
        guard let limit = phaseLimit, now >= limit, pending.map({ $0.since > limit }) ?? true else { return nil }
        let result: Result = phase == .leavingHome ? .noDeparture : .noReturn
        phase = .ended
        pending = nil
        return result
    }

    private var phaseLimit: ContinuousClock.Instant? {
        switch phase {
        case .leavingHome: startedAt + timing.departureLimit
        case .returningHome: startedAt + timing.turnLimit
        case .ended: nil
        }
    }
}
