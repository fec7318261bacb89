import Foundation
import MDB
import MDBSocketSimulator
import SimulatedMDB
import Testing
import VendControl
import VenddTestSupport

/// The real vendd with a card reader (cashless #1, level 3, always idle) on the simulated MDB
/// interface: the sample configuration with its coin acceptor replaced by `mdb.cashless`.
@Suite(.oneRealProcessTestAtATime) struct CashlessProcessTests {
    final class Rig: @unchecked Sendable {
        // @unchecked: used from one test at a time.
        let reader = SimulatedCashlessReader(address: .cashless1)
        let mdb: MDBProcessTests.Rig
        var simulator: MDBSocketSimulator { mdb.simulator }
        var daemon: DaemonHarness { mdb.daemon }

        init() throws {
            mdb = try MDBProcessTests.Rig(
                devices: """
                      cashless:
                        - { reader: 1 }

                    """, readers: [reader])
        }

        func startSelling() throws {
            try daemon.start()
            try daemon.send(.restock(slot: "all", count: nil))
            guard simulator.wait(until: { _ in self.reader.state == .enabled }) else {
                throw HarnessError("vendd never enabled the card reader; log:\n\(daemon.allLogs)")
            }
        }

        /// What the reader charged net of refunds, in won (10 won per unit).
        var netCharged: Int { simulator.with { _ in Int(reader.charged.reduce(0, +)) * 10 - Int(reader.refunded.reduce(0, +)) * 10 } }

        /// A customer selects A1 (selection first); the reader has the VEND REQUEST and takes its
        /// time; vendd is killed before any approval.
        func killWhileAwaitingTheApproval() throws {
            try startSelling()
            simulator.with { _ in reader.faults.approvalPolls = 100_000 }
            try daemon.send(.sim(.press(slot: "A1")))
            try daemon.waitForLog("waiting for the approval")
            guard simulator.wait(until: { _ in self.reader.state == .vend }) else {
                throw HarnessError("the VEND REQUEST never reached the reader; log:\n\(daemon.allLogs)")
            }
            daemon.signal(SIGKILL)
            _ = try daemon.waitForExit()
        }

        func tearDown() { mdb.tearDown() }
    }

    /// A fresh machine with a reader: DA201/DA202 are "CM", "required if the device or feature
    /// is present in vending system" (EVA-DTS 6.1.1 p.33, p.41), so DA2 goes out with zeros
    /// before the first card sale; EA309/EA310 are "M" (p.39): EA3 with no read yet.
    @Test func aFreshMachineWithAReaderAuditsDA2AndEA3() throws {
        let rig = try Rig()
        defer { rig.tearDown() }
        try rig.startSelling()
        let path = rig.daemon.directory.path + "/fresh.dex"
        try rig.daemon.requireSuccess(rig.daemon.vendctl("audit", "--dex", path))
        let segments = try String(contentsOfFile: path, encoding: .utf8).components(separatedBy: "\r\n")
        #expect(segments.contains("DA2*0*0*0*0"), "\(segments)")
        #expect(!segments.contains { $0.hasPrefix("DB2*") }, "no reader #2 configured")
        let ea3 = try #require(segments.first { $0.hasPrefix("EA3*") })
        // EA301 0, EA302/EA303 when the file was made (YYMMDD, HHMM), no reader, no last read, EA309 0, EA310 0.
        let fields = ea3.split(separator: "*", omittingEmptySubsequences: false)
        #expect(fields.count == 11 && fields[1] == "0" && fields[2].count == 6 && fields[3].count == 4, "\(ea3)")
        #expect(fields[4...8].allSatisfy(\.isEmpty) && fields[9] == "0" && fields[10] == "0", "\(ea3)")
        print("fresh machine's audit:\n" + segments.joined(separator: "\n"))
        #expect(try rig.daemon.stop() == 0)
    }

    @Test func selectionFirstAndCardFirstVends() throws {
        let rig = try Rig()
        defer { rig.tearDown() }
        try rig.startSelling()
        // Selection first: press, then the reader asks for the card and approves.
        try rig.daemon.send(.sim(.press(slot: "A1")))  // 1,200 won
        _ = try rig.daemon.waitUntil("the card sale") { $0.books.cardSales?["cashless1"] == "1200" }
        // Card first: tap, then select within the card's funds (once the reader has been told
        // VEND SUCCESS and waits for a card again).
        #expect(rig.simulator.wait { _ in rig.reader.state == .enabled })
        rig.simulator.with { _ in rig.reader.presentCard(funds: 300) }
        _ = try rig.daemon.waitUntil("the card session") { $0.cardSession != nil }
        try rig.daemon.send(.sim(.press(slot: "A2")))
        let status = try rig.daemon.waitUntil("the second card sale") { $0.books.cardSales?["cashless1"] == "2400" && $0.cardSession == nil }
        #expect(status.books.sales == "0" && status.books.coinsIn == "0", "card money stays out of the cash books")
        #expect(status.books.itemsSold == 2)
        #expect(rig.netCharged == 2_400)
        let text = try rig.daemon.vendctl("status").output
        #expect(text.contains("card     ready: cashless #1: VSM SIM-READER"), "\(text)")
        // The DEX audit: both vends paid (VA1), none in cash (CA2), both on cashless #1 (DA2).
        let path = rig.daemon.directory.path + "/audit.dex"
        try rig.daemon.requireSuccess(rig.daemon.vendctl("audit", "--dex", path))
        let audit = try String(contentsOfFile: path, encoding: .utf8).components(separatedBy: "\r\n")
        #expect(audit.contains("VA1*2400*2*2400*2") && audit.contains("CA2*0*0*0*0") && audit.contains("DA2*2400*2*2400*2"), "\(audit)")
        print("DEX audit with card sales:\n" + audit.joined(separator: "\n"))
        try rig.daemon.waitForLog("approved by cashless #1 for")
        let log = rig.daemon.log.split(separator: "\n").filter { $0.contains("cashless #1") || $0.contains("CASHLESS=") }
        print("card vends in the journal:\n" + log.joined(separator: "\n"))
        #expect(try rig.daemon.stop() == 0)
        #expect(rig.reader.state == .disabled || rig.reader.state == .enabled)
    }

    /// SIGKILL after the approval is journaled and the relay has moved, before the outcome: at
    /// the restart the reader hears VEND FAILURE (unknown outcome, refund-credit) before any
    /// reset, and refunds the card; nothing is charged twice or kept.
    @Test func killedBetweenApprovalAndOutcomeTheReaderIsSettledBeforeAnyReset() throws {
        let rig = try Rig()
        defer { rig.tearDown() }
        try rig.startSelling()
        try rig.daemon.send(.sim(.drop(slot: "A1", succeeds: false)))  // the drop window stays open
        try rig.daemon.send(.sim(.press(slot: "A1")))
        try rig.daemon.waitForLog("approved by cashless #1 for")
        rig.daemon.signal(SIGKILL)
        _ = try rig.daemon.waitForExit()
        let resets = rig.simulator.with { $0.busResets }
        #expect(rig.simulator.with { _ in rig.reader.state } == .vend, "the reader still holds the approval")

        try rig.daemon.start()
        try rig.daemon.waitForLog("settled as not sold: VEND FAILURE acknowledged", timeout: 20)
        let status = try rig.daemon.waitUntil("the reader ready again") { $0.vendInProgress == nil && $0.cardReaders?.first?.ready == true }
        #expect(rig.simulator.with { _ in rig.reader.refunded } == [120], "VEND FAILURE reached the reader")
        #expect(rig.simulator.with { $0.busResets } == resets, "no bus reset before the settlement")
        #expect(rig.netCharged == 0)
        #expect(status.books.cardSales == nil && status.books.unknownOutcomes == 1)
        #expect(try rig.daemon.stop() == 0)
    }

    // MARK: - Card money as the reader keeps it

    /// vendd dies while the approval is awaited; the reader approves at that instant (the
    /// interface ACKs it, nobody journals it) and resets with the power: a sale to the reader.
    /// At the restart vendd cannot know: the price is booked possibly charged, and shown.
    @Test func aCutInTheApprovalWindowIsBookedPossiblyCharged() throws {
        let rig = try Rig()
        defer { rig.tearDown() }
        try rig.killWhileAwaitingTheApproval()
        rig.simulator.with { _ in
            rig.reader.approveUnheard()
            rig.reader.resetItself()
        }
        try rig.daemon.start()
        let status = try rig.daemon.waitUntil("the vend settled at start") { $0.books.cardPossiblyCharged?["cashless1"] == "1200" }
        #expect(rig.netCharged == 1_200, "the reader counted a sale")
        #expect(status.books.cardSales?["cashless1"] == nil, "nothing dropped, no sale")
        #expect(status.cardMoneyToCheck?.first?.contains("possibly charged") == true)
        let text = try rig.daemon.vendctl("status").output
        #expect(text.contains("card     CHECK cashless #1: 1,200원 possibly charged for 1 vend(s)"), "\(text)")
        try rig.daemon.waitForLog("may have charged 1,200원")
        #expect(try rig.daemon.stop() == 0)
    }

    /// Killed while the approval is awaited; at the restart the reader approves as it is
    /// cancelled, and its refund fails (MALFUNCTION C0): the refund lost is booked, said at crit.
    @Test func aRefundFailingAfterARestartIsBooked() throws {
        let rig = try Rig()
        defer { rig.tearDown() }
        try rig.killWhileAwaitingTheApproval()
        rig.simulator.with { _ in
            rig.reader.faults.approveOnCancel = true
            rig.reader.faults.refundFails = true
        }
        try rig.daemon.start()
        let status = try rig.daemon.waitUntil("the refund lost booked") { $0.books.cardRefundsLost == "1200" }
        #expect(status.books.cardRefundsLostByReader == ["cashless1": "1200"])
        #expect(rig.netCharged == 1_200)
        try rig.daemon.waitForLog("could not refund it")
        #expect(!rig.daemon.log.contains("the card is refunded 0"), "no refund claimed")
        #expect(try rig.daemon.stop() == 0)
    }

    /// Two selection-first customers, a denial between, then a card tapped: each session closed
    /// (SESSION COMPLETE, END SESSION), nothing out of sequence, no reset.
    @Test func selectionFirstSessionsAreClosedForTheNextCustomer() throws {
        let rig = try Rig()
        defer { rig.tearDown() }
        try rig.startSelling()
        try rig.daemon.send(.sim(.press(slot: "A1")))
        _ = try rig.daemon.waitUntil("the first sale") { $0.books.cardSales?["cashless1"] == "1200" }
        #expect(rig.simulator.wait { _ in rig.reader.state == .enabled })
        rig.simulator.with { _ in rig.reader.faults.deny = true }
        try rig.daemon.send(.sim(.press(slot: "A1")))
        try rig.daemon.waitForLog("denied by cashless #1")
        #expect(rig.simulator.wait { _ in rig.reader.state == .enabled })
        rig.simulator.with { _ in rig.reader.presentCard(funds: 300) }
        _ = try rig.daemon.waitUntil("the card session") { $0.cardSession != nil }
        try rig.daemon.send(.sim(.press(slot: "A2")))
        _ = try rig.daemon.waitUntil("the second sale") { $0.books.cardSales?["cashless1"] == "2400" }
        #expect(!rig.daemon.log.contains("OUT OF SEQUENCE"), "\(rig.daemon.log)")
        #expect(try rig.daemon.stop() == 0)
    }
}
