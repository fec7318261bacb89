import ArgumentParser
import VendControl
import VendingCore

struct Temps: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The temperature zones' recent history: one row a minute, lowest, highest and last reading.",
        discussion:
            "vendd keeps the last 24 hours in memory (a restart starts afresh). Temperatures are shown in machine.temperature_unit; --json gives exact degrees Celsius."
    )

    @OptionGroup var connection: Connection
    @Argument(help: "Only this zone, e.g. chilled.") var zone: String?
    @Option(help: ArgumentHelp("How far back to show, in minutes (1440 is the whole day kept).", valueName: "minutes"))
    var minutes: Int = 60

    func validate() throws {
        guard minutes >= 1 else { throw ValidationError("--minutes must be at least 1") }
    }

    func run() throws {
        try reporting {
            try connection.show(.temps(zone: zone, minutes: minutes), { $0.temps }) { Self.render($0) }
        }
    }

    /// A heading and a table per zone; a minute whose reads all failed says how many did.
    static func render(_ report: TempsReport) -> String {
        let unit = TemperatureUnit(rawValue: report.temperatureUnit) ?? .celsius
        return report.zones.map { zone in
            let heading = "zone \(zone.id) (\(zone.kind)), \(unit.symbol), a row per \(zone.intervalSeconds) s:"
            guard !zone.samples.isEmpty else { return heading + "\n  no readings yet" }
            let rows = zone.samples.map { sample in
                [
                    dateText(sample.at), sample.lowest.map(unit.number(decimalCelsius:)) ?? "-",
                    sample.highest.map(unit.number(decimalCelsius:)) ?? "-", sample.last.map(unit.number(decimalCelsius:)) ?? "-",
                    sample.faults == 0 ? "" : "\(sample.faults)",
                ]
            }
            return heading + "\n"
                + table([.left, .right, .right, .right, .right], header: ["minute", "lowest", "highest", "last", "failed reads"], rows: rows)
        }.joined(separator: "\n\n")
    }
}
