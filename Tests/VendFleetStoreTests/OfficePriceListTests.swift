import Foundation
import Testing
import VendFleetStore
import VenddTestSupport

@testable import VendFleetIngest
@testable import VendOffice

/// The machine page's price lists, read from the stock message the store kept: each list with
/// its name and bands, each slot's prices by list and payment in the office's money format; for
/// operators only, as every price is.
@Suite("Price lists in the office", .serialized, .timeLimit(.minutes(3)))
struct OfficePriceListTests {
    static let stock = """
        {"machine":"m1","currency":"KRW","slots":[\
        {"slot":"A1","product":"cola","price":"1200","available":3,"stock":3,"capacity":8,\
        "priceLines":[{"list":2,"payment":"any","price":"1000"},{"list":2,"payment":"cashless1","price":"900"},\
        {"list":3,"payment":"cash","price":"1100"}]},\
        {"slot":"A2","product":"water","price":"800","available":1,"stock":1,"capacity":8}],\
        "priceLists":[{"list":2,"name":"happy <hour>"},{"list":3,"name":"staff"}],\
        "bands":[{"list":2,"days":["mon","fri"],"from":"15:00","to":"17:00"},{"list":2,"days":["sat"],"from":"22:00","to":"02:00"}]}
        """

    @Test(arguments: Engine.allCases)
    func theMachinePageShowsEachSlotsPricesByListAndPaymentAndTheBands(_ engine: Engine) throws {
        let rig = try OfficeRig(engine)
        defer { rig.stop() }
        // As the ingester takes it off the broker: checked, the payload kept.
        let (batch, log) = try take([("vendd/m1/stock", Self.stock)])
        #expect(log.isEmpty, "\(log)")
        _ = try rig.store.commit(events: [], retained: batch.retained, receivedAt: rig.noon)

        var ann = try rig.loggedIn("ann")
        let page = try ann.get("/machine?id=m1").body
        for row in [
            "<tr><td>2 (happy &lt;hour&gt;)</td><td>mon, fri 15:00–17:00; sat 22:00–02:00</td></tr>",
            "<tr><td>3 (staff)</td><td>no band (cards mapped to it)</td></tr>",
            #"<tr><td>A1</td><td>cola</td><td>1 (normal prices)</td><td>every payment</td><td class="n">1,200원</td></tr>"#,
            #"<tr><td>A1</td><td>cola</td><td>2 (happy &lt;hour&gt;)</td><td>every payment</td><td class="n">1,000원</td></tr>"#,
            #"<tr><td>A1</td><td>cola</td><td>2 (happy &lt;hour&gt;)</td><td>card reader 1</td><td class="n">900원</td></tr>"#,
            #"<tr><td>A1</td><td>cola</td><td>3 (staff)</td><td>cash</td><td class="n">1,100원</td></tr>"#,
        ] {
            #expect(page.contains(row), "\(row)")
        }
        // In the order the machine sent, after list 1's; a slot with one price is not repeated.
        let a1 = page.components(separatedBy: "<tr><td>A1</td><td>cola</td><td>").dropFirst().map { $0.prefix(1) }
        #expect(a1 == ["1", "2", "2", "3"], "\(a1)")
        #expect(!page.contains("<td>A2</td><td>water</td><td>1 (normal prices)"))
        #expect(!page.contains("happy <hour>"), "the name is escaped")

        var dan = try rig.loggedIn("dan")
        let driver = try dan.get("/machine?id=m1").body
        #expect(!driver.contains("Price lists") && !driver.contains("1,000원") && driver.contains("<td>A1</td><td>cola</td>"))
    }

    /// A machine with one price per slot: no section.
    @Test func aMachineWithoutListsShowsNone() throws {
        let rig = try OfficeRig(.sqlite)
        defer { rig.stop() }
        let (batch, _) = try take([
            (
                "vendd/m1/stock",
                #"{"machine":"m1","currency":"KRW","slots":[{"slot":"A1","product":"cola","price":"1200","available":3,"stock":3,"capacity":8}]}"#
            )
        ])
        _ = try rig.store.commit(events: [], retained: batch.retained, receivedAt: rig.noon)
        var ann = try rig.loggedIn("ann")
        let page = try ann.get("/machine?id=m1").body
        #expect(page.contains(#"<td>A1</td><td>cola</td><td class="n">1,200원</td>"#) && !page.contains("Price lists"))
    }
}
