import VendControl
import VendingCore

/// The machine's queries turned into the control protocol's answers, amounts formatted with the
/// machine's currency pattern. A value built from one moment of the machine: no I/O, no clock.
struct Reports {
    let machine: Machine
    let format: MoneyFormat
    let machineName: String
    /// A payout device knows its coins only by a level sensor (a ccTalk hopper): its count of 0
    /// below the low mark means few, not none, so what the devices hold cannot be totalled.
    let levelSensedCoins: Bool
    /// The zones in the file's order, and those that are cold: how the DEX events name them.
    var zoneOrder: [ZoneID] = []
    var coldZones: Set<ZoneID> = []
    /// The payment devices configured whose DEX records are conditional mandatory (DA2, DB2,
    /// CA309/CA310): `cashless1`, `cashless2`, `bill-validator`.
    var paymentDevices: [String] = []
    /// The `dex:` section's communication ID and asset number, if there is one.
    var dexIdentity: (communicationID: String, assetNumber: String)? = nil
    /// When the slots' prices are judged (the band in force); nil: each slot's list-1 price.
    var now: Instant? = nil
    /// The configured card readers, whose prices status shows where they differ from cash.
    var readers: [CardReader] = []

    private var catalog: Catalog { machine.setup.catalog }

    /// A slot out of service shows nothing available: the kiosk and the LCD show it unavailable.
    func slot(_ offer: Offer) -> StatusReport.Slot {
        let fault = machine.slotFaults[offer.slot]
        let prices = now.flatMap { machine.shownPrices(of: offer.slot, readers: readers, at: $0) }
        let cash = prices?.cash ?? offer.price
        var slot = StatusReport.Slot(
            id: offer.slot.rawValue, product: offer.product.id.rawValue, productName: offer.product.name,
            price: cash.decimalString, priceText: format.string(for: cash),
            available: fault == nil ? offer.available : 0, stock: machine.stock[offer.slot]?.count ?? 0,
            capacity: machine.setup.slot(offer.slot)?.capacity ?? 0,
            earliestExpiry: machine.earliestExpiry(in: offer.slot)?.millisecondsSinceEpoch, fault: fault?.rawValue,
            healthLock: machine.healthLock(on: offer.slot)?.rawValue, expired: machine.expiredSlots[offer.slot]?.millisecondsSinceEpoch)
        guard let prices else { return slot }
        if prices.listOne != cash {
            slot.listPrice = prices.listOne.decimalString
            slot.listPriceText = format.string(for: prices.listOne)
        }
        if !prices.cards.isEmpty {
            slot.cardPrices = prices.cards.sorted { $0.key.rawValue < $1.key.rawValue }.map {
                StatusReport.PaymentPrice(
                    payment: Payment.card($0.key).description, price: $0.value.decimalString, priceText: format.string(for: $0.value))
            }
        }
        if let session = prices.session, session != cash {
            slot.sessionPrice = session.decimalString
            slot.sessionPriceText = format.string(for: session)
        }
        return slot
    }

    /// The time band in force `now`, if any.
    var priceBand: StatusReport.PriceBand? {
        guard let now, let band = machine.bandInForce(at: now) else { return nil }
        return StatusReport.PriceBand(
            list: band.band.list, name: band.name, until: band.until.millisecondsSinceEpoch, untilText: band.untilLocal.description)
    }

    var slots: [StatusReport.Slot] { machine.offers.map(slot) }

    /// Per product sold in some slot, in the order of its first slot.
    var stock: [ProductStock] {
        let available = machine.stockByProduct
        var seen = Set<ProductID>()
        return machine.setup.slots.compactMap { first in
            guard seen.insert(first.product).inserted, let product = catalog[first.product] else { return nil }
            let slots = machine.setup.slots.filter { $0.product == product.id }
            return ProductStock(
                product: product.id.rawValue, name: product.name, available: available[product.id] ?? 0,
                capacity: slots.reduce(0) { $0 + $1.capacity }, slots: slots.map(\.id.rawValue))
        }
    }

    var purchasable: PurchasableReport {
        PurchasableReport(
            credit: machine.credit.decimalString, creditText: format.string(for: machine.credit),
            slots: (now.map(machine.purchasable(at:)) ?? machine.purchasable).map(slot))
    }

    func expired(at instant: Instant) -> ExpiredReport {
        ExpiredReport(
            at: instant.millisecondsSinceEpoch,
            slots: machine.expiredStock(at: instant).map { item in
                ExpiredReport.Slot(
                    slot: item.slot.rawValue, product: item.product.rawValue,
                    productName: catalog[item.product]?.name ?? item.product.rawValue,
                    count: item.count, since: item.since.millisecondsSinceEpoch)
            })
    }

    var hot: [ProductInfo] { machine.hotProducts.map(info) }

    var products: CategoryReport { category(catalog.categoryTree) }

    private func category(_ node: CategoryNode) -> CategoryReport {
        CategoryReport(
            name: node.name, path: node.path.components,
            products: node.products.compactMap { catalog[$0] }.map(info),
            children: node.children.map(category))
    }

    private func info(_ product: Product) -> ProductInfo {
        ProductInfo(
            id: product.id.rawValue, name: product.name, category: product.category.components, hot: product.isHot,
            shelfLifeDays: product.shelfLifeDays, tags: product.tags,
            slots: machine.setup.slots.filter { $0.product == product.id }.map(\.id.rawValue))
    }

    func history(since: Instant?, limit: Int?) -> HistoryReport {
        let sales = machine.history(since: since)
        return HistoryReport(
            since: since?.millisecondsSinceEpoch, historyLimit: machine.setup.historyLimit,
            sales: sales.suffix(limit ?? sales.count).map { sale in
                HistoryReport.Sale(
                    vend: sale.vend.rawValue, at: sale.at.millisecondsSinceEpoch, slot: sale.slot.rawValue,
                    product: sale.product.rawValue, productName: name(of: sale.product),
                    price: sale.price.decimalString, priceText: format.string(for: sale.price),
                    confirmation: sale.confirmation.rawValue, payment: sale.payment.description)
            })
    }

    var coins: CoinsReport {
        let counters = machine.cashCounters
        let ledger = machine.ledger
        let zero = Money.zero(machine.setup.currency)
        let position: [(String, Money)] = [
            ("coins-in", ledger.coinsIn), ("bills-in", ledger.billsIn), ("sales", ledger.sales),
            ("change-paid", ledger.changePaid), ("refunds", ledger.refunds), ("unknown-payouts", ledger.unknownPayouts),
            ("credit", machine.credit), ("held-by-vend", machine.pendingVend?.heldCredit ?? zero),
            ("payout-in-flight", machine.heldByPayout),
        ]
        let details: [(String, Money)] = [
            ("coins-to-tubes", ledger.coinsToTubes), ("dispensed", ledger.dispensed), ("float-filled", ledger.floatFilled),
            ("test-payouts", ledger.testPayouts), ("unknown-test-payouts", ledger.unknownTestPayouts),
            ("manually-dispensed", ledger.manuallyDispensed),
        ]
        var report = CoinsReport(
            count: counters.reduce(0) { $0 + $1.count }, total: ledger.coinsIn.decimalString,
            totalText: format.string(for: ledger.coinsIn),
            denominations: counters.map(denomination), bills: ledger.stacker.map(denomination),
            position: position.map(positionLine), details: details.map(positionLine))
        report.cashBox = cashBox
        return report
    }

    /// What the cash box took since the last collection.
    var cashBox: CashBoxReport {
        let box = machine.ledger.cashBox
        let total = box.total(in: machine.setup.currency)
        return CashBoxReport(
            coins: box.coins.map(denomination), bills: box.bills.map(denomination), total: total.decimalString,
            totalText: format.string(for: total), collection: box.nextCollection > 1 ? box.nextCollection - 1 : nil,
            since: box.lastCollectedAt?.millisecondsSinceEpoch)
    }

    /// What a collection took, as its answer says it.
    func collection(_ collected: CashCollection) -> CashBoxReport {
        CashBoxReport(
            coins: collected.coins.map(denomination), bills: collected.bills.map(denomination), total: collected.total.decimalString,
            totalText: format.string(for: collected.total), collection: collected.number, since: collected.since?.millisecondsSinceEpoch)
    }

    private func positionLine(_ line: (item: String, amount: Money)) -> CoinsReport.PositionLine {
        CoinsReport.PositionLine(item: line.item, amount: line.amount.decimalString, amountText: format.string(for: line.amount))
    }

    private func denomination(_ coin: CoinCount) -> CoinsReport.Denomination {
        CoinsReport.Denomination(
            value: coin.value.decimalString, valueText: format.string(for: coin.value),
            count: coin.count, amount: (coin.value * coin.count).decimalString,
            amountText: format.string(for: coin.value * coin.count))
    }

    /// Whole-life totals from the ledger; with `since`, totals over the kept history.
    /// `now` measures how long an incident still under way has lasted.
    func sales(since: Instant?, at now: Instant) -> SalesReport {
        let totals = machine.salesTotals(since: since)
        let zero = SalesFigure.zero(machine.setup.currency)
        let products = totals.byProduct.sorted { ($0.value.count, name(of: $1.key)) > ($1.value.count, name(of: $0.key)) }
            .map { SalesReport.Product(product: $0.key.rawValue, name: name(of: $0.key), sold: figures($0.value)) }
        let configured = machine.setup.slots.map { slot in
            let price = machine.price(of: slot.id)
            return SalesReport.Slot(
                slot: slot.id.rawValue, product: slot.product.rawValue, price: price?.decimalString,
                priceText: price.map(format.string(for:)), sold: figures(totals.bySlot[slot.id] ?? zero))
        }
        let removed = totals.bySlot.keys.filter { machine.setup.slot($0) == nil }.sorted().map { id in
            SalesReport.Slot(
                slot: id.rawValue, product: machine.ledger.history.last { $0.slot == id }?.product.rawValue ?? "",
                price: nil, priceText: nil, sold: figures(totals.bySlot[id] ?? zero))
        }
        let currency = machine.setup.currency
        var report = SalesReport(
            machine: machineName, currency: currency.code, minorDigits: currency.minorDigits,
            since: since?.millisecondsSinceEpoch, incomplete: since.map { !machine.historyCovers(since: $0) } ?? false,
            products: products, slots: configured + removed, total: figures(totals.total),
            coinsIn: machine.ledger.coinsIn.decimalString, coinsInText: format.string(for: machine.ledger.coinsIn),
            cash: cashFigures)
        if since == nil {
            report.sinceLastRead = interim
            report.byPayment = AuditTotals(machine.ledger).byPayment.mapValues(figures)
            if machine.setup.usesPriceLists { report.priceLists = priceLists }
            report.events = events(at: now)
            report.devices = paymentDevices
            report.dexCommunicationID = dexIdentity?.communicationID
            report.dexAssetNumber = dexIdentity?.assetNumber
            let dex = machine.dex
            report.dexReads = SalesReport.DEXReads(
                reads: dex.reads, readsWithReset: dex.readsWithReset, resets: dex.resets, at: now.millisecondsSinceEpoch,
                lastReadAt: dex.lastRead?.at.millisecondsSinceEpoch, lastTerminal: dex.lastRead?.terminal)
        }
        return report
    }

    /// Each slot's sales per payment and list, whole-life and since the last DEX read, with the
    /// list's price for that payment now.
    private var priceLists: [SalesReport.PriceListLine] {
        let sinceRead = machine.interimTotals.byList
        return AuditTotals(machine.ledger).byList.sorted { $0.key < $1.key }.map { line, figure in
            let price = PricePayment(line.payment).flatMap { payment in
                machine.price(of: line.slot, on: line.list, payment: payment)
            }
            return SalesReport.PriceListLine(
                slot: line.slot.rawValue, payment: line.payment.description, list: line.list, price: price?.price.decimalString,
                sold: figures(figure), soldSinceLastRead: figures(sinceRead[line] ?? .zero(machine.setup.currency)))
        }
    }

    private var cashFigures: SalesReport.CashFigures {
        let ledger = machine.ledger
        let tubes = machine.changeInventory
        let tubeContents =
            tubes.isEmpty || levelSensedCoins || tubes.contains { $0.count == nil }
            ? nil
            : tubes.reduce(Money.zero(machine.setup.currency)) { $0 + $1.value * ($1.count ?? 0) }
        var figures = SalesReport.CashFigures(
            billsIn: ledger.billsIn.decimalString, coinsToTubes: ledger.coinsToTubes.decimalString,
            dispensed: ledger.dispensed.decimalString,
            manuallyDispensed: (ledger.testPayouts + ledger.manuallyDispensed).decimalString,
            filled: ledger.floatFilled.decimalString, tubeContents: tubeContents?.decimalString)
        figures.billsInText = format.string(for: ledger.billsIn)
        return figures
    }

    private func figures(_ figure: SalesFigure) -> SalesFigures {
        SalesFigures(count: figure.count, amount: figure.amount.decimalString, amountText: format.string(for: figure.amount))
    }

    private func name(of product: ProductID) -> String { catalog[product]?.name ?? product.rawValue }
}
