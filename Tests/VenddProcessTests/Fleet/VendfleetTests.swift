import Foundation
import Testing
import VenddTestSupport

/// The fleet console against a real Mosquitto, fed retained messages as vendd publishes them
/// (docs/mqtt.md): it says when it cannot reach the broker, shows zone locks, jams, cash and card
/// sales with the currency's formatting, when an offline machine was last heard of, and redraws
/// only on a change.
@Suite(.oneRealProcessTestAtATime) struct VendfleetTests {
    /// 2026-11-27 10:00:00 and 12:30:00 UTC.
    static let earlier: Int64 = 1_795_773_600_000
    static let later: Int64 = 1_795_782_600_000

    static func vendfleet(_ arguments: [String]) throws -> ProcessRun {
        try ProcessRun.run(builtProduct("vendfleet"), arguments, environment: ["TZ": "UTC"])
    }

    func options(_ rig: FleetRig, user: String = MosquittoBroker.fleetUser) throws -> [String] {
        ["--broker", rig.broker.url, "--ca-file", rig.broker.caFile, "--credentials-file", try rig.broker.credentialsFile(for: user)]
    }

    @Test func withoutABrokerItSaysWhatToCheckAndExits69() throws {
        let port = try LocalPort.reserve()
        let run = try Self.vendfleet(["--broker", "mqtt://127.0.0.1:\(port)", "--listen-seconds", "1", "--connect-seconds", "1"])
        #expect(run.status == 69)
        #expect(run.output.isEmpty, "an empty table reads as 'no machines': \(run.output)")
        #expect(
            run.errors.hasPrefix(
                "vendfleet: cannot reach the broker at mqtt://127.0.0.1:\(port) within 1 s (Connection refused): check the host and port, that the broker runs and listens there, the firewall; nothing is shown"
            ), "\(run.errors)")

        // A broker that refuses the user says so, and that is no fleet either.
        let rig = try FleetRig()
        defer { rig.tearDown() }
        try rig.broker.start()
        let password = rig.directory.path + "/wrong.credentials"
        try "fleet:wrong".write(toFile: password, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: password)
        let refused = try Self.vendfleet([
            "--broker", rig.broker.url, "--ca-file", rig.broker.caFile, "--credentials-file", password, "--listen-seconds", "1",
        ])
        #expect(refused.status == 69)
        #expect(refused.output.isEmpty)
        #expect(refused.errors.contains("vendfleet: the broker at \(rig.broker.url) refused the connection ("), "\(refused.errors)")
        #expect(refused.errors.contains("check --credentials-file and the broker's password file and ACL"), "\(refused.errors)")

        // Reachable with no machine: said in words, exit 0.
        let empty = try Self.vendfleet(try options(rig) + ["--listen-seconds", "1"])
        #expect(empty.status == 0, "\(empty.errors)")
        #expect(empty.output.hasPrefix("no machine has reported under vendd/ on this broker yet"), "\(empty.output)")
    }

    @Test func locksJamsSalesAndOfflineMachinesAreShownFormatted() throws {
        let rig = try FleetRig()
        defer { rig.tearDown() }
        try rig.broker.start()
        // m1 online: a jammed slot, a slot locked by its zone, cash and card sales.
        try rig.publish(
            as: "m1", "vendd/m1/state",
            #"{"machine":"m1","online":true,"state":"in-service","credit":"500","currency":"KRW","at":\#(Self.later)}"#, retain: true)
        try rig.publish(
            as: "m1", "vendd/m1/stock",
            #"{"machine":"m1","currency":"KRW","slots":[{"slot":"A1","product":"cola","price":"1500","available":0,"stock":6,"capacity":10,"fault":"jammed"},{"slot":"B1","product":"milk","price":"1200","available":0,"stock":8,"capacity":8,"healthLock":"cold"}],"at":\#(Self.later)}"#,
            retain: true)
        try rig.publish(
            as: "m1", "vendd/m1/cash",
            #"{"machine":"m1","currency":"KRW","coinsIn":"13000","sales":"12400","refunds":"0","cardSales":{"cashless1":"3000","cashless2":"1500"},"at":\#(Self.later)}"#,
            retain: true)
        try rig.publish(
            as: "m1", "vendd/m1/zones/cold",
            #"{"machine":"m1","zone":"cold","kind":"cold","health":"locked","cause":"above 5 °C for 2 h","at":\#(Self.later)}"#, retain: true)
        // m2 went away: its last will (no time) over the state; its cash was last sent earlier.
        try rig.publish(
            as: "m2", "vendd/m2/cash",
            #"{"machine":"m2","currency":"EUR","coinsIn":"1234.50","sales":"1200.00","refunds":"0.00","at":\#(Self.earlier)}"#,
            retain: true)
        try rig.publish(
            as: "m2", "vendd/m2/state", #"{"machine":"m2","online":false,"state":"offline","reason":"connection lost"}"#, retain: true)

        let run = try Self.vendfleet(try options(rig) + ["--listen-seconds", "2"])
        #expect(run.status == 0, "\(run.errors)")
        print("vendfleet:\n\(run.output)")
        let lines = run.output.split(separator: "\n").map(String.init)
        #expect(
            lines.first?.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
                == "machine state last seen credit cash sales card sales stock alerts faults")
        let m1 = try #require(lines.first { $0.hasPrefix("m1 ") })
        for expected in [
            "in-service", "2026-11-27 12:30:00", "500 KRW", "12,400 KRW", "4,500 KRW", "zone cold LOCKED (above 5 °C for 2 h); A1 jammed",
        ] {
            #expect(m1.contains(expected), "\(expected) in: \(m1)")
        }
        let m2 = try #require(lines.first { $0.hasPrefix("m2 ") })
        for expected in ["offline", "2026-11-27 10:00:00", "1,200.00 EUR", "0.00 EUR"] {
            #expect(m2.contains(expected), "\(expected) in: \(m2)")
        }
        #expect(!run.output.contains("12400"), "an unformatted amount")

        let won = try Self.vendfleet(try options(rig) + ["--listen-seconds", "1", "--money-format", "{amount}원"])
        #expect(won.output.split(separator: "\n").first { $0.hasPrefix("m1 ") }?.contains("12,400원") == true, "\(won.output)")
        let badFormat = try Self.vendfleet(try options(rig) + ["--money-format", "KRW"])
        #expect(badFormat.status == 64)
        #expect(badFormat.errors.contains("--money-format 'KRW' must contain {amount} exactly once"), "\(badFormat.errors)")
    }

    @Test func liveModeRedrawsOnlyWhatChangedAndAtMostOncePerRefresh() throws {
        let rig = try FleetRig()
        defer { rig.tearDown() }
        try rig.broker.start()
        try rig.publish(
            as: "m1", "vendd/m1/cash", #"{"machine":"m1","currency":"KRW","coinsIn":"0","sales":"0","refunds":"0"}"#, retain: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: builtProduct("vendfleet"))
        process.arguments = try options(rig) + ["--refresh-seconds", "1"]
        process.environment = ProcessInfo.processInfo.environment.merging(["TZ": "UTC"]) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        Thread.sleep(forTimeInterval: 2)
        // 20 changes in quick succession, then quiet.
        for sale in 1...20 {
            try rig.publish(
                as: "m1", "vendd/m1/cash", #"{"machine":"m1","currency":"KRW","coinsIn":"0","sales":"\#(sale * 1000)","refunds":"0"}"#,
                retain: true)
        }
        Thread.sleep(forTimeInterval: 4)
        process.terminate()
        process.waitUntilExit()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let tables = text.components(separatedBy: "\n\n").filter { $0.contains("machine ") }
        // The first table, then at most one per second while the changes came, none once quiet.
        #expect(tables.count >= 2, "\(text)")
        #expect(tables.count <= 2 + 20 / 4, "\(tables.count) tables for 20 changes:\n\(text)")
        #expect(tables.last?.contains("20,000 KRW") == true, "the last table shows the last change:\n\(text)")
        #expect(Set(tables).count == tables.count, "a table printed again without a change")
    }
}
