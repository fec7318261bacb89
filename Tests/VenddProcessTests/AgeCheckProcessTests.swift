import Foundation
import Testing
import VendControl
import VenddTestSupport

/// Age-restricted selections on the real `vendd --simulate`: slot 2 of the minimal machine
/// restricted to 19+, its verifier a GPIO input driven by `vendctl sim verify-age`. Refused
/// without a verifier; sold after a verification; nothing moves when nobody verifies; and a
/// SIGKILL between the verification and the vend leaves the credit and the books as they were,
/// with the check to be done again.
@Suite(.oneRealProcessTestAtATime) struct AgeCheckProcessTests {
    static func daemon(verifier: Bool) throws -> DaemonHarness {
        try DaemonHarness(config: "config/examples/minimal.yaml") { text in
            let restricted = text.replacingOccurrences(
                of: "    capacity: 12\n    button: { line: 13", with: "    capacity: 12\n    restricted: age 19\n    button: { line: 13")
            return verifier
                ? restricted + "\nage_verification: { verifier: gpio, line: 26, active_low: true, bias: pull-up, timeout_s: 5 }\n" : restricted
        }
    }

    static func prepare(_ daemon: DaemonHarness, coins: [String]) throws {
        try daemon.start()
        try daemon.requireSuccess(daemon.vendctl("restock", "all"))
        for coin in coins { try daemon.requireSuccess(daemon.vendctl("sim", "coin", coin)) }
    }

    @Test func refusedWithoutAVerifier() throws {
        let daemon = try Self.daemon(verifier: false)
        defer { daemon.tearDown() }
        try Self.prepare(daemon, coins: ["1.00", "0.25"])
        let refused = try daemon.vendctl("select", "2")
        #expect(refused.status == 1)
        #expect(refused.errors.contains("slot 2 is sold only after an age check (19+) and this machine has no age verifier"), "\(refused.errors)")
        let status = try daemon.status()
        #expect(status.credit == "1.25" && status.vendsStarted == 0 && status.ageCheck == nil)
        // The verifier's simulated input does not exist either.
        #expect(try daemon.vendctl("sim", "verify-age").errors.contains("no age_verification"))
        #expect(try daemon.stop() == 0)
    }

    @Test func verifiedThenSold() throws {
        let daemon = try Self.daemon(verifier: true)
        defer { daemon.tearDown() }
        try Self.prepare(daemon, coins: ["1.00", "0.25"])
        try daemon.requireSuccess(daemon.vendctl("sim", "press", "2"))
        let waiting = try daemon.waitUntil("the age check") { $0.ageCheck != nil }
        #expect(waiting.ageCheck?.slot == "2" && waiting.ageCheck?.age == 19 && waiting.ageCheck?.approved == false)
        #expect(waiting.credit == "1.25" && waiting.vendsStarted == 0, "nothing moves before the verification")
        #expect(try daemon.vendctl("status").output.contains("\nage      slot 2 (19+): waiting for the age verifier\n"))
        try daemon.requireSuccess(daemon.vendctl("sim", "verify-age"))
        let sold = try daemon.waitUntil("the sale") { $0.books.itemsSold == 1 && $0.vendInProgress == nil }
        #expect(sold.credit == "0.00" && sold.books.sales == "1.25" && sold.ageCheck == nil)
        try daemon.waitForLog("slot 2: age (19+) verified")
        try daemon.waitForLog("age check (19+) ended: used")
        #expect(try daemon.stop() == 0)
    }

    @Test func timedOutMovesNothing() throws {
        let daemon = try Self.daemon(verifier: true)
        defer { daemon.tearDown() }
        try Self.prepare(daemon, coins: ["1.00", "0.25"])
        try daemon.requireSuccess(daemon.vendctl("sim", "press", "2"))
        _ = try daemon.waitUntil("the age check") { $0.ageCheck != nil }
        let ended = try daemon.waitUntil("the timeout", timeout: 15) { $0.ageCheck == nil }
        #expect(ended.credit == "1.25" && ended.vendsStarted == 0 && ended.books.itemsSold == 0)
        try daemon.waitForLog("age check (19+) ended: timed-out")
        // Too late: the verifier's signal sells nothing.
        try daemon.requireSuccess(daemon.vendctl("sim", "verify-age"))
        try daemon.waitForLog("refused: no age check is waiting for a verification")
        #expect(try daemon.status().vendsStarted == 0)
        #expect(try daemon.stop() == 0)
    }

    @Test func sigkillBetweenTheVerificationAndTheVend() throws {
        let daemon = try Self.daemon(verifier: true)
        defer { daemon.tearDown() }
        // Not enough credit yet: the approval waits for the payment.
        try Self.prepare(daemon, coins: ["1.00"])
        try daemon.requireSuccess(daemon.vendctl("sim", "press", "2"))
        _ = try daemon.waitUntil("the age check") { $0.ageCheck != nil }
        try daemon.requireSuccess(daemon.vendctl("sim", "verify-age"))
        let approved = try daemon.waitUntil("the approval") { $0.ageCheck?.approved == true }
        #expect(approved.credit == "1.00" && approved.vendsStarted == 0)

        daemon.signal(SIGKILL)
        _ = try daemon.waitForExit()
        try daemon.start()
        let restarted = try daemon.status()
        #expect(restarted.ageCheck == nil, "no approval survives a restart")
        #expect(restarted.credit == "1.00" && restarted.vendsStarted == 0 && restarted.books.itemsSold == 0)
        try daemon.waitForLog("age check (19+) ended: restarted")

        // The check must be done again.
        try daemon.requireSuccess(daemon.vendctl("sim", "coin", "0.25"))
        try daemon.requireSuccess(daemon.vendctl("sim", "press", "2"))
        let again = try daemon.waitUntil("a new age check") { $0.ageCheck != nil }
        #expect(again.ageCheck?.approved == false && again.vendsStarted == 0 && again.credit == "1.25")
        try daemon.requireSuccess(daemon.vendctl("sim", "verify-age"))
        let sold = try daemon.waitUntil("the sale") { $0.books.itemsSold == 1 && $0.vendInProgress == nil }
        #expect(sold.credit == "0.00")
        #expect(try daemon.stop() == 0)
    }

    /// `vendctl` at the reader's age prompt, which shows once DRAVS has reached the reader: the
    /// bus's next turn after the check began.
    static func atThePrompt(_ daemon: DaemonHarness, _ arguments: String...) throws -> ProcessRun {
        let deadline = Date().addingTimeInterval(5)
        while true {
            let result = try DaemonHarness.vendctl(["--socket", daemon.socketPath] + arguments)
            if result.status == 0 || Date() > deadline { return result }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// The sample machine's card reader checks the age itself (DRAVP/DRAVS, in-process): a
    /// customer too young is refused at the reader, an adult pays by card (selection first).
    @Test func theCardReaderChecksTheAge() throws {
        let daemon = try DaemonHarness(config: DaemonHarness.sampleMachine) { text in
            text.replacingOccurrences(
                of: "    capacity: 8\n    button: { line: 2,", with: "    capacity: 8\n    restricted: age 19\n    button: { line: 2,")
                + "\nage_verification: { verifier: reader, reader: 1, timeout_s: 30 }\n"
        }
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.requireSuccess(daemon.vendctl("restock", "all"))
        _ = try daemon.waitUntil("the card reader ready") { $0.cardReaders?.first?.ready == true }

        try daemon.requireSuccess(daemon.vendctl("sim", "press", "A1"))
        let asked = try daemon.waitUntil("the age check") { $0.ageCheck != nil }
        #expect(asked.ageCheck?.atReader == true && asked.ageCheck?.age == 19 && asked.vendsStarted == 0)
        // The reader prompts once DRAVS has reached it, on the bus's next turn.
        let young = try Self.atThePrompt(daemon, "sim", "card", "id", "16")
        #expect(young.output == "an ID showing age 16 at cashless #1\n")
        try daemon.waitForLog("age check (19+) ended: too-young")
        let refused = try daemon.waitUntil("the check over") { $0.ageCheck == nil }
        #expect(refused.vendsStarted == 0 && refused.books.cardSales?["cashless1"] == nil)

        try daemon.requireSuccess(daemon.vendctl("sim", "press", "A1"))
        _ = try daemon.waitUntil("a new age check") { $0.ageCheck != nil }
        _ = try Self.atThePrompt(daemon, "sim", "verify-age")
        let sold = try daemon.waitUntil("the card sale") { $0.books.cardSales?["cashless1"] == "1200" && $0.vendInProgress == nil }
        #expect(sold.ageCheck == nil && sold.books.sales == "0")
        try daemon.waitForLog("slot A1: age (19+) verified")
        #expect(try daemon.stop() == 0)
    }
}
