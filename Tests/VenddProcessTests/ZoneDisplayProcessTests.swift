import Foundation
import Testing
import VendControl
import VenddTestSupport

/// `vendctl temps` and the zones in `vendctl status` through the real vendd, shown in °F by
/// `machine.temperature_unit` while the JSON answers stay in exact °C.
@Suite(.oneRealProcessTestAtATime) struct ZoneDisplayProcessTests {
    @Test func tempsAndStatusShowTheFilesUnit() throws {
        let daemon = try DaemonHarness(config: "config/examples/chilled-food.yaml") {
            $0.replacingOccurrences(of: "  maximum_credit: \"10.00\"", with: "  maximum_credit: \"10.00\"\n  temperature_unit: F")
                .replacingOccurrences(
                    of: "    health: { limit: 5, trip_s: 900 }", with: "    read_interval_s: 1\n    health: { limit: 5, trip_s: 900 }")
        }
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.send(.sim(.temp(zone: "chilled", value: "5")))
        let deadline = Date().addingTimeInterval(10)
        var answer = try daemon.send(.temps(zone: "chilled", minutes: nil)).temps
        while answer?.zones.first?.samples.last?.last != "5.0" {
            guard Date() < deadline else { throw HarnessError("the chilled zone never read 5 °C; last: \(String(describing: answer))") }
            usleep(50_000)
            answer = try daemon.send(.temps(zone: "chilled", minutes: nil)).temps
        }
        #expect(answer?.temperatureUnit == "F" && answer?.zones.map(\.id) == ["chilled"] && answer?.zones.first?.intervalSeconds == 60)

        let run = try daemon.vendctl("temps", "chilled")
        #expect(run.status == 0)
        let lines = run.output.split(separator: "\n").map(String.init)
        #expect(lines.first == "zone chilled (cold), °F, a row per 60 s:")
        #expect(lines.dropFirst().first?.split(separator: " ") == ["minute", "lowest", "highest", "last", "failed", "reads"])
        #expect(lines.last?.hasSuffix(" 41.0") == true, "5 °C is 41 °F: \(run.output)")

        let all = try daemon.vendctl("temps")
        #expect(all.output.contains("zone soup (hot), °F, a row per 60 s:"))
        let status = try daemon.vendctl("status")
        #expect(status.output.contains("zone     chilled (cold) 41.0 °F, set 37.4 °F, relay"), "\(status.output)")
        #expect(status.output.contains("set 149.0 °F"), "the soup's 65 °C set point")

        let json = try daemon.vendctl("--json", "temps", "chilled")
        #expect(json.output.contains("\"last\":\"5.0\"") && json.output.contains("\"temperatureUnit\":\"F\""))
        let schemas = try DocumentedSchemas()
        #expect(try schemas.violations(of: "temps", in: json.output) == [])
        #expect(try schemas.violations(of: "status", in: daemon.vendctl("--json", "status").output) == [])
        let unknown = try daemon.vendctl("temps", "freezer")
        #expect(unknown.status == 64)
        #expect(unknown.errors.contains("no zone 'freezer' (zones: chilled, soup)"))
    }
}
