import Foundation
import Testing
import VendControl
import VenddTestSupport

/// `vendctl --json` for every command against the JSON schemas documented in docs/vendctl.md.
@Suite(.oneRealProcessTestAtATime) struct VendctlJSONTests {
    @Test func everyQueryMatchesItsDocumentedSchema() throws {
        let schemas = try DocumentedSchemas()
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.stockAndSell(sampleSales)
        try daemon.requireSuccess(daemon.vendctl("sim", "coin", "500"))
        let file = daemon.directory.path + "/audit.dex"
        let commands: [(schema: String, arguments: [String])] = [
            ("status", ["status"]), ("stock", ["stock"]), ("purchasable", ["purchasable"]),
            ("expired", ["expired", "--at", "2025-03-12"]), ("hot", ["hot"]), ("products", ["products"]),
            ("history", ["history", "--since", "2000-01-01", "--limit", "3"]), ("coins", ["coins"]),
            ("sales", ["report"]), ("sales", ["report", "--since", "2000-01-01"]), ("sales", ["audit", "--dex", file]),
        ]
        for (schema, arguments) in commands {
            let run = try DaemonHarness.vendctl(["--socket", daemon.socketPath, "--json"] + arguments)
            #expect(run.status == 0, "\(arguments): \(run.errors)")
            #expect(run.output.hasSuffix("\n") && run.output.dropLast().allSatisfy { $0 != "\n" }, "\(arguments): one line")
            #expect(try schemas.violations(of: schema, in: run.output) == [], "\(arguments)")
        }
        // The content, not only the shape: the same numbers as the typed protocol.
        let status = try daemon.status()
        let json = try daemon.vendctl("--json", "status").json()
        let books = (json["status"] as? [String: Any])?["books"] as? [String: Any]
        #expect(books?["itemsSold"] as? Int == status.books.itemsSold)
        #expect(books?["sales"] as? String == "5200")
    }

    @Test func changesAndRefusalsMatchTheirSchemas() throws {
        let schemas = try DocumentedSchemas()
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        for arguments in [
            ["restock", "A1", "2"], ["price", "A1", "1300"], ["service", "on"], ["service", "off"],
            ["sim", "coin", "500"], ["sim", "drop", "A1", "ok"], ["sim", "key", "on"], ["sim", "key", "off"],
            ["sim", "coin", "500"], ["sim", "coin", "500"], ["select", "A1"],
        ] {
            let run = try DaemonHarness.vendctl(["--socket", daemon.socketPath, "--json"] + arguments)
            #expect(run.status == 0, "\(arguments): \(run.errors)")
            #expect(try schemas.violations(of: "done", in: run.output) == [], "\(arguments)")
            if arguments.starts(with: ["sim", "key"]) {
                // `sim key` moves the switch; its position counts once debounced, after the answer.
                let on = arguments[2] == "on"
                _ = try daemon.waitUntil("the service key \(arguments[2])") { $0.serviceKey == on && ($0.state == "service-mode") == on }
            }
        }
        try daemon.requireSuccess(daemon.vendctl("service", "on"))
        let collected = try daemon.vendctl("--json", "cash", "collect")
        #expect(collected.status == 0, "\(collected.errors)")
        #expect(try schemas.violations(of: "collected", in: collected.output) == [])
        #expect(try schemas.violations(of: "coins", in: daemon.vendctl("--json", "cash").output) == [])
        try daemon.requireSuccess(daemon.vendctl("service", "off"))
        let refused = try daemon.vendctl("--json", "restock", "Z9")
        #expect(refused.status == 64)
        #expect(try schemas.violations(of: "failure", in: refused.output) == [])
        #expect(refused.errors.hasPrefix("vendctl: no slot Z9"))
        // 200 left over, and the sample machine cannot pay out: coin return says so.
        let kept = try daemon.vendctl("--json", "coin-return")
        #expect(kept.status == 1)
        #expect(try schemas.violations(of: "failure", in: kept.output) == [])
        #expect(kept.errors == "vendctl: this machine gives no change; the credit of 200원 stays for a purchase\n")
    }

    @Test func watchPrintsEventObjects() throws {
        let schemas = try DocumentedSchemas()
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        let watch = Process()
        watch.executableURL = URL(fileURLWithPath: builtProduct("vendctl"))
        watch.arguments = ["--socket", daemon.socketPath, "--json", "watch"]
        let output = Pipe()
        watch.standardOutput = output
        try watch.run()
        defer { if watch.isRunning { watch.interrupt() } }
        var reader = LineReader(output.fileHandleForReading)
        var line: String?
        let deadline = Date().addingTimeInterval(10)
        while line == nil, Date() < deadline {
            try daemon.requireSuccess(daemon.vendctl("restock", "A4", "1"))
            line = reader.next(timeout: 0.5)
        }
        let event = try #require(line)
        #expect(try schemas.violations(of: "event", in: event) == [])
        #expect(event.contains(#""kind":"stock""#))
    }

    /// What the display sends for a tap and for coin return, as documented.
    @Test func customerRequestsMatchTheirSchema() throws {
        let schemas = try DocumentedSchemas()
        for command in [ControlCommand.select(slot: "A1"), .coinReturn] {
            let line = String(decoding: try JSONEncoder().encode(ControlRequest(command)), as: UTF8.self)
            #expect(try schemas.violations(of: "customer-request", in: line) == [], "\(line)")
        }
    }

    /// The validator itself: a schema check that could not fail would prove nothing.
    @Test func theSchemaCheckCatchesUndocumentedMissingAndMistypedMembers() throws {
        let schemas = try DocumentedSchemas()
        #expect(try schemas.violations(of: "done", in: #"{"v":1,"ok":true,"message":"x"}"#) == [])
        #expect(try schemas.violations(of: "done", in: #"{"v":1,"ok":true,"message":"x","extra":1}"#) == ["$: 'extra' is not documented"])
        #expect(try schemas.violations(of: "done", in: #"{"v":1,"ok":true}"#) == ["$: 'message' is missing"])
        #expect(
            try schemas.violations(of: "coins", in: #"{"v":1,"ok":true,"coins":{"count":"1","total":"1.5.0","totalText":"","denominations":[]}}"#)
                == ["$.coins.count: string where the schema says integer", "$.coins.total: '1.5.0' does not match ^-?[0-9]+(\\.[0-9]+)?$"])
        #expect(try schemas.violations(of: "failure", in: #"{"v":1,"ok":false,"error":{"code":"oops","message":""}}"#).count == 1)
    }
}
