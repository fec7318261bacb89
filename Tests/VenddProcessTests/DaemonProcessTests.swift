import Foundation
import Testing
import VendControl
import VendPOSIX
import VenddTestSupport
import VendingCore

/// The real daemon, in simulation, driven through its control socket.
@Suite(.oneRealProcessTestAtATime) struct DaemonProcessTests {
    @Test func buysAProductEndToEnd() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.send(.restock(slot: "A4", count: 3))
        for _ in 0..<3 { try daemon.send(.sim(.coin(amount: "500"))) }
        #expect(try daemon.status().credit == "1500")
        try daemon.send(.sim(.press(slot: "A4")))
        let after = try daemon.waitUntil("the sale") { $0.books.itemsSold == 1 && $0.vendInProgress == nil }
        #expect(after.credit == "0")
        #expect(after.slot("A4")?.stock == 2)
        #expect(after.books.sales == "1500")
        #expect(after.books.coinsIn == "1500")
        #expect(daemon.log.contains("vend#1 sold cola from slot A4 for 1,500원 (drop-sensor, cash)"))
        #expect(try daemon.stop() == 0)
    }

    @Test func aJammedSlotGivesTheCreditBack() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.send(.restock(slot: "B2", count: nil))
        try daemon.send(.sim(.coin(amount: "500")))
        try daemon.send(.sim(.coin(amount: "500")))
        try daemon.send(.sim(.drop(slot: "B2", succeeds: false)))
        try daemon.send(.sim(.press(slot: "B2")))
        let after = try daemon.waitUntil("the failed vend") { $0.books.failedVends == 1 && $0.vendInProgress == nil }
        #expect(after.credit == "1000")
        #expect(after.slot("B2")?.stock == 12)
        #expect(after.books.itemsSold == 0)
    }

    @Test func sigtermThenRestartRestoresTheIdenticalMachine() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.send(.restock(slot: "all", count: nil))
        for coin in ["500", "500", "100", "50"] { try daemon.send(.sim(.coin(amount: coin))) }
        try daemon.send(.sim(.press(slot: "A3")))
        _ = try daemon.waitUntil("the sale") { $0.books.itemsSold == 1 && $0.vendInProgress == nil }
        try daemon.send(.sim(.coin(amount: "500")))
        let before = try daemon.status()
        #expect(try daemon.stop() == 0)
        let savedFirst = try StateFile.machine(in: daemon.stateDirectory)

        try daemon.start()
        let restored = try daemon.status()
        #expect(restored.credit == before.credit)
        #expect(restored.slots == before.slots)
        #expect(restored.books == before.books)
        #expect(try daemon.stop() == 0)
        let savedSecond = try StateFile.machine(in: daemon.stateDirectory)
        #expect(savedFirst == savedSecond)  // history, coin counters, cursors: everything
        #expect(savedSecond.ledger.history.count == 1)
        #expect(savedSecond.cashCounters.map(\.count) == [1, 1, 3])
    }

    @Test func sighupWithABrokenConfigKeepsTheOldOne() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.send(.restock(slot: "A1", count: 2))
        try daemon.send(.sim(.coin(amount: "500")))
        let original = try String(contentsOfFile: daemon.configPath, encoding: .utf8)
        try original.replacingOccurrences(
            of: "    price: 1200\n    capacity: 8\n    button: { line: 2,", with: "    prise: 1200\n    capacity: 8\n    button: { line: 2,"
        )
        .write(toFile: daemon.configPath, atomically: true, encoding: .utf8)
        daemon.signal(SIGHUP)
        try daemon.waitForLog("configuration NOT reloaded")
        #expect(daemon.log.contains("unknown key 'prise'; did you mean 'price'?"))
        let status = try daemon.status()
        #expect(status.slot("A1")?.priceText == "1,200원")
        #expect(status.credit == "500")
        #expect(status.state == "in-service")

        // A valid edit is applied without losing credit or stock.
        try original.replacingOccurrences(
            of: "    price: 1200\n    capacity: 8\n    button: { line: 2,", with: "    price: 1300\n    capacity: 8\n    button: { line: 2,"
        )
        .write(toFile: daemon.configPath, atomically: true, encoding: .utf8)
        daemon.signal(SIGHUP)
        try daemon.waitForLog("configuration reloaded")
        let reloaded = try daemon.status()
        #expect(reloaded.slot("A1")?.priceText == "1,300원")
        #expect(reloaded.slot("A1")?.stock == 2)
        #expect(reloaded.credit == "500")
        // The new hardware works: a purchase goes through.
        try daemon.send(.sim(.coin(amount: "500")))
        try daemon.send(.sim(.coin(amount: "500")))
        try daemon.send(.sim(.press(slot: "A1")))
        _ = try daemon.waitUntil("the sale after reload") { $0.books.itemsSold == 1 && $0.vendInProgress == nil }
        #expect(try daemon.stop() == 0)
    }

    @Test func aMalformedRequestGetsAnErrorAndChangesNothing() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.send(.restock(slot: "A1", count: 1))
        try daemon.send(.sim(.coin(amount: "100")))
        let before = try daemon.status()
        let socket = try UnixSocket.connect(to: daemon.socketPath)
        let cases: [(String, String)] = [
            ("this is not json", "bad-request"),
            (#"{"v":1,"op":"frobnicate"}"#, "bad-request"),
            (#"{"v":1,"op":"sim-press"}"#, "bad-request"),
            (#"{"v":1,"op":"sim-coin","amount":5}"#, "bad-request"),
            (#"{"v":2,"op":"status"}"#, "unsupported-version"),
            (#"{"v":1,"op":"sim-coin","amount":"1.5"}"#, "bad-request"),
            (#"{"v":1,"op":"sim-press","slot":"Z9"}"#, "bad-request"),
            (#"{"v":1,"op":"restock","slot":"A1","count":-3}"#, "rejected"),
            (#"{"v":1,"op":"sim-card","reader":1,"action":"steal"}"#, "bad-request"),
            (#"{"v":1,"op":"sim-card","reader":3,"action":"deny"}"#, "bad-request"),
            (#"{"v":1,"op":"sim-card","reader":1,"action":"tap","amount":"1.5"}"#, "bad-request"),
            (#"{"v":1,"op":"sim-card","reader":1,"action":"slow"}"#, "bad-request"),
            (#"{"v":1,"op":"sim-note","amount":"1000"}"#, "rejected"),
        ]
        for (line, code) in cases {
            try socket.write(line + "\n")
            let answer = try #require(try socket.readLine(limit: 1 << 20))
            let response = try JSONDecoder().decode(ControlResponse.self, from: Data(answer.utf8))
            #expect(!response.ok, "\(line)")
            #expect(response.error?.code.rawValue == code, "\(line) → \(answer)")
        }
        try socket.write(String(repeating: "x", count: ControlProtocol.maximumRequestBytes + 10) + "\n")
        let tooLong = try #require(try socket.readLine(limit: 1 << 20))
        #expect(tooLong.contains("longer than"))
        let after = try daemon.status()
        #expect(after == before)
        #expect(try daemon.stop() == 0)
    }

    @Test func watchStreamsEventsAsTheyHappen() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        let socket = try UnixSocket.connect(to: daemon.socketPath)
        try socket.write(#"{"v":1,"op":"watch"}"# + "\n")
        _ = try socket.readLine(limit: 1 << 20)
        try daemon.send(.restock(slot: "A1", count: 1))
        let line = try #require(try socket.readLine(limit: 1 << 20))
        let event = try JSONDecoder().decode(EventLine.self, from: Data(line.utf8))
        #expect(event.kind == "stock")
        #expect(event.text == "slot A1 (banana-milk): 0 → 1 items (restocked)")
    }

}

/// Reads the machine out of a state directory's snapshot (`state.json`: a header line, then JSON).
enum StateFile {
    static func machine(in directory: String) throws -> Machine {
        let data = try Data(contentsOf: URL(fileURLWithPath: directory + "/state.json"))
        guard let newline = data.firstIndex(of: UInt8(ascii: "\n")) else { throw HarnessError("state.json has no header line") }
        return try JSONDecoder().decode(MachineSnapshot.self, from: data[(newline + 1)...]).machine
    }
}

/// Who may change the machine: checked from the peer's credentials (SO_PEERCRED), so it needs a
/// second user; CI runs as root and can become `nobody`.
@Suite(.oneRealProcessTestAtATime) struct PermissionTests {
    static func vendctl(asNobody arguments: [String]) throws -> ProcessRun {
        try ProcessRun.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", builtProduct("vendctl")] + arguments)
    }

    @Test(.enabled(if: getuid() == 0, "needs root to act as another user (CI runs as root)"))
    func anyoneMayLookOnlyTechniciansMayChange() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        let look = try Self.vendctl(asNobody: ["--socket", daemon.socketPath, "status"])
        #expect(look.status == 0, "\(look.errors)")
        let change = try Self.vendctl(asNobody: ["--socket", daemon.socketPath, "restock", "A1"])
        #expect(change.status == 77)
        #expect(
            change.errors
                == "vendctl: permission denied: changing the machine needs root or membership in the 'vendtech' group (ask an administrator: usermod -aG vendtech $USER, then log in again)\n"
        )
        #expect(try daemon.status().totalStock == 0)
    }
}
