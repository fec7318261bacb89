import Foundation
import Testing
import VendConfig
import VendSettings
import VendingCore

/// Drive types, the motor matrix and lines on several chips: what loads, and the exact message
/// each mistake gets.
@Suite struct MotorConfigTests {
    static let base = """
        machine:
          currency: { code: KRW, minor_digits: 0, format: "{amount}원" }
          maximum_credit: 10000
        gpio:
          chip: soc
        products:
          - { id: chips, name: Chips, category: [snack] }
        motors:
          rows: [{ line: 0, chip: mcp }, { line: 1, chip: mcp }]
          columns: [{ line: 8, chip: mcp }, { line: 9, chip: mcp }]
          home: { line: 30, active_low: true }
        slots:
          - id: A1
            product: chips
            price: 1000
            capacity: 5
            button: { line: 1 }
            drive: matrix
            motor: { row: 1, column: 1 }
          - id: A2
            product: chips
            price: 1000
            capacity: 5
            button: { line: 0 }
            drive: matrix
            motor: { row: 2, column: 2 }
          - id: S1
            product: chips
            price: 1000
            capacity: 5
            button: { line: 2 }
            drive: spiral
            motor: { line: 10 }
            home: { line: 21, chip: mcp }
        """

    @Test func aMatrixMachineLoadsWithItsLinesOnTheirChips() throws {
        let config = try ConfigLoader.parse(Self.base, file: "motors.yaml")
        let matrix = try #require(config.motorMatrix)
        #expect(matrix.rows.map(\.chip) == ["mcp", "mcp"])
        #expect(matrix.columns.map(\.line) == [.offset(8), .offset(9)])
        guard case .matrix(let row, let column) = config.slots[1].spiral?.power else {
            Issue.record("A2 is not a matrix motor")
            return
        }
        #expect((row, column) == (1, 1))
        #expect(config.slots[0].spiral?.home.line == .offset(30))  // the shared one
        #expect(config.slots[2].spiral?.home.chip == "mcp")
        #expect(config.slots[2].spiral?.timing == SpiralTiming(departureLimit: .seconds(1), turnLimit: .seconds(5), camDebounce: .milliseconds(20)))
        // Line 0 on the SoC (A2's button) and line 0 on the expander (row 1) are two lines.
        #expect(config.lines.filter { $0.line == .offset(0) }.map(\.chip) == [nil, "mcp"])
    }

    @Test func theResolvedFileReadsBackToTheSameDrives() throws {
        let config = try ConfigLoader.parse(Self.base, file: "motors.yaml")
        let again = try ConfigLoader.parse(config.resolvedYAML, file: "resolved.yaml")
        #expect(again.resolvedYAML == config.resolvedYAML)
        #expect(again.motorMatrix?.rows.count == 2)
    }

    static let cases: [(String, [(String, String)], [String])] = [
        (
            "a crossing that does not exist", [("motor: { row: 2, column: 2 }", "motor: { row: 3, column: 2 }")],
            ["motors.yaml:26:19: slots[A2].motor.row: row 3 does not exist: motors.rows has 2"]
        ),
        (
            "two slots on one motor", [("motor: { row: 2, column: 2 }", "motor: { row: 1, column: 1 }")],
            ["motors.yaml:24:21: slots[A2].motor: row 1, column 1 already drives slot A1; each matrix motor serves one slot"]
        ),
        (
            "a matrix motor with no home switch", [("  home: { line: 30, active_low: true }\n", "")],
            [
                "motors.yaml:12:5: slots[A1].home: this matrix motor has no home switch: give it 'home' here or a shared one in motors.home",
                "motors.yaml:19:5: slots[A2].home: this matrix motor has no home switch: give it 'home' here or a shared one in motors.home",
            ]
        ),
        (
            "a matrix with rows only", [("  columns: [{ line: 8, chip: mcp }, { line: 9, chip: mcp }]\n", "")],
            ["motors.yaml:9:3: motors.columns: a motor matrix needs both rows and columns; add 'columns'"]
        ),
        (
            "departure not shorter than the turn",
            [("  home: { line: 30, active_low: true }", "  home: { line: 30, active_low: true }\n  departure_ms: 5000")],
            [
                "motors.yaml:12:17: motors.departure_ms: 5000 ms is not shorter than turn_ms (5000 ms); the switch must leave home before the turn's limit"
            ]
        ),
        (
            "one line twice on the expander", [("home: { line: 21, chip: mcp }", "home: { line: 8, chip: mcp }")],
            [
                "motors.yaml:34:19: slots[S1].home.line: line 8 is already the motor matrix column 1 (motors.columns[1].line at line 10); each GPIO line can serve one purpose"
            ]
        ),
        (
            "an empty chip name", [("motor: { line: 10 }", "motor: { line: 10, chip: \"\" }")],
            [
                "motors.yaml:33:30: slots[S1].motor.chip: name the chip: gpiochip2, /dev/gpiochip2 or its label (see `gpiodetect`), or leave 'chip' out for gpio.chip"
            ]
        ),
        (
            "an unknown drive", [("drive: spiral", "drive: auger")],
            ["motors.yaml:32:12: slots[S1].drive: 'auger' is not one of 'relay', 'spiral' or 'matrix'"]
        ),
    ]

    @Test(arguments: cases.indices)
    func reportsExactlyTheseErrors(_ index: Int) throws {
        let (_, edits, expected) = Self.cases[index]
        var text = Self.base
        for (original, replacement) in edits {
            try #require(text.components(separatedBy: original).count == 2, "edit target must occur once: \(original)")
            text = text.replacingOccurrences(of: original, with: replacement)
        }
        let error = try #require(throws: ConfigError.self) { try ConfigLoader.parse(text, file: "motors.yaml") }
        #expect(error.diagnostics.map(\.description) == expected, "\(Self.cases[index].0)")
    }
}
