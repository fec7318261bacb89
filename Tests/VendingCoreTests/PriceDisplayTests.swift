import Foundation
import Testing
import VendingCore

/// What people see of prices (the kiosk, the LCD, `vendctl status`) is the core's decision, and
/// the price lines a technician sets at run time (`vendctl price --list --payment`).
@Suite struct PriceDisplayTests {
    typealias Fixture = PricingTests
    static func won(_ amount: Int64) -> Money { Fixtures.won(amount) }

    /// Outside the band, list 1; in it, the band's price for cash and each reader's own line.
    @Test func shownPricesFollowTheBandAndTheReaders() throws {
        let machine = Rig(setup: Fixture.setup()).machine
        let before = try #require(machine.shownPrices(of: "A1", readers: [.first, .second], at: Fixture.beforeBand))
        #expect(before.cash == Self.won(1_200) && before.listOne == Self.won(1_200))
        #expect(before.cards == [.first: Self.won(1_100), .second: Self.won(1_100)])
        #expect(before.session == nil)
        let inBand = try #require(machine.shownPrices(of: "A1", readers: [.first, .second], at: Fixture.inBand))
        #expect(inBand.cash == Self.won(1_000) && inBand.listOne == Self.won(1_200))
        #expect(inBand.cards == [.first: Self.won(900)], "cashless2 pays the list's every-payment price, as cash does")
        // A slot without a line on the band's list sells at list 1: nothing differs.
        let coffee = try #require(machine.shownPrices(of: "B1", readers: [.first], at: Fixture.inBand))
        #expect(coffee.cash == Self.won(900) && coffee.cards.isEmpty)
        #expect(machine.shownPrices(of: "Z9", readers: [], at: Fixture.inBand) == nil)
    }

    /// What 1,000 buys: A1 in the band (1,000), not before it (1,200).
    @Test func whatTheCreditBuysFollowsTheBand() {
        var rig = Rig(setup: Fixture.setup())
        rig.now = Fixture.beforeBand
        rig.apply(.restock("A1", count: nil, loadedAt: nil))
        rig.apply(.restock("B1", count: nil, loadedAt: nil))
        rig.insert(1_000)
        #expect(rig.machine.purchasable(at: Fixture.beforeBand).map(\.slot) == ["B1"])
        #expect(rig.machine.purchasable(at: Fixture.inBand).map(\.slot) == ["A1", "B1"])
    }

    /// An open session shows what its card pays: its mapped list, or the reader's discount.
    @Test func theCardSessionsPriceIsShown() throws {
        var rig = Rig(setup: Fixture.setup())
        rig.now = Fixture.beforeBand
        rig.apply(.cardReaderReady(.first, CardReaderReadiness(reader: .first, selectionFirst: false)))
        rig.apply(.cardSessionBegan(.first, funds: nil, media: .normal, terms: .priceList(userGroup: 2, list: 1)))
        #expect(rig.machine.shownPrices(of: "A1", readers: [.first], at: rig.now)?.session == Self.won(800), "card list 1 maps to staff, list 3")
        rig.apply(.cardSessionEnded(.first))
        rig.apply(.cardSessionBegan(.first, funds: nil, media: .normal, terms: .discount(percent: 10)))
        // 10% off 1,100 is 990, rounded to the 50 coin: 1,000 (a half goes the customer's way).
        #expect(rig.machine.shownPrices(of: "A1", readers: [.first], at: rig.now)?.session == Self.won(1_000))
    }

    /// Selected ten seconds before the band: while the vend runs into the band, the slot shows
    /// the price requested, the others the band's.
    @Test func aRequestedPriceStaysShownWhenABandBegins() throws {
        var rig = Rig(setup: Fixture.setup())
        rig.now = Fixture.beforeBand
        rig.insert(1_000)
        rig.insert(1_000)
        rig.select("A1")
        rig.advance(seconds: 20)
        #expect(rig.machine.shownPrices(of: "A1", readers: [], at: rig.now)?.cash == Self.won(1_200))
        #expect(rig.machine.shownPrices(of: "A2", readers: [], at: rig.now)?.cash == Self.won(1_300))
        rig.apply(.vendEnded(try #require(rig.pendingVend), .dropped))
        #expect(rig.machine.shownPrices(of: "A1", readers: [], at: rig.now)?.cash == Self.won(1_000), "the next customer pays the band's")
    }

    /// The band in force and when it ends, in the machine's local time; a band across midnight
    /// ends the next day.
    @Test func theBandInForceAndItsEnd() throws {
        let machine = Rig(setup: Fixture.setup()).machine
        #expect(machine.bandInForce(at: Fixture.beforeBand) == nil)
        let band = try #require(machine.bandInForce(at: Fixture.inBand))
        #expect(band.band == Fixture.happyHour && band.name == "happy hour")
        #expect(band.untilLocal == LocalTime(weekday: .monday, minuteOfDay: 17 * 60))
        // 15:59:50 in Seoul: the band ends at 17:00, 1 hour 10 seconds later.
        #expect(band.until.millisecondsSinceEpoch == Fixture.inBand.millisecondsSinceEpoch + 3_610_000)
        let night = PricingSetup(bands: [TimeBand(list: 2, days: [.saturday], from: 22 * 60, to: 2 * 60)])
        // Saturday 3 January 2026, 23:30 UTC.
        let saturday = Instant(millisecondsSinceEpoch: 1_767_483_000_000)
        #expect(TimeZoneRules.utc.localTime(at: saturday) == LocalTime(weekday: .saturday, minuteOfDay: 23 * 60 + 30))
        let end = night.end(of: night.bands[0], at: saturday)
        #expect(end.local == LocalTime(weekday: .sunday, minuteOfDay: 120))
        #expect(end.instant.millisecondsSinceEpoch == saturday.millisecondsSinceEpoch + 150 * 60_000)
        let morning = night.end(of: night.bands[0], at: saturday + .seconds(3_600))
        #expect(morning.local == LocalTime(weekday: .sunday, minuteOfDay: 120) && morning.instant == end.instant)

        // The next change: the band's end while in it, its start before it (and the displays'
        // refresh at Sunday 00:00, where the week's minutes wrap, is a harmless extra).
        #expect(night.nextBandChange(after: saturday) == Instant(millisecondsSinceEpoch: saturday.millisecondsSinceEpoch + 30 * 60_000))
        #expect(night.nextBandChange(after: saturday + .seconds(3_600)) == end.instant)
        let before = Instant(millisecondsSinceEpoch: saturday.millisecondsSinceEpoch - 2 * 3_600_000)  // Saturday 21:30
        #expect(night.nextBandChange(after: before) == Instant(millisecondsSinceEpoch: before.millisecondsSinceEpoch + 30 * 60_000))
        let after = end.instant + .seconds(60)  // Sunday 02:01: next Saturday 22:00
        #expect(
            night.nextBandChange(after: after) == Instant(millisecondsSinceEpoch: after.millisecondsSinceEpoch + (6 * 1_440 + 20 * 60 - 1) * 60_000))
        #expect(PricingSetup().nextBandChange(after: saturday) == nil)
    }

    /// `vendctl price A1 700 --list 2 --payment cash`: that line only, before the file's; default
    /// takes it away; unknown lists and prices no credit could pay are refused, naming why.
    @Test func aPriceLineSetAtRunTime() throws {
        var rig = Rig(setup: Fixture.setup())
        rig.now = Fixture.inBand
        let set = rig.apply(.setPriceLine("A1", list: 2, scope: .cash, price: Self.won(700)))
        #expect(set.events.contains(.priceLineChanged(slot: "A1", list: 2, scope: .cash, from: nil, to: Self.won(700))))
        #expect(rig.machine.price(of: "A1", payment: .cash, at: rig.now)?.price == Self.won(700))
        #expect(rig.machine.price(of: "A1", payment: .cashless(.second), at: rig.now)?.price == Self.won(1_000), "cards keep list 2's")
        #expect(rig.machine.price(of: "A1", payment: .cash, at: Fixture.beforeBand)?.price == Self.won(1_200), "list 1 is untouched")
        // Replacing the file's own line, then going back to it.
        rig.apply(.setPriceLine("A1", list: 2, scope: .cashless1, price: Self.won(850)))
        #expect(rig.machine.price(of: "A1", payment: .cashless(.first), at: rig.now)?.price == Self.won(850))
        let back = rig.apply(.setPriceLine("A1", list: 2, scope: .cashless1, price: nil))
        #expect(back.events.contains(.priceLineChanged(slot: "A1", list: 2, scope: .cashless1, from: Self.won(850), to: Self.won(900))))
        #expect(rig.machine.runTimeLines(of: "A1") == [PriceLine(list: 2, scope: .cash, price: Self.won(700))])
        // List 1 for every payment is the slot's own price.
        rig.apply(.setPriceLine("A1", list: 1, scope: .any, price: Self.won(1_250)))
        #expect(rig.machine.price(of: "A1") == Self.won(1_250) && rig.machine.priceOverrides["A1"] != nil)

        #expect(rig.apply(.setPriceLine("A1", list: 4, scope: .cash, price: Self.won(700))).rejections == [.unknownPriceList(4, known: [2, 3])])
        #expect(Rejection.unknownPriceList(4, known: [2, 3]).description == "there is no price list 4: pricing.lists has list 1 and 2, 3")
        let tooDear = rig.apply(.setPriceLine("A1", list: 2, scope: .cash, price: Self.won(20_000)))
        #expect(tooDear.rejections.count == 1)
        if case .priceRefused("A1", _, .aboveMaximumCredit) = tooDear.rejections.first {} else { Issue.record("\(tooDear.rejections)") }
        #expect(rig.apply(.setPriceLine("Z9", list: 2, scope: .cash, price: Self.won(700))).rejections == [.unknownSlot("Z9")])
        #expect(rig.apply(.setPriceLine("A1", list: 2, scope: .cash, price: Self.won(0))).rejections == [.invalidPrice(Self.won(0))])
        #expect(rig.machine.runTimeLines(of: "A1") == [PriceLine(list: 2, scope: .cash, price: Self.won(700))], "refusals change nothing")
    }

    /// The lines survive a restart; a state file from before them loads with none; an edit of the
    /// replaced line in the file wins, and a line whose list left the file goes.
    @Test func priceLinesSurviveARestartAndYieldToTheFile() throws {
        var rig = Rig(setup: Fixture.setup())
        rig.now = Fixture.inBand
        rig.apply(.setPriceLine("A1", list: 2, scope: .cashless1, price: Self.won(850)))
        rig.apply(.setPriceLine("A2", list: 3, scope: .cash, price: Self.won(600)))
        let restored = try JSON.roundTrip(rig.machine)
        #expect(restored == rig.machine && restored.priceLineOverrides == rig.machine.priceLineOverrides)

        // The state file as vendd wrote it before run-time lines: no key at all.
        var object = try #require(try JSONSerialization.jsonObject(with: Data(try JSON.text(rig.machine).utf8)) as? [String: Any])
        #expect(object.removeValue(forKey: "priceLineOverrides") != nil)
        let old = try JSONDecoder().decode(Machine.self, from: try JSONSerialization.data(withJSONObject: object))
        #expect(old.priceLineOverrides.isEmpty && old.runTimeLines(of: "A1").isEmpty)
        #expect(!(try JSON.text(Rig(setup: Fixture.setup()).machine)).contains("priceLineOverrides"), "nothing written when unused")

        // The technician edits A1's cashless1 line on list 2 in the file, and drops list 3.
        let base = Fixture.setup()
        let a1 = try #require(base.slot("A1"))
        let edited = SlotSetup(
            id: "A1", product: a1.product, price: a1.price, capacity: a1.capacity,
            priceLines: a1.priceLines.map {
                $0.list == 2 && $0.scope == .cashless1 ? PriceLine(list: 2, scope: .cashless1, price: Self.won(950)) : $0
            })
        let newSetup = try MachineSetup(
            currency: base.currency, catalog: base.catalog, slots: [edited] + base.slots.filter { $0.id != "A1" },
            maximumCredit: base.maximumCredit, payoutPolicy: .manual,
            pricing: PricingSetup(lists: [2: "happy hour"], bands: base.pricing.bands, timeZone: base.pricing.timeZone))
        let reloaded = rig.apply(.reconfigure(newSetup))
        #expect(reloaded.events.contains(.priceLineChanged(slot: "A1", list: 2, scope: .cashless1, from: Self.won(850), to: Self.won(950))))
        #expect(reloaded.events.contains(.priceLineChanged(slot: "A2", list: 3, scope: .cash, from: Self.won(600), to: nil)))
        #expect(rig.machine.priceLineOverrides.isEmpty)
    }
}
