import Testing
import VendConfig
import VendControl
import VendingCore

@testable import VendDisplay

/// What the customer is told, from what vendd reports: the guidance, the notices and the session.
@Suite struct MachineViewTests {
    static let won = Currency(code: "KRW", minorDigits: 0)

    static func status(
        credit: String, state: String = "in-service", serviceKey: Bool = false, vend: String? = nil,
        exactChangeOnly: Bool? = nil, slots: [StatusReport.Slot]? = nil, changePaid: String = "0", refunds: String = "0"
    ) -> StatusReport {
        func slot(_ id: String, _ product: String, _ name: String, _ price: String, _ available: Int) -> StatusReport.Slot {
            StatusReport.Slot(
                id: id, product: product, productName: name, price: price, priceText: price, available: available,
                stock: available, capacity: 8, earliestExpiry: nil)
        }
        return StatusReport(
            machine: "Test", state: state, stateReason: state == "in-service" ? nil : "why", currency: "KRW", credit: credit,
            creditText: credit, acceptingCoins: true, vendInProgress: vend, simulated: true, coinAcceptor: "sim", gpio: "sim",
            slots: slots ?? [slot("A1", "banana-milk", "Banana Milk", "1200", 8), slot("B4", "hot-latte", "Hot Café Latte", "1500", 0)],
            books: .init(
                coinsIn: "0", sales: "0", refunds: refunds, itemsSold: 0, failedVends: 0, unknownOutcomes: 0, changePaid: changePaid),
            serviceKey: serviceKey, exactChangeOnly: exactChangeOnly)
    }

    static func style(
        _ language: DisplaySettings.Language = .en, ascii: Bool = false, format: String = "{amount}원",
        givesNoChange: Bool = true
    ) -> MachineView.Style {
        MachineView.Style(
            texts: DisplayTexts(language), format: MoneyFormat(template: format)!, currency: won,
            faces: ["hot-latte": ProductFace(picture: nil, shortName: "Hot Cafe Latte")], hot: ["hot-latte"],
            givesNoChange: givesNoChange, asciiNames: ascii, pictureURL: { "/pictures/\($0)" })
    }

    static func machine(_ status: StatusReport?) -> FollowedMachine {
        var machine = FollowedMachine()
        machine.status = status
        return machine
    }

    @Test func guidanceFollowsTheCredit() {
        let empty = MachineView(Self.machine(Self.status(credit: "0")), style: Self.style())
        #expect(empty.message.text == "Insert money")
        let short = MachineView(Self.machine(Self.status(credit: "900")), style: Self.style())
        #expect(short.message.text == "Insert 300원 more")
        #expect(short.slots.map(\.affordable) == [false, false])
        let enough = MachineView(Self.machine(Self.status(credit: "1200")), style: Self.style(.ko))
        #expect(enough.message.text == "상품을 골라 주세요")
        #expect(enough.slots.map(\.affordable) == [true, false])
        #expect(enough.slots.map(\.soldOut) == [false, true])
        #expect(enough.slots.map(\.hot) == [false, true])
        #expect(enough.hint == "거스름돈이 나오지 않습니다: 남은 금액은 다음 구매에 쓸 수 있습니다")
    }

    /// A machine that gives change but has run low asks for exact money; with change it says nothing.
    @Test func exactChangeOnlyIsShownFromTheStatus() {
        let low = MachineView(Self.machine(Self.status(credit: "0", exactChangeOnly: true)), style: Self.style(givesNoChange: false))
        #expect(low.hint == "Exact change only: the machine may not be able to give change")
        let stocked = MachineView(Self.machine(Self.status(credit: "0", exactChangeOnly: false)), style: Self.style(givesNoChange: false))
        #expect(stocked.hint == nil)
    }

    /// With a card reader ready the machine asks for money or a card; a card vend waiting for
    /// the bank says so; an open card session invites a choice; a declined card is explained.
    @Test func cardsAreOfferedAndTheirVendsExplained() {
        func withReader(_ status: StatusReport, ready: Bool = true) -> StatusReport {
            var status = status
            status.cardReaders = [.init(reader: 1, ready: ready, description: "cashless #1")]
            return status
        }
        #expect(MachineView(Self.machine(withReader(Self.status(credit: "0"))), style: Self.style()).message.text == "Insert money or tap a card")
        #expect(MachineView(Self.machine(withReader(Self.status(credit: "0"), ready: false)), style: Self.style()).message.text == "Insert money")
        #expect(MachineView(Self.machine(withReader(Self.status(credit: "0"))), style: Self.style(.ko)).message.text == "돈을 넣거나 카드를 대 주세요")
        var approving = withReader(Self.status(credit: "0", vend: "V4 at slot A1"))
        approving.cardVendAwaitingApproval = true
        #expect(MachineView(Self.machine(approving), style: Self.style()).message.text == "Banana Milk: tap your card. Waiting for approval…")
        approving.cardVendAwaitingApproval = nil
        #expect(MachineView(Self.machine(approving), style: Self.style()).message.text == "Vending Banana Milk…")
        var session = withReader(Self.status(credit: "0"))
        session.cardSession = "cashless1, funds 3,000원"
        #expect(MachineView(Self.machine(session), style: Self.style()).message.text == "Card ready: choose a product")
        var denied = Self.machine(withReader(Self.status(credit: "0")))
        denied.observe(kind: "card-denied", at: 1_000)
        let view = MachineView(denied, style: Self.style())
        #expect(view.message.text == "Card declined: nothing was charged" && view.message.tone == .warning)
        let lcd = LCDFrame.rows(
            MachineView(Self.machine(withReader(Self.status(credit: "0"))), style: Self.style(ascii: true)), columns: 16, rows: 2, step: 0)
        #expect(lcd[1] == "Insert money or ", "the LCD scrolls the longer line: \(lcd)")
    }

    /// A restricted selection: the customer is told to show their ID, then that it was verified;
    /// a check that ended unused, or a machine with no verifier, is explained.
    @Test func anAgeCheckTellsTheCustomerWhatToDo() {
        var waiting = Self.status(credit: "1200")
        waiting.ageCheck = .init(slot: "A1", age: 19, approved: false, until: 0)
        #expect(
            MachineView(Self.machine(waiting), style: Self.style()).message.text == "Age check (19+) for Banana Milk: show your ID to the attendant")
        // The card reader checks: the customer shows the ID there.
        waiting.ageCheck?.atReader = true
        #expect(
            MachineView(Self.machine(waiting), style: Self.style()).message.text == "Age check (19+) for Banana Milk: show your ID at the card reader"
        )
        waiting.ageCheck = .init(slot: "A1", age: 19, approved: true, until: 0)
        #expect(MachineView(Self.machine(waiting), style: Self.style()).message.text == "Age verified: Banana Milk")
        var ended = Self.machine(Self.status(credit: "1200"))
        ended.observe(kind: "age-check-ended", at: 1_000)
        let view = MachineView(ended, style: Self.style())
        #expect(view.message.text == "Age check not completed: nothing was charged. Choose again to retry" && view.message.tone == .warning)
        let refusal = "slot A1 is sold only after an age check (19+) and this machine has no age verifier: make another selection"
        #expect(
            MachineFollower.explain(refusal: refusal, selecting: "A1", in: Self.machine(Self.status(credit: "1200")), currency: Self.won)
                == .ageNoVerifier)
    }

    @Test func modesFollowTheMachinesState() {
        #expect(MachineView(Self.machine(nil), style: Self.style()).mode == .outOfOrder)
        #expect(MachineView(Self.machine(nil), style: Self.style()).message.text == "Out of order")
        #expect(MachineView(Self.machine(Self.status(credit: "0", state: "out-of-order")), style: Self.style()).mode == .outOfOrder)
        #expect(MachineView(Self.machine(Self.status(credit: "0", state: "service-mode")), style: Self.style()).mode == .service)
        #expect(MachineView(Self.machine(Self.status(credit: "0", state: "service-mode", serviceKey: true)), style: Self.style()).mode == .technician)
        let vending = MachineView(Self.machine(Self.status(credit: "0", vend: "V3 at slot A1")), style: Self.style())
        #expect(vending.message.text == "Vending Banana Milk…")
    }

    @Test func aRefusedTapIsExplainedFromWhatTheDisplayKnew() {
        let machine = Self.machine(Self.status(credit: "900"))
        let soldOut = MachineFollower.explain(refusal: "slot B4 is empty", selecting: "B4", in: machine, currency: Self.won)
        #expect(soldOut == .soldOut(product: "hot-latte"))
        let short = MachineFollower.explain(refusal: "slot A1 costs 1,200원", selecting: "A1", in: machine, currency: Self.won)
        #expect(short == .insertMore(product: "banana-milk", missing: "300"))

        var told = machine
        told.post(short, at: 1_000)
        #expect(MachineView(told, style: Self.style()).message.text == "Banana Milk: insert 300원 more")
        told.post(soldOut, at: 1_000)
        #expect(MachineView(told, style: Self.style(.ko)).message.text == "Hot Café Latte: 품절입니다. 다른 상품을 골라 주세요")
        // The LCD names it by its short name.
        #expect(MachineView(told, style: Self.style(ascii: true)).message.text == "Hot Cafe Latte is sold out: choose another product")
        told.tick(at: 1_000 + FollowedMachine.noticeMilliseconds)
        #expect(MachineView(told, style: Self.style()).message.text == "Insert 300원 more")
    }

    /// A slot out of service after a motor fault, or stopped by a zone's health lock, says so on
    /// its card and when tapped: a customer should not wait for a restock that will not help.
    @Test func unavailableSlotsSayWhy() {
        let slots = Self.status(credit: "0").slots.map { slot in
            StatusReport.Slot(
                id: slot.id, product: slot.product, productName: slot.productName, price: slot.price, priceText: slot.priceText,
                available: 0, stock: 8, capacity: 8, earliestExpiry: nil,
                fault: slot.id == "A1" ? "jammed" : nil, healthLock: slot.id == "B4" ? "chilled" : nil)
        }
        let machine = Self.machine(Self.status(credit: "2000", slots: slots))
        let view = MachineView(machine, style: Self.style())
        #expect(view.slots.map(\.badge) == ["Out of service", "Not available"])
        #expect(view.slots.map(\.soldOut) == [true, true])
        #expect(view.slots.map(\.affordable) == [false, false])
        #expect(MachineView(Self.machine(Self.status(credit: "0")), style: Self.style(.ko)).slots.map(\.badge) == [nil, "품절"])

        let jammed = MachineFollower.explain(refusal: "slot A1 is out of service", selecting: "A1", in: machine, currency: Self.won)
        #expect(jammed == .outOfService(product: "banana-milk"))
        let locked = MachineFollower.explain(refusal: "slot B4 is locked", selecting: "B4", in: machine, currency: Self.won)
        #expect(locked == .notAvailable(product: "hot-latte"))
        var told = machine
        told.post(jammed, at: 1_000)
        let toldJammed = MachineView(told, style: Self.style()).message
        #expect(toldJammed == .init(text: "Banana Milk is out of service: choose another product", tone: .warning))
        told.post(locked, at: 1_000)
        #expect(MachineView(told, style: Self.style(ascii: true)).message.text == "Hot Cafe Latte is not available now: choose another product")
    }

    @Test func aJamKeepsTheCreditAndSaysSo() {
        var machine = Self.machine(Self.status(credit: "1200"))
        machine.observe(kind: "vend-failed", at: 5_000)
        #expect(
            MachineView(machine, style: Self.style()).message
                == .init(text: "Item stuck: nothing dropped. Your credit of 1,200원 is kept", tone: .error))
        machine.observe(kind: "coin", at: 6_000)
        #expect(MachineView(machine, style: Self.style()).message.text == "Choose a product")
    }

    /// A card vend that drops nothing keeps no credit: the reader refunds the card, and the page
    /// says that, not "your credit of 0원 is kept".
    @Test func aCardVendsJamSaysTheCardIsRefunded() {
        var machine = Self.machine(Self.status(credit: "0"))
        machine.observe(kind: "card-vend", at: 4_000)
        machine.observe(kind: "vend-failed", at: 5_000)
        #expect(
            MachineView(machine, style: Self.style()).message
                == .init(text: "Item stuck: nothing dropped. Your card payment is refunded", tone: .error))
        machine.observe(kind: "vend-started", at: 6_000)
        machine.observe(kind: "vend-failed", at: 7_000)
        #expect(MachineView(machine, style: Self.style()).message.text.hasPrefix("Item stuck: nothing dropped. Your credit of"))
    }

    @Test func theBoughtStripIsThisCustomersUntilTheyLeave() {
        var machine = Self.machine(Self.status(credit: "0"))
        let sale = HistoryReport.Sale(
            vend: 7, at: 10_000, slot: "A1", product: "banana-milk", productName: "Banana Milk",
            price: "1200", priceText: "1,200원", confirmation: "drop-sensor")
        machine.sold(sale, at: 10_000)
        machine.sold(sale, at: 10_100)  // the same vend read twice counts once
        let view = MachineView(machine, style: Self.style())
        #expect(view.bought == [.init(slot: "A1", name: "Banana Milk", picture: "/pictures/banana-milk", priceText: "1,200원")])
        #expect(view.message.text == "Take your Banana Milk")
        machine.tick(at: 10_100 + FollowedMachine.sessionIdleMilliseconds - 1)
        #expect(machine.bought.count == 1)
        machine.status = Self.status(credit: "500")
        machine.tick(at: 10_100 + FollowedMachine.sessionIdleMilliseconds + 1)
        #expect(machine.bought.count == 1, "credit left: the customer is still there")
        machine.status = Self.status(credit: "0")
        machine.tick(at: 10_100 + FollowedMachine.sessionIdleMilliseconds + 2)
        #expect(machine.bought.isEmpty)
    }

    @Test func theLCDShowsCreditAndMessage() {
        let view = MachineView(Self.machine(Self.status(credit: "900")), style: Self.style(ascii: true, format: "{amount} KRW"))
        #expect(LCDFrame.rows(view, columns: 16, rows: 2, step: 0) == ["Credit   900 KRW", "Insert 300 KRW m"])
        #expect(LCDFrame.rows(view, columns: 16, rows: 2, step: 2) == ["Credit   900 KRW", "sert 300 KRW mor"])
        let four = MachineView(Self.machine(Self.status(credit: "1500")), style: Self.style(ascii: true, format: "{amount} KRW"))
        #expect(
            LCDFrame.rows(four, columns: 20, rows: 4, step: 0) == [
                "Credit     1,500 KRW", "Choose a product", "Buy: Banana Milk", "No change given: wha",
            ])
        let away = MachineView(Self.machine(nil), style: Self.style(ascii: true))
        #expect(LCDFrame.rows(away, columns: 16, rows: 2, step: 0) == ["Out of order", "Sorry: please tr"])
    }

    /// What the payout devices paid, from vendd's books between two statuses: change with the
    /// item, change alone, or money paid back.
    @Test func paidChangeAndRefundsAreTold() {
        func at(_ credit: String, change: String, refunds: String = "0") -> StatusReport {
            Self.status(credit: credit, changePaid: change, refunds: refunds)
        }
        var machine = Self.machine(at("1500", change: "0"))
        let sale = HistoryReport.Sale(
            vend: 3, at: 1_000, slot: "A1", product: "banana-milk", productName: "Banana Milk",
            price: "1200", priceText: "1,200원", confirmation: "drop-sensor")
        machine.sold(sale, at: 1_000)
        machine.update(status: at("0", change: "300"), sales: nil, currency: Self.won, at: 1_100)
        #expect(MachineView(machine, style: Self.style()).message == .init(text: "Take your Banana Milk and your change: 300원", tone: .good))
        #expect(MachineView(machine, style: Self.style(.ko)).message.text == "Banana Milk: 상품과 거스름돈 300원을 꺼내 주세요")

        // Paid later than the item's notice went: the change alone.
        machine.tick(at: 1_100 + FollowedMachine.noticeMilliseconds)
        machine.update(status: at("0", change: "800"), sales: nil, currency: Self.won, at: 20_000)
        #expect(MachineView(machine, style: Self.style(.ko)).message.text == "거스름돈 500원을 드립니다")

        machine.update(status: at("0", change: "800", refunds: "1000"), sales: nil, currency: Self.won, at: 21_000)
        #expect(MachineView(machine, style: Self.style(.ko)).message.text == "1,000원을 돌려드립니다")

        // Nothing paid, or vendd lost in between: nothing told.
        machine.tick(at: 40_000)
        machine.update(status: at("0", change: "800", refunds: "1000"), sales: nil, currency: Self.won, at: 40_000)
        machine.update(status: nil, sales: nil, currency: Self.won, at: 40_100)
        machine.update(status: at("0", change: "900", refunds: "1000"), sales: nil, currency: Self.won, at: 40_200)
        #expect(MachineView(machine, style: Self.style()).message.text == "Insert money")
    }

    /// The technician's pie chart: the page draws the legend, numbered and coloured as the slices.
    @Test func theSalesLegendMatchesThePie() {
        var machine = Self.machine(Self.status(credit: "0", state: "service-mode", serviceKey: true))
        machine.sales = SalesReport(
            machine: "Test", currency: "KRW", minorDigits: 0, since: nil, incomplete: false,
            products: [
                .init(product: "cola", name: "Cola", sold: .init(count: 3, amount: "4500", amountText: "4,500원")),
                .init(product: "tea", name: "Barley Tea", sold: .init(count: 0, amount: "0", amountText: "0원")),
                .init(product: "milk", name: "Banana Milk", sold: .init(count: 1, amount: "1200", amountText: "1,200원")),
            ], slots: [], total: .init(count: 4, amount: "5700", amountText: "5,700원"), coinsIn: "0", coinsInText: "0원")
        let legend = MachineView(machine, style: Self.style()).salesLegend
        #expect(legend?.map(\.label) == ["Cola", "Banana Milk"], "a product that sold nothing has no slice")
        #expect(legend?.map(\.share) == ["75.0%", "25.0%"])
        #expect(legend?.map(\.detail) == ["3 · 4,500원", "1 · 1,200원"])
        #expect(legend?.first?.color == "#4e79a7")
        let svg = MachineView.salesChart(machine.sales!, texts: DisplayTexts(.en)).svgWithoutLegend
        #expect(svg.contains("fill='#4e79a7'") && svg.contains("fill='#f28e2b'"))
        #expect(!svg.contains("1. Cola"), "the legend is the page's")
    }
}
