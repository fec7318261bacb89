import Foundation
import Testing
import VendConfig
import VendHardware
import VendTime
import VenddTestSupport
import VendingCore

@testable import VendDaemon

/// The sample machine with payout policy `change` and two simulated hoppers (500원 and 100원).
enum ChangeGivingSample {
    static func edit(_ sample: String) -> String {
        sample.replacingOccurrences(of: "  payout: none ", with: "  payout: change ")
            + """

            payout_devices:
              - { type: cctalk-hopper, coin: 500, address: 3 }
              - { type: cctalk-hopper, coin: 100, address: 4 }

            """
    }

    static func won(_ amount: Int64) -> Money { Money(minorUnits: amount, currency: Currency(code: "KRW", minorDigits: 0)) }

    /// Restocks A1 (1 200원), puts `coins` 500원 coins in and buys it; the vend ends, change starts.
    static func buy(with coins: Int, _ rig: ControllerRig) {
        rig.controller.sendAndWait(.restock("A1", count: nil, loadedAt: nil))
        for _ in 0..<coins { _ = rig.world.coinAcceptor.insert(won(500)) }
        rig.controller.sendAndWait(.slotSelected("A1"))
        // Until the vend ends (pulse, drop, outcome): the change starts then, within this step.
        for _ in 0..<50 where rig.controller.pendingVend != nil { rig.advance(by: .milliseconds(100)) }
    }

    static func hopperCoins(_ rig: ControllerRig) -> [Int?] {
        rig.hardware.payouts?.inventory().map(\.count) ?? []
    }
}

@Suite(.timeLimit(.minutes(5))) struct PayoutWiringTests {
    @Test func changeIsPaidByTheHoppersLargestCoinFirstAndRecorded() async throws {
        let rig = try ControllerRig(edit: ChangeGivingSample.edit)
        #expect(ChangeGivingSample.hopperCoins(rig) == [60, 60])
        ChangeGivingSample.buy(with: 4, rig)  // 2 000원 for 1 200원: 800원 change
        let paying = rig.controller.status().books
        #expect(paying.sales == "1200")
        rig.advance(by: .seconds(2))
        let machine = rig.controller.currentMachine
        #expect(machine.pendingPayout == nil)
        #expect(machine.ledger.changePaid == ChangeGivingSample.won(800))
        #expect(machine.credit.isZero)
        #expect(ChangeGivingSample.hopperCoins(rig) == [59, 57])
        #expect(machine.changeInventory.map(\.count) == [59, 57])
        #expect(machine.integrityProblems.isEmpty)
        await rig.tearDown()
    }

    /// A payout's end and the coins the devices hold after it are one journal record: a cut
    /// between two records can no longer leave the books paid and the tubes as they were.
    @Test func aPayoutsEndCarriesTheInventoryInTheSameJournalRecord() async throws {
        let rig = try ControllerRig(edit: ChangeGivingSample.edit)
        ChangeGivingSample.buy(with: 4, rig)
        rig.advance(by: .seconds(2))
        #expect(rig.controller.currentMachine.pendingPayout == nil)
        await rig.controller.detachHardware()
        rig.controller.closeStore()
        defer { rig.directory.remove() }
        let store = try MachineStore(directory: rig.directory.path)
        let inputs = try store.restore().entries.compactMap(\.input)
        store.close()
        let ends = inputs.indices.filter { if case .payoutEnded = inputs[$0] { true } else { false } }
        #expect(ends.count == 1)
        let end = try #require(ends.first)
        guard case .payoutEnded(_, let paid, _, _, let inventory) = inputs[end] else { return }
        #expect(paid == ChangeGivingSample.won(800))
        #expect(inventory?.map(\.count) == [59, 57])
        let later = inputs[(end + 1)...].filter { if case .changeInventory = $0 { true } else { false } }
        #expect(later.isEmpty, "\(later)")
    }

    /// A record without the inventory (as every record before it was carried) is written exactly
    /// in the old form and reads back without one.
    @Test func aPayoutEndRecordWithoutTheInventoryKeepsTheOldForm() throws {
        let ended = Input.payoutEnded(PayoutID(rawValue: 4), paid: ChangeGivingSample.won(800), unknown: ChangeGivingSample.won(0), counters: [:])
        let written = try JSONEncoder().encode(JournalEntry(at: Instant(millisecondsSinceEpoch: 1_700_000_000_000), input: ended))
        #expect(!String(decoding: written, as: UTF8.self).contains("inventory"))
        #expect(try JSONDecoder().decode(JournalEntry.self, from: written).input == ended)
    }

    @Test func aJammedHopperLeavesTheUnpaidRestInCredit() async throws {
        let rig = try ControllerRig(edit: ChangeGivingSample.edit)
        let small = try #require(rig.hardware.payouts?.devices.last as? SimulatedHopper)
        small.jam(after: 1)
        ChangeGivingSample.buy(with: 4, rig)
        rig.advance(by: .seconds(2))
        let machine = rig.controller.currentMachine
        #expect(machine.ledger.changePaid == ChangeGivingSample.won(600))
        #expect(machine.credit == ChangeGivingSample.won(200))
        #expect(machine.pendingPayout == nil)
        // Nothing is paid again by itself.
        rig.advance(by: .seconds(5))
        #expect(ChangeGivingSample.hopperCoins(rig) == [59, 59])
        #expect(machine.integrityProblems.isEmpty)
        await rig.tearDown()
    }

    /// vendd dies mid-payout (no shutdown): at the next start the payout is resolved from the
    /// hoppers' counters and memories, never paid a second time, and the books balance.
    @Test func aPayoutCutShortIsResolvedFromTheHoppersAtTheNextStart() async throws {
        let first = try ControllerRig(edit: ChangeGivingSample.edit)
        ChangeGivingSample.buy(with: 8, first)  // 4 000원 for 1 200원: 2 800원 change
        first.advance(by: .milliseconds(450))  // two 500원 coins out
        #expect(first.controller.currentMachine.pendingPayout?.amount == ChangeGivingSample.won(2_800))
        // The process dies: nothing more runs on its clock; the journal is all that was written.
        first.controller.closeStore()

        let second = try ControllerRig(edit: ChangeGivingSample.edit, directory: first.directory)
        let machine = second.controller.currentMachine
        #expect(machine.pendingPayout == nil)
        #expect(machine.ledger.changePaid == ChangeGivingSample.won(1_000))
        #expect(machine.credit == ChangeGivingSample.won(1_800))
        #expect(machine.ledger.unknownPayouts.isZero)
        #expect(machine.integrityProblems.isEmpty)
        second.advance(by: .seconds(10))
        #expect(ChangeGivingSample.hopperCoins(second) == [58, 60])
        #expect(second.controller.currentMachine.ledger.changePaid == ChangeGivingSample.won(1_000))
        await second.tearDown()
    }

    /// A journal record written before devices said what they held reads back with no holding,
    /// and a device with a counter still writes exactly that form.
    @Test func aJournalRecordFromBeforeHoldingsStillReads() throws {
        let old = #"{"at":1700000000000,"input":{"payoutDeviceAsked":{"_0":4,"device":"simulated-hopper@3"}}}"#
        let entry = try JSONDecoder().decode(JournalEntry.self, from: Data(old.utf8))
        #expect(entry.input == .payoutDeviceAsked(PayoutID(rawValue: 4), device: "simulated-hopper@3", holding: nil))
        let written = String(decoding: try JSONEncoder().encode(entry.input), as: UTF8.self)
        #expect(!written.contains("holding"), "\(written)")
    }

    @Test func aHopperThatLostItsMemoryMakesThePayoutUnknownNotPaidAgain() async throws {
        let first = try ControllerRig(edit: ChangeGivingSample.edit)
        ChangeGivingSample.buy(with: 8, first)
        first.advance(by: .milliseconds(450))
        first.controller.closeStore()
        // The 500원 hopper was reset: it no longer knows its counter.
        try "0 58 0 0\n".write(toFile: first.directory.path + "/simulated-hopper-3.txt", atomically: true, encoding: .utf8)

        let second = try ControllerRig(edit: ChangeGivingSample.edit, directory: first.directory)
        let machine = second.controller.currentMachine
        #expect(machine.pendingPayout == nil)
        #expect(machine.ledger.unknownPayouts == ChangeGivingSample.won(2_800))
        #expect(machine.credit.isZero)
        #expect(machine.integrityProblems.isEmpty)
        await second.tearDown()
    }

    @Test func shutdownStopsAPayoutAndKeepsTheRestAsCredit() async throws {
        let rig = try ControllerRig(edit: ChangeGivingSample.edit)
        ChangeGivingSample.buy(with: 8, rig)
        rig.advance(by: .milliseconds(650))  // three 500원 coins out
        await rig.controller.detachHardware()
        rig.controller.settle()
        let machine = rig.controller.currentMachine
        #expect(machine.pendingPayout == nil)
        #expect(machine.ledger.changePaid == ChangeGivingSample.won(1_500))
        #expect(machine.credit == ChangeGivingSample.won(1_300))
        rig.controller.closeStore()
        rig.directory.remove()
    }
}
