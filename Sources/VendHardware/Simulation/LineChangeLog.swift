import VendPOSIX
import VendSettings

/// Every level change of the simulated GPIO lines, for timing measurements from outside vendd
/// (`vendd run --simulate --line-log FILE`; scripts/bench/relay-pulse.py reads it). One text line
/// per change, `NANOSECONDS CHIP LINE in|out 1|0`: CLOCK_MONOTONIC when the line changed (as
/// the kernel stamps a real edge), the chip and line as the configuration names them, and the
/// new level (1 = active, active-low already accounted for).
///
/// The stamp is taken on the thread that changes the line, the relay lane's among them; the
/// file is written on a lane of its own, so no thread that moves a line waits on the file.
public final class LineChangeLog: Sendable {
    public enum Direction: String, Sendable {
        case input = "in"
        case output = "out"
    }

    private let lane: Lane<String>

    public init(path: String) throws(SystemError) {
        let file = try AppendFile(path)
        lane = Lane(name: "vendd-line-log")
        // Measurements, not books: a line the file cannot take is lost, and nothing else.
        lane.start { line in try? file.append(line) }
    }

    /// From any thread; stamps the change now.
    public func record(chip: String, line: LineReference, _ direction: Direction, active: Bool) {
        lane.put("\(MonotonicClock.nanoseconds) \(chip) \(line) \(direction.rawValue) \(active ? 1 : 0)\n")
    }

    /// Writes what was recorded and stops; later records are dropped.
    public func close() {
        lane.close()
    }
}
