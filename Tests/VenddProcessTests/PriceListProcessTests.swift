import Foundation
import Testing
import VendControl
import VenddTestSupport

/// Price lists on the real vendd: a band in force now (UTC, around the current minute), what
/// status shows of it, and `vendctl price --list --payment` setting a line that outlives a restart.
@Suite(.oneRealProcessTestAtATime) struct PriceListProcessTests {
    static func clock(_ minute: Int) -> String { String(format: "%02d:%02d", minute / 60, minute % 60) }

    @Test func aBandsPriceAndALineSetAtRunTimeShowInStatus() throws {
        // A band of two hours around now, every day, so the test passes at any hour (it may
        // cross midnight, which the band allows).
        let minute = Int(Date().timeIntervalSince1970) / 60 % 1_440
        let from = Self.clock((minute + 1_380) % 1_440)
        let to = Self.clock((minute + 60) % 1_440)
        let daemon = try DaemonHarness { config in
            config.replacingOccurrences(
                of: "    product: banana-milk\n    price: 1200\n",
                with: "    product: banana-milk\n    price: 1200\n    prices:\n      - { list: 2, price: 1000 }\n")
                + "\npricing:\n  time_zone: UTC\n  lists:\n    - { list: 2, name: \"happy hour\" }\n  bands:\n    - { list: 2, from: \"\(from)\", to: \"\(to)\" }\n"
        }
        defer { daemon.tearDown() }
        try daemon.start()
        #expect(!daemon.log.contains("still show"), "the start-up warning is gone")

        let status = try daemon.status()
        let milk = try #require(status.slots.first { $0.id == "A1" }, "\(daemon.log)")
        #expect(milk.price == "1000" && milk.priceText == "1,000원" && milk.listPrice == "1200" && milk.listPriceText == "1,200원")
        #expect(status.slots.first { $0.id == "A2" }?.listPrice == nil, "A2 has no list-2 price: list 1's applies")
        let band = try #require(status.priceBand)
        #expect(band.list == 2 && band.name == "happy hour" && band.untilText.hasSuffix(" \(to)"))
        let shown = try daemon.vendctl("status")
        #expect(shown.output.contains("prices   time band in force: list 2 (happy hour) until "), "\(shown.output)")
        #expect(shown.output.contains("list 1"), "the list-1 column while a price differs")

        let set = try daemon.vendctl("price", "A1", "800", "--list", "2", "--payment", "cash")
        #expect(set.status == 0, "\(set.errors)")
        #expect(set.output == "slot A1 price on list 2 for cash no line of its own → 800원\n")
        #expect(try daemon.status().slots.first { $0.id == "A1" }?.price == "800")
        #expect(
            try daemon.vendctl("price", "A1", "800", "--list", "2", "--payment", "cash").output == "slot A1 already has 800원 on list 2 for cash\n")

        // The JSON as docs/vendctl.md documents it, with the new fields present.
        let schemas = try DocumentedSchemas()
        #expect(try schemas.violations(of: "status", in: daemon.vendctl("--json", "status").output) == [])
        let pricesJSON = try daemon.vendctl("--json", "price", "--show").output
        #expect(try schemas.violations(of: "prices", in: pricesJSON) == [])
        #expect(pricesJSON.contains(#""source":"run-time""#) && pricesJSON.contains(#""inForce":{"#), "\(pricesJSON)")

        let prices = try daemon.vendctl("price", "--show")
        #expect(prices.status == 0, "\(prices.errors)")
        #expect(prices.output.contains("list 2   happy hour"), "\(prices.output)")
        #expect(prices.output.contains("now      list 2 (happy hour) until "), "\(prices.output)")
        let runTime = prices.output.split(separator: "\n").filter { $0.hasSuffix("run-time") }
        #expect(runTime.count == 1 && runTime[0].contains("cash") && runTime[0].contains("800원"), "\(prices.output)")
        let at = try daemon.vendctl("price", "--band", "mon \(to)")
        #expect(at.output == "mon \(to): list 1, no time band (UTC)\n", "the band's end is outside it")

        // Errors name what is wrong.
        let unknownList = try daemon.vendctl("price", "A1", "700", "--list", "4")
        #expect(unknownList.status != 0 && unknownList.errors.contains("there is no price list 4: pricing.lists has list 1 and 2"))
        let badPayment = try daemon.vendctl("price", "A1", "700", "--list", "2", "--payment", "bitcoin")
        #expect(badPayment.status == 64 && badPayment.errors.contains("unknown payment 'bitcoin'"))
        let tooDear = try daemon.vendctl("price", "A1", "99999", "--list", "2", "--payment", "cash")
        #expect(tooDear.status == 64 && tooDear.errors.contains("maximum"), "\(tooDear.errors)")

        // The line outlives a restart; default takes it away.
        #expect(try daemon.stop() == 0)
        try daemon.start()
        #expect(try daemon.status().slots.first { $0.id == "A1" }?.price == "800")
        let back = try daemon.vendctl("price", "A1", "default", "--list", "2", "--payment", "cash")
        #expect(back.output == "slot A1 price on list 2 for cash 800원 → no line of its own\n")
        #expect(try daemon.status().slots.first { $0.id == "A1" }?.price == "1000")

        // A sale in the band is booked on list 2, as `vendctl report --by-list` (and PA7) says.
        try daemon.send(.restock(slot: "A1", count: nil))
        for _ in 0..<2 { try daemon.send(.sim(.coin(amount: "500"))) }
        try daemon.send(.sim(.press(slot: "A1")))
        _ = try daemon.waitUntil("the sale") { $0.books.itemsSold == 1 && $0.vendInProgress == nil }
        let byList = try daemon.vendctl("report", "--by-list")
        #expect(byList.status == 0, "\(byList.errors)")
        let rows = byList.output.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
        #expect(rows.contains("2 cash all 1"), "\(byList.output)")
        #expect(rows.contains { $0.hasPrefix("A1 1000 1 1,000원 1 (1,000원)") }, "\(byList.output)")
        let mixed = try daemon.vendctl("report", "--by-list", "--since", "2026-01-01")
        #expect(mixed.status == 64 && mixed.errors.contains("--by-list reports whole-life totals"), "\(mixed.errors)")
    }

    @Test func aMachineWithOnePricePerSlotSaysSoByList() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        let byList = try daemon.vendctl("report", "--by-list")
        #expect(byList.status == 0 && byList.output.contains("this machine has one price per slot"), "\(byList.output)")
    }
}
