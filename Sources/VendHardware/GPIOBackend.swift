import VendSettings

/// A change of one requested input line, as the backend saw it. `isActive` already accounts for
/// active-low, so a pressed active-low button is active.
public struct LineEvent: Sendable, Equatable {
    /// The line's position in the request that produced it.
    public let index: Int
    public let isActive: Bool
    public let at: ContinuousClock.Instant

    public init(index: Int, isActive: Bool, at: ContinuousClock.Instant) {
        self.index = index
        self.isActive = isActive
        self.at = at
    }
}

/// Input lines requested together; edges of all of them arrive through one callback, in order.
public protocol GPIOInputGroup: Sendable {
    /// Starts delivering both-edge events: `deliver` gets every edge read in one wake-up, in
    /// order, on the backend's own thread (never busy-polled). `lost` is called once if the lines
    /// stop delivering (chip removed, driver error), never because of `release`.
    func start(deliver: @escaping @Sendable ([LineEvent]) -> Void, lost: @escaping @Sendable () -> Void)
    /// The lines' levels now (active = true), to start debouncing from the truth.
    func currentValues() throws(GPIOError) -> [Bool]
    /// True when the backend filters bounces itself (libgpiod v2's debounce period), so software
    /// debouncing is not needed.
    var isDebouncedByBackend: Bool { get }
    func release()
}

/// Output lines requested together, all inactive at request time.
public protocol GPIOOutputGroup: Sendable {
    func set(_ index: Int, active: Bool) throws(GPIOError)
    /// Drives every line inactive and gives the lines back; safe to call more than once.
    func release()
}

/// A GPIO chip: libgpiod on real hardware, memory in simulation. The same code above it runs on
/// both.
public protocol GPIOChipBackend: Sendable {
    var name: String { get }
    func requestInputs(_ lines: [InputLineConfig], consumer: String) throws(GPIOError) -> any GPIOInputGroup
    /// Outputs are requested with their inactive level already set, so nothing twitches.
    func requestOutputs(_ lines: [OutputLineConfig], consumer: String) throws(GPIOError) -> any GPIOOutputGroup
}

/// What went wrong with a line or chip, told for the technician: each names the config key
/// that asked for the line and what to do.
public enum GPIOError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `origin`: the line that named the chip; nil for `gpio.chip`.
    case chipNotFound(String, available: [String], origin: ConfigOrigin? = nil)
    case permissionDenied(device: String)
    case lineNotFound(LineReference, origin: ConfigOrigin, chip: String, lineCount: Int)
    case lineBusy(LineReference, origin: ConfigOrigin, consumer: String)
    /// One offset reached under two spellings (`17` and `GPIO17`).
    case sameLine(LineReference, origin: ConfigOrigin, offset: Int, chip: String, other: LineReference, otherOrigin: ConfigOrigin)
    case ioFailure(String, origin: ConfigOrigin?)

    public var description: String {
        switch self {
        case .chipNotFound(let chip, let available, let origin):
            let list = available.isEmpty ? "no GPIO chips exist (is the gpio driver loaded?)" : "chips present: \(available.joined(separator: ", "))"
            guard let origin else { return "GPIO chip '\(chip)' (gpio.chip) not found; \(list)" }
            return "\(origin): GPIO chip '\(chip)' not found; \(list) (an expander's chip appears once its driver is loaded: see `gpiodetect`)"
        case .permissionDenied(let device):
            return
                "permission denied opening \(device): the vendd user must be in the 'gpio' group and the udev rule 60-vendd-gpio.rules installed (see README: Installing)"
        case .lineNotFound(let line, let origin, let chip, let lineCount):
            return "\(origin): line \(line) does not exist on \(chip) (it has lines 0 to \(lineCount - 1); see `gpioinfo \(chip)`)"
        case .lineBusy(let line, let origin, let consumer):
            let holder = consumer.isEmpty ? "another program" : "'\(consumer)'"
            return "\(origin): line \(line) is busy, held by \(holder); stop that program or choose another line"
        case .sameLine(let line, let origin, let offset, let chip, let other, let otherOrigin):
            return
                "\(origin): line \(line) is offset \(offset) on \(chip), already used as '\(other)' by \(otherOrigin); each GPIO line can serve one purpose"
        case .ioFailure(let message, let origin):
            return origin.map { "\($0): \(message)" } ?? message
        }
    }
}
