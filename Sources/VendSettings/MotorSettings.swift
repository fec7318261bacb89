/// How long a spiral motor may take for one turn, as its home (cam) switch tells it. The
/// defaults are a snack controller's (Crane): the switch leaves home within 1 s, the whole turn
/// ends within 5 s.
public struct SpiralTiming: Sendable, Equatable {
    /// The home switch must have left home this long after the motor was powered, or the motor
    /// is missing or stalled.
    public let departureLimit: Duration
    /// The home switch must be back home this long after the motor was powered, or the spiral
    /// is jammed.
    public let turnLimit: Duration
    /// A change of the home switch counts once it has held this long (the cam's contact bounces).
    public let camDebounce: Duration

    public init(departureLimit: Duration, turnLimit: Duration, camDebounce: Duration) {
        self.departureLimit = departureLimit
        self.turnLimit = turnLimit
        self.camDebounce = camDebounce
    }
}

/// What powers a spiral motor: a line of its own, or one row and one column of the motor matrix.
public enum MotorPower: Sendable {
    case line(OutputLineConfig)
    /// Indices into `MotorMatrixConfig.rows` and `.columns`.
    case matrix(row: Int, column: Int)
}

/// A spiral slot: the motor turns until its home switch has left home and come back.
public struct SpiralConfig: Sendable {
    public let power: MotorPower
    /// Active = the cam is at home. A matrix's shared home line appears in every slot using it.
    public let home: InputLineConfig
    public let timing: SpiralTiming

    public init(power: MotorPower, home: InputLineConfig, timing: SpiralTiming) {
        self.power = power
        self.home = home
        self.timing = timing
    }
}

/// How a slot's item is pushed out.
public enum SlotDrive: Sendable {
    /// A relay pulsed for a fixed time (a solenoid, a motor with its own cam circuit).
    case relay(RelayConfig)
    /// A spiral motor watched by its home switch, on its own line or in the matrix.
    case spiral(SpiralConfig)
}

/// Motors wired as a row × column matrix: energising one row line and one column line turns the
/// motor at their crossing. Only one motor runs at a time.
public struct MotorMatrixConfig: Sendable {
    public let rows: [OutputLineConfig]
    public let columns: [OutputLineConfig]

    public init(rows: [OutputLineConfig], columns: [OutputLineConfig]) {
        self.rows = rows
        self.columns = columns
    }
}
