import Foundation
import Testing
import VendTelemetry
import VendingCore

@testable import VendDaemon

/// The fleet's alert for expired stock and its discard, and how they read in the journal.
@Suite(.timeLimit(.minutes(5))) struct ExpiryTelemetryTests {
    static let won = Currency(code: "KRW", minorDigits: 0)
    static let at = Instant(millisecondsSinceEpoch: 1_790_000_000_000)
    static let since = Instant(millisecondsSinceEpoch: 1_789_000_000_000)

    @Test func aSlotStoppedByExpiredStockAlertsTheFleetAndSaysWhenItSellsAgain() throws {
        let expired = MachineEvent.stockExpired(ExpiredStock(slot: "A2", product: "milk", count: 3, since: Self.since))
        let alert = try #require(TelemetryEvent(expired, machine: "m1", currency: Self.won, at: Self.at))
        #expect(alert.type == .stockExpired && alert.on == true)
        #expect(alert.slot == "A2" && alert.product == "milk" && alert.count == 3 && alert.since == Self.since.millisecondsSinceEpoch)
        let cleared = try #require(
            TelemetryEvent(.expiredStockCleared(slot: "A2", product: "milk"), machine: "m1", currency: Self.won, at: Self.at))
        #expect(cleared.type == .stockExpired && cleared.on == false && cleared.slot == "A2")
        let discarded = try #require(
            TelemetryEvent(
                .expiredStockDiscarded(slot: "A2", product: "milk", count: 3, value: Money(minorUnits: 3_600, currency: Self.won)),
                machine: "m1", currency: Self.won, at: Self.at))
        #expect(discarded.type == .stockDiscarded && discarded.count == 3 && discarded.amount == "3600")
    }

    @Test func theJournalSaysWhatToDo() {
        let format = MoneyFormat(template: "{amount}원")!
        let expired = EventDescription(
            .stockExpired(ExpiredStock(slot: "A2", product: "milk", count: 3, since: Self.since)), format: format)
        #expect(expired.kind == "stock-expired" && expired.level == .error)
        #expect(
            expired.text
                == "slot A2 (milk) stopped selling: 3 item(s) past their shelf life; a technician must unload them (vendctl unload A2)")
        let discarded = EventDescription(
            .expiredStockDiscarded(slot: "A2", product: "milk", count: 3, value: Money(minorUnits: 3_600, currency: Self.won)), format: format)
        #expect(discarded.text == "slot A2 (milk): 3 expired item(s) discarded, worth 3,600원 at the slot's price")
    }
}
