import Foundation
import Testing
import VendFleetStore
import VenddTestSupport

@testable import VendOffice

/// A retained `cash` message with the cash box's amount and exact change only.
private func cashUpdate(_ machine: String, cashBox: String, exactChangeOnly: Bool) -> RetainedUpdate {
    RetainedUpdate(
        machine: machine, subject: "cash",
        payload:
            #"{"machine":"\#(machine)","currency":"KRW","coinsIn":"0","sales":"0","refunds":"0","cashBox":"\#(cashBox)","exactChangeOnly":\#(exactChangeOnly)}"#,
        columns: .cash(
            CashPosition(
                currency: "KRW", coinsIn: "0", sales: "0", refunds: "0", billsIn: nil, changePaid: nil, unknownPayouts: nil,
                exactChangeOnly: exactChangeOnly)))
}

private func slot(_ name: String, stock: Int64) -> SlotPosition {
    SlotPosition(slot: name, product: "cola", price: "1200", available: stock, stock: stock, capacity: 10, earliestExpiry: nil)
}

@Suite("Machines to visit", .serialized, .timeLimit(.minutes(3)))
struct OfficeVisitTests {
    @Test(arguments: Engine.allCases)
    func machinesAreRankedBySoldOutProjectedSellOutAlertsAndCashBox(_ engine: Engine) throws {
        let rig = try OfficeRig(engine)
        defer { rig.stop() }
        var events: [IncomingEvent] = []
        var seqs: [String: Int64] = [:]
        /// `count` sales of `slot`, spread over the 7 days (today and the 6 before) or `daysBack` ago.
        func sell(_ machine: String, _ slot: String, _ count: Int, daysBack: Int64? = nil) {
            for index in 0..<count {
                let seq = seqs[machine, default: 0] + 1
                seqs[machine] = seq
                let at = rig.noon - (daysBack ?? Int64(index % 7)) * 86_400_000 - Int64(index) * 1000
                events.append(
                    officeEvent(
                        machine, seq, "vend-ended", at: at,
                        #","vend":\#(seq),"slot":"\#(slot)","product":"cola","amount":"1200","outcome":"sold","payment":"cash""#))
            }
        }
        sell("m1", "A2", 7)  // 1 a day, stock 2: empty in 2.0 days
        sell("m1", "A3", 14)  // 2 a day, stock 5: 2.5 days, beyond the horizon
        sell("m1", "A3", 50, daysBack: 8)  // before the 7 days: not in the rate
        sell("m2", "B1", 21)  // 3 a day, stock 3: 1.0 day
        sell("m2", "B2", 14)  // 2 a day, stock 1: 0.5 day
        sell("m5", "E2", 14)  // 2 a day, stock 3: 1.5 days
        _ = try rig.store.commit(
            events: events,
            retained: [
                stockUpdate("m1", [slot("A1", stock: 0), slot("A2", stock: 2), slot("A3", stock: 5), slot("A4", stock: 1)]),
                stockUpdate("m2", [slot("B1", stock: 3), slot("B2", stock: 1)]),
                stockUpdate("m3", [slot("C1", stock: 9)]),
                stockUpdate("m4", [slot("D1", stock: 9)]),
                stockUpdate("m5", [slot("E1", stock: 0), slot("E2", stock: 3)]),
                RetainedUpdate(
                    machine: "m1", subject: "zones/cold", payload: "{}",
                    columns: .zone(
                        ZonePosition(
                            zone: "cold", kind: "cold", health: "locked", temperature: "9.5", sensorFault: nil, setPoint: "4", relayOn: true,
                            maxReached: "9.5", since: rig.noon, cause: "above 5 °C for 4 h", at: rig.noon))),
                cashUpdate("m1", cashBox: "3000", exactChangeOnly: false),
                cashUpdate("m2", cashBox: "0", exactChangeOnly: true),
                cashUpdate("m3", cashBox: "500", exactChangeOnly: false),
                cashUpdate("m4", cashBox: "0", exactChangeOnly: false),
            ], receivedAt: rig.noon)
        var dan = try rig.loggedIn("dan")
        let page = try dan.get("/visit").body
        let rows = page.components(separatedBy: "<tr><td><a href=\"/machine?id=").dropFirst().map { $0.components(separatedBy: "</tr>")[0] }
        #expect(
            rows == [
                #"m1">m1</a></td><td class="n">6</td><td class="n">1</td><td>A2 in 2.0 d</td><td><span class="alert">zone cold locked (food safety)</span></td><td class="n">3,000원</td>"#,
                #"m2">m2</a></td><td class="n">5</td><td class="n">0</td><td>B2 in 0.5 d<br>B1 in 1.0 d</td><td><span class="alert">exact change only</span></td><td class="n">0원</td>"#,
                #"m5">m5</a></td><td class="n">5</td><td class="n">1</td><td>E2 in 1.5 d</td><td>-</td><td class="n">-</td>"#,
                #"m3">m3</a></td><td class="n">0</td><td class="n">0</td><td>-</td><td>-</td><td class="n">500원</td>"#,
            ])
        #expect(page.contains("4 of 5 machines"))
    }

    @Test func daysAreShownWithOneDecimal() {
        #expect(Pages.days(2.5) == "2.5")
        #expect(Pages.days(7.0 / 3.0) == "2.3")
        #expect(Pages.days(0.05) == "0.1")
        #expect(Pages.days(12) == "12.0")
    }
}
