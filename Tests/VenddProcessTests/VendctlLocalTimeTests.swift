import Testing
import VenddTestSupport

/// Dates a technician types and reads are in local time, summer time included. The zone is a
/// POSIX TZ rule (Central European Time), so no time zone database is needed.
@Suite(.oneRealProcessTestAtATime) struct VendctlLocalTimeTests {
    static let centralEurope = ["TZ": "CET-1CEST,M3.5.0,M10.5.0/3"]

    static func vendctl(_ socket: String, _ arguments: String...) throws -> ProcessRun {
        try ProcessRun.run(builtProduct("vendctl"), ["--socket", socket] + arguments, environment: centralEurope)
    }

    @Test func datesAreReadAndShownInLocalSummerOrWinterTime() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        for (typed, shown) in [
            ("2025-07-01 12:00", "2025-07-01 12:00"), ("2025-07-01T12:00Z", "2025-07-01 14:00"),
            ("2025-01-15T12:00Z", "2025-01-15 13:00"), ("2025-10-26T00:30Z", "2025-10-26 02:30"),
            ("2025-10-26T01:30Z", "2025-10-26 02:30"),
        ] {
            let run = try Self.vendctl(daemon.socketPath, "expired", "--at", typed)
            #expect(run.status == 0, "\(typed): \(run.errors)")
            #expect(run.output == "nothing has expired at \(shown)\n", "\(typed)")
        }
    }

    /// 02:30 on the last Sunday of October happens twice (the clocks go back from 03:00 to 02:00):
    /// the first, still in summer time, is meant, as Foundation's calendar took it.
    @Test func aTimeRepeatedByTheChangeToWinterTimeIsTheFirst() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        let run = try Self.vendctl(daemon.socketPath, "--json", "expired", "--at", "2025-10-26 02:30")
        let at = (try run.json()["expired"] as? [String: Any])?["at"] as? Int
        #expect(at == 1_761_438_600_000, "\(run.output)")  // 2025-10-26T00:30Z
    }

    /// 02:30 on the last Sunday of March does not exist: the clocks go from 02:00 to 03:00.
    @Test func aTimeSkippedByTheChangeToSummerTimeIsNotADate() throws {
        let skipped = try Self.vendctl("/nonexistent.sock", "expired", "--at", "2025-03-30 02:30")
        #expect(skipped.status == 64)
        #expect(skipped.errors.contains("'2025-03-30 02:30' is not a date"))
        // An hour later is a date: vendctl gets as far as looking for vendd.
        #expect(try Self.vendctl("/nonexistent.sock", "expired", "--at", "2025-03-30 03:30").status == 69)
    }
}
