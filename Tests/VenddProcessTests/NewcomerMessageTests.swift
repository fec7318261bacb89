import Foundation
import Synchronization
import Testing
import VendControl
import VenddTestSupport

/// What a new technician meets in the first hour, as vendctl and the log say it (issue 35).
@Suite(.oneRealProcessTestAtATime) struct NewcomerMessageTests {
    @Test func aTypoedCommandGetsTheNearestOne() throws {
        let run = try DaemonHarness.vendctl(["--socket", "/nonexistent.sock", "stauts"])
        #expect(run.status == 64)
        #expect(run.errors.contains("did you mean 'status'?"), "\(run.errors)")
        let sub = try DaemonHarness.vendctl(["--socket", "/nonexistent.sock", "sim", "cion", "500"])
        #expect(sub.status == 64)
        #expect(sub.errors.contains("did you mean 'coin'?"), "\(sub.errors)")
    }

    /// The Debian package writes the completions with the parser's own option; its value is no typo.
    @Test func theCompletionScriptIsNotTakenForATypo() throws {
        for shell in ["bash", "zsh", "fish"] {
            let run = try DaemonHarness.vendctl(["--generate-completion-script", shell])
            #expect(run.status == 0, "\(shell): \(run.errors)")
            #expect(run.output.contains("vendctl"), "\(shell)")
        }
    }

    @Test func aDecimalCommaOnAEuroMachineIsAnsweredWithTheAmountToType() throws {
        let daemon = try DaemonHarness(config: "config/examples/cctalk-euro.yaml")
        defer { daemon.tearDown() }
        try daemon.start()
        for arguments in [["sim", "coin", "0,50"], ["price", "11", "1,50"]] {
            let run = try DaemonHarness.vendctl(["--socket", daemon.socketPath] + arguments)
            #expect(run.status == 64, "\(arguments): \(run.errors)")
            let typed = arguments.last!
            #expect(
                run.errors.contains("'\(typed)' is not a decimal amount: write it with a point, \(typed.replacingOccurrences(of: ",", with: "."))"),
                "\(arguments): \(run.errors)")
        }
    }

    @Test func zoneServiceOnAMachineWithoutZonesSaysSo() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.requireSuccess(daemon.vendctl("service", "on"))
        let run = try daemon.vendctl("zone", "service", "chilled")
        #expect(run.status == 64)
        #expect(run.errors == "vendctl: this machine has no temperature zones (zones: in the file)\n")
    }

    @Test func watchSaysWhenVenddStops() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        let watch = Process()
        watch.executableURL = URL(fileURLWithPath: builtProduct("vendctl"))
        watch.arguments = ["--socket", daemon.socketPath, "watch"]
        let errors = Pipe(), output = Pipe()
        watch.standardError = errors
        watch.standardOutput = output
        try watch.run()
        defer { if watch.isRunning { watch.terminate() } }
        // Subscribed once it prints the event of a coin put in after it started.
        let printed = Printed()
        output.fileHandleForReading.readabilityHandler = { handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            printed.text.withLock { $0 += text }
        }
        for _ in 0..<50 where printed.text.withLock({ $0.isEmpty }) {
            // Refused while the acceptor starts up (no event then): tried again.
            _ = try? daemon.client().send(.sim(.coin(amount: "500")))
            _ = try? daemon.client().send(.coinReturn)
            usleep(100_000)
        }
        #expect(printed.text.withLock { !$0.isEmpty }, "watch printed no event")
        #expect(try daemon.stop() == 0)
        let deadline = Date().addingTimeInterval(10)
        while watch.isRunning, Date() < deadline { usleep(10_000) }
        #expect(!watch.isRunning)
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(watch.terminationStatus == 69, "\(said)")
        #expect(said.contains("vendctl: vendd stopped"), "\(said)")
    }
}

extension NewcomerMessageTests {
    /// Every MDB device is named in the log, amounts are in the machine's format, a coin or note
    /// the file disables says so, and the audit says what its cash in is.
    @Test func mdbDevicesAreNamedAndAmountsFormatted() throws {
        let daemon = try DaemonHarness(config: DaemonHarness.sampleMachine)
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.send(.restock(slot: "all", count: nil))
        _ = try daemon.waitUntil("the card reader ready") { $0.cardReaders?.first?.ready == true }
        let ten = try daemon.vendctl("sim", "coin", "10")
        #expect(ten.status == 1)
        #expect(ten.errors.contains("coin of 10원 returned: mdb.changer.coins[0] is `enabled: false` in "), "\(ten.errors)")
        let fifty = try daemon.vendctl("sim", "note", "50000")
        #expect(fifty.errors.contains("note of 50,000원 returned: mdb.bill_validator.bills[3] is `enabled: false` in "), "\(fifty.errors)")
        let seven = try daemon.vendctl("sim", "coin", "7")
        #expect(seven.status == 64, "an amount no coin is worth is a wrong argument: \(seven.errors)")

        try daemon.requireSuccess(daemon.vendctl("sim", "note", "1000"))
        try daemon.requireSuccess(daemon.vendctl("sim", "coin", "500"))
        try daemon.send(.sim(.press(slot: "A1")))
        _ = try daemon.waitUntil("the change paid") { $0.books.changePaid == "300" && $0.payoutInProgress == nil }
        try daemon.waitForLog("coin changer: paid 300원 of 300원 (3 × 100원)")
        try daemon.waitForLog("bill validator: bill of type 0 (1,000원) in escrow: stacking it")
        try daemon.waitForLog("cashless #1: VSM SIM-READER")
        try daemon.waitForLog(
            "coin changer: a coin of type 0 (10원) was returned to the customer: not credited (mdb.changer.coins[0] is enabled: false")
        #expect(!daemon.log.contains("coin acceptor: "), "no MDB device is called the coin acceptor")

        let audit = try daemon.vendctl("audit", "--dex", daemon.directory.path + "/audit.dex")
        #expect(audit.output.hasSuffix("cash in (CA3): 500원 in coins and 1,000원 in notes\n"), "\(audit.output)")
        let coins = try daemon.vendctl("coins")
        #expect(coins.output.contains("all of them went into the changer's tubes (change stock): none into the cash box"), "\(coins.output)")
    }

    /// A zone serviced while still past its limit: the answer says so and that the recovery
    /// window starts; the start-up line counts its locked slots as stocked and names the lock.
    @Test func aZoneServicedWhileStillTooWarmSaysSo() throws {
        let daemon = try HealthLockProcessTests.harness()
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.send(.restock(slot: "all", count: nil))
        try daemon.send(.sim(.temp(zone: "chilled", value: "9")))
        _ = try daemon.waitUntil("the chilled zone to lock") { $0.zones?.first?.lock != nil }
        daemon.signal(SIGTERM)
        _ = try daemon.waitForExit()
        try daemon.start()
        try daemon.waitForLog("slots stocked; not selling: A1, A2 locked by zone chilled's food-safety check (vendctl zone service chilled)")
        try daemon.send(.sim(.temp(zone: "chilled", value: "9")))
        _ = try daemon.waitUntil("the zone's reading") { $0.zones?.first?.temperature == "9.0" }
        try daemon.requireSuccess(daemon.vendctl("service", "on"))
        let serviced = try daemon.vendctl("zone", "service", "chilled")
        #expect(serviced.status == 0, "\(serviced.errors)")
        #expect(
            serviced.output.contains(
                "but it is still too warm: 9.0 °C, past its limit of 5.0 °C. Its recovery window of 1 s starts now: unless it is back within the limit by then, it locks again"
            ), "\(serviced.output)")
    }
}

/// What a child process printed so far, filled from its pipe's handler thread.
private final class Printed: Sendable {
    let text = Mutex("")
}
