/// Columns aligned for a terminal, counting East Asian wide characters (한글, 漢字) as two cells
/// so that a table with prices in won still lines up.
public struct TextTable {
    public enum Alignment { case left, right }

    private let alignments: [Alignment]
    private var rows: [[String]] = []

    public init(_ alignments: [Alignment]) { self.alignments = alignments }

    public mutating func add(_ cells: [String]) { rows.append(cells) }

    public func render(indent: String = "") -> [String] {
        let widths = alignments.indices.map { column in
            rows.map { column < $0.count ? displayWidth($0[column]) : 0 }.max() ?? 0
        }
        return rows.map { row in
            let cells = alignments.indices.map { column -> String in
                let cell = column < row.count ? row[column] : ""
                let padding = String(repeating: " ", count: widths[column] - displayWidth(cell))
                return alignments[column] == .left ? cell + padding : padding + cell
            }
            return indent + trimmedTrailingSpaces(cells.joined(separator: "  "))
        }
    }

    private func trimmedTrailingSpaces(_ line: String) -> String {
        var line = line
        while line.last == " " { line.removeLast() }
        return line
    }
}

/// Terminal cells a string takes: 2 for wide characters, 1 otherwise.
public func displayWidth(_ text: String) -> Int {
    text.unicodeScalars.reduce(0) { width, scalar in
        switch scalar.value {
        case 0x1100...0x115F, 0x2E80...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F,
            0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x20000...0x3FFFD:
            width + 2
        default:
            width + 1
        }
    }
}
