import VendSettings
import VendYAML
import VendingCore

/// How a slot pushes its item out (`drive:`).
enum DriveKind: String, CaseIterable {
    case relay, spiral, matrix
}

/// The `motors:` section as read: the matrix lines, a shared home switch, the turn timing.
struct MotorsSection {
    var matrix: MotorMatrixConfig?
    var sharedHome: InputLineConfig?
    var timing = SpiralTiming(
        departureLimit: .milliseconds(Defaults.departureMilliseconds), turnLimit: .milliseconds(Defaults.turnMilliseconds),
        camDebounce: .milliseconds(Defaults.camDebounceMilliseconds))
    /// False when the section had a mistake (already reported): slots needing it are not judged again.
    var isValid = true
}

extension ConfigParser {
    /// `motors: {rows: [...], columns: [...], home: {...}, departure_ms, turn_ms, cam_debounce_ms}`.
    func parseMotors(_ section: MappingReader, gpio: GPIOSettings?) -> MotorsSection {
        var motors = MotorsSection()
        let rows = section.list("rows", required: false).map { lines($0, path: section.path.key("rows"), purpose: LineUse.Purpose.matrixRow) }
        let columns = section.list("columns", required: false).map {
            lines($0, path: section.path.key("columns"), purpose: LineUse.Purpose.matrixColumn)
        }
        let homeSection = section.nested("home", required: false)
        // The shared home line is recorded once here, not for each slot using it.
        motors.sharedHome = homeSection.flatMap { inputLine($0, gpio: gpio, purpose: .sharedHome) }
        let departure = section.milliseconds("departure_ms", in: 100...10_000, default: Defaults.departureMilliseconds)
        let turn = section.milliseconds("turn_ms", in: 500...30_000, default: Defaults.turnMilliseconds)
        let debounce = section.milliseconds("cam_debounce_ms", in: 0...500, default: Defaults.camDebounceMilliseconds)
        section.finish()
        if let departure, let turn, departure >= turn {
            sink.report(
                "\(departure.wholeMilliseconds) ms is not shorter than turn_ms (\(turn.wholeMilliseconds) ms); the switch must leave home before the turn's limit",
                at: section.value("departure_ms") ?? section.node, path: section.path.key("departure_ms"))
            motors.isValid = false
        }
        if let departure, let turn, let debounce {
            motors.timing = SpiralTiming(departureLimit: departure, turnLimit: turn, camDebounce: debounce)
        } else {
            motors.isValid = false
        }
        if homeSection != nil, motors.sharedHome == nil { motors.isValid = false }
        switch (rows, columns) {
        case (nil, nil): break
        case (let rows?, let columns?):
            guard let rows, let columns else {
                motors.isValid = false
                break
            }
            motors.matrix = MotorMatrixConfig(rows: rows, columns: columns)
        default:
            let missing = rows == nil ? "rows" : "columns"
            sink.report("a motor matrix needs both rows and columns; add '\(missing)'", at: section.node, path: section.path.key(missing))
            motors.isValid = false
        }
        return motors
    }

    /// A list of output lines (matrix rows or columns); nil if any is wrong (reported) or none given.
    private func lines(_ nodes: [Node], path: ConfigPath, purpose: (Int) -> LineUse.Purpose) -> [OutputLineConfig]? {
        if nodes.isEmpty { sink.report("give at least one line", at: nil as Node?, path: path) }
        let parsed = nodes.enumerated().map { index, node in
            MappingReader(node, path: path.element("\(index + 1)"), sink: sink).flatMap { outputLine($0, purpose: purpose(index)) }
        }
        let valid = parsed.compactMap { $0 }
        return valid.count == nodes.count && !valid.isEmpty ? valid : nil
    }

    /// The drive of one slot, from `drive:` and the keys it needs; nil when something is wrong
    /// (reported). Reads `relay`, `motor` and `home` from `section`.
    func slotDrive(_ section: MappingReader, slot: SlotID, gpio: GPIOSettings?, motors: MotorsSection?) -> SlotDrive? {
        let kind: DriveKind? = section.choice("drive", default: .relay)
        switch kind {
        case .relay:
            return section.nested("relay").flatMap { relayLine($0, purpose: .relay(slot)) }.map(SlotDrive.relay)
        case .spiral:
            let power = section.nested("motor").flatMap { outputLine($0, purpose: .motor(slot)) }
            let home = section.nested("home").flatMap { inputLine($0, gpio: gpio, purpose: .home(slot)) }
            guard let power, let home else { return nil }
            return .spiral(SpiralConfig(power: .line(power), home: home, timing: motors?.timing ?? MotorsSection().timing))
        case .matrix:
            let position = section.nested("motor").flatMap { matrixPosition($0, motors: motors) }
            let ownHome = section.nested("home", required: false).map { inputLine($0, gpio: gpio, purpose: .home(slot)) }
            guard let motors, motors.isValid else {
                if motors == nil {
                    sink.report(
                        "drive: matrix needs the top-level 'motors' section with its rows and columns", at: section.value("drive"),
                        path: section.path.key("drive"))
                }
                return nil
            }
            guard let home = ownHome ?? motors.sharedHome else {
                if ownHome == nil {
                    sink.report(
                        "this matrix motor has no home switch: give it 'home' here or a shared one in motors.home", at: section.node,
                        path: section.path.key("home"))
                }
                return nil
            }
            guard let position else { return nil }
            return .spiral(SpiralConfig(power: position, home: home, timing: motors.timing))
        case nil:
            // The drive's own keys are not reported as unknown on top of the wrong drive.
            for key in ["relay", "motor", "home"] { _ = section.value(key) }
            return nil
        }
    }

    /// `motor: {row: 2, column: 5}`, 1-based as the technician counts the wiring.
    private func matrixPosition(_ section: MappingReader, motors: MotorsSection?) -> MotorPower? {
        let row = section.int("row", in: 1...64)
        let column = section.int("column", in: 1...64)
        section.finish()
        guard let matrix = motors?.matrix, let row, let column else {
            // No motors section, or a wrong one, is reported where it is.
            if motors?.isValid == true, motors?.matrix == nil, row != nil, column != nil {
                sink.report("there is no motor matrix: add motors.rows and motors.columns", at: section.node, path: section.path)
            }
            return nil
        }
        if row > matrix.rows.count {
            sink.report(
                "row \(row) does not exist: motors.rows has \(matrix.rows.count)", at: section.value("row"), path: section.path.key("row"))
        }
        if column > matrix.columns.count {
            sink.report(
                "column \(column) does not exist: motors.columns has \(matrix.columns.count)", at: section.value("column"),
                path: section.path.key("column"))
        }
        guard row <= matrix.rows.count, column <= matrix.columns.count else { return nil }
        return .matrix(row: row - 1, column: column - 1)
    }

    /// Every motor of the matrix drives one slot: two slots at one crossing would turn together.
    func checkMatrixPositionsUsedOnce(_ slots: [SlotConfig]) {
        var first: [String: SlotConfig] = [:]
        for slot in slots {
            guard case .matrix(let row, let column) = slot.spiral?.power else { continue }
            let key = "\(row)/\(column)"
            if let other = first[key] {
                sink.report(
                    "row \(row + 1), column \(column + 1) already drives slot \(other.id); each matrix motor serves one slot",
                    at: slot.button.origin.location, path: "slots[\(slot.id)].motor")
            } else {
                first[key] = slot
            }
        }
    }
}
