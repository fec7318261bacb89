import ArgumentParser
import VendReports
import VendText

/// Parses a date option (`--at`, `--since`, `--loaded`) in local time; a bad one is a usage error
/// that names the accepted formats.
func parseDate(_ text: String) throws -> Int64 {
    do {
        return try DateText.parse(text)
    } catch {
        throw ValidationError(error.description)
    }
}

/// A date for tables, in local time.
func dateText(_ milliseconds: Int64?) -> String {
    milliseconds.map { DateText.format($0) } ?? "-"
}

/// An aligned table under a header row, ready to print.
func table(_ alignments: [TextTable.Alignment], header: [String], rows: [[String]]) -> String {
    var table = TextTable(alignments)
    table.add(header)
    for row in rows { table.add(row) }
    return table.render().joined(separator: "\n")
}
