import VendConfig
import VendControl
import VendReports
import VendingCore

/// The machine as one output shows it, in its language and money format: the kiosk sends it to
/// the page as JSON, the LCD draws lines from it. Built from `FollowedMachine` by a pure function.
public struct MachineView: Codable, Sendable, Equatable {
    public enum Mode: String, Codable, Sendable {
        case customer
        case outOfOrder = "out-of-order"
        /// Sales stopped (a technician, the door): the customer is told to wait.
        case service
        /// The service key is on: stock, restock buttons and the sales chart.
        case technician
    }

    public struct Slot: Codable, Sendable, Equatable {
        public let id: String
        public let product: String
        public let name: String
        /// The LCD's ASCII name.
        public let shortName: String
        /// What the customer pays: the card session's price while one is open, else the cash
        /// price (the band's during a band).
        public let priceText: String
        /// List 1's price while the customer pays less (the kiosk strikes it through); nil otherwise.
        public let wasText: String?
        /// The kiosk's URL for the picture, if the product has one.
        public let picture: String?
        /// Nothing can be bought from it: sold out, health-locked or out of service.
        public let soldOut: Bool
        /// Why not, in the customer's words (the card's badge); nil while it sells.
        public let badge: String?
        public let hot: Bool
        /// The credit covers the price and an item is there: this one stands out.
        public let affordable: Bool
        public let available: Int
        public let stock: Int
        public let capacity: Int
    }

    public struct Bought: Codable, Sendable, Equatable {
        public let slot: String
        public let name: String
        public let picture: String?
        public let priceText: String
    }

    /// What to do next, and how urgent it is (the page colours it).
    public struct Message: Codable, Sendable, Equatable {
        public enum Tone: String, Codable, Sendable { case info, good, warning, error }
        public let text: String
        public let tone: Tone
    }

    public let mode: Mode
    public let machine: String
    public let creditText: String
    public let message: Message
    /// A standing line under the message (no change given), if any.
    public let hint: String?
    /// Whose prices are shown when they are not the usual ones: a time band's (until when) or
    /// the card's; nil otherwise.
    public let priceNote: String?
    public let slots: [Slot]
    public let bought: [Bought]
    /// The page's own labels in the machine's language.
    public let labels: [String: String]
    /// Changes whenever the sales figures do, so the page reloads the pie chart only then.
    public let salesVersion: String?
    /// The pie chart's legend, drawn by the page in type a technician can read at the machine.
    public let salesLegend: [PieChart.LegendEntry]?

    /// How the view is drawn: language, money, pictures, names.
    public struct Style: Sendable {
        public let texts: DisplayTexts
        public let format: MoneyFormat
        public let currency: Currency
        public let faces: [String: ProductFace]
        public let hot: Set<String>
        public let givesNoChange: Bool
        /// Products named by their ASCII short names (the LCD).
        public let asciiNames: Bool
        public let pictureURL: @Sendable (String) -> String?

        public init(
            texts: DisplayTexts, format: MoneyFormat, currency: Currency, faces: [String: ProductFace], hot: Set<String>,
            givesNoChange: Bool, asciiNames: Bool, pictureURL: @escaping @Sendable (String) -> String?
        ) {
            self.texts = texts
            self.format = format
            self.currency = currency
            self.faces = faces
            self.hot = hot
            self.givesNoChange = givesNoChange
            self.asciiNames = asciiNames
            self.pictureURL = pictureURL
        }

        /// The kiosk's style: the machine's language and money format.
        public static func kiosk(_ config: VenddConfig, pictureURL: @escaping @Sendable (String) -> String?) -> Style {
            Style(
                texts: DisplayTexts(config.display.language), format: config.machine.moneyFormat,
                currency: config.machine.currency, faces: config.productFaces,
                hot: Set(config.products.filter(\.isHot).map(\.id.rawValue)),
                givesNoChange: config.machine.payout == .none, asciiNames: false, pictureURL: pictureURL)
        }

        /// The LCD's style: English (its ROM has no Hangul), short names, amounts with the
        /// currency code ("1,200 KRW") instead of a symbol it cannot draw.
        public static func lcd(_ config: VenddConfig) -> Style {
            let format = config.machine.moneyFormat
            let ascii =
                MoneyFormat(
                    template: "{amount} \(config.machine.currency.code)", groupingSeparator: format.groupingSeparator,
                    decimalSeparator: format.decimalSeparator) ?? .plain(config.machine.currency)
            return Style(
                texts: DisplayTexts(.en), format: ascii, currency: config.machine.currency, faces: config.productFaces,
                hot: Set(config.products.filter(\.isHot).map(\.id.rawValue)),
                givesNoChange: config.machine.payout == .none, asciiNames: true, pictureURL: { _ in nil })
        }

        /// The name an output can show: the LCD's ASCII short name, or the configured name.
        func name(_ product: String, status: StatusReport) -> String {
            let configured = status.slots.first { $0.product == product }?.productName ?? product
            return asciiNames ? LCDText.shortName(configured, face: faces[product], id: product) : configured
        }

        func money(_ decimal: String) -> Money? { try? Money(parsing: decimal, currency: currency) }
        func text(_ decimal: String) -> String { money(decimal).map(format.string(for:)) ?? decimal }
    }

    public init(_ followed: FollowedMachine, style: Style) {
        let texts = style.texts
        labels = [
            "credit": texts.credit, "hot": texts.hotBadge, "coinReturn": texts.coinReturn,
            "bought": texts.bought, "technician": texts.technician, "stock": texts.stock, "restock": texts.restock,
            "sales": texts.sales,
        ]
        guard let status = followed.status else {
            mode = .outOfOrder
            machine = ""
            creditText = ""
            message = Message(text: texts.outOfOrder, tone: .error)
            hint = texts.outOfOrderDetail
            priceNote = nil
            slots = []
            bought = []
            salesVersion = nil
            salesLegend = nil
            return
        }
        let credit = style.money(status.credit)
        machine = status.machine
        creditText = style.text(status.credit)
        slots = status.slots.map { slot in
            let price = style.money(slot.price)
            let name = slot.productName
            let shortName = LCDText.shortName(name, face: style.faces[slot.product], id: slot.product)
            let pays = slot.customerPrice
            // "Was" only for a discount: list 1's price above what the customer pays.
            let was = slot.listPrice.flatMap { list -> String? in
                guard let listPrice = style.money(list), let paid = style.money(pays), paid < listPrice else { return nil }
                return style.format.string(for: listPrice)
            }
            return Slot(
                id: slot.id, product: slot.product, name: style.asciiNames ? shortName : name, shortName: shortName,
                priceText: style.text(pays), wasText: was,
                picture: style.pictureURL(slot.product), soldOut: slot.available == 0, badge: Self.badge(slot, texts: texts),
                hot: style.hot.contains(slot.product),
                affordable: slot.available > 0 && Self.covers(credit, price),
                available: slot.available, stock: slot.stock, capacity: slot.capacity)
        }
        bought = followed.bought.map {
            Bought(
                slot: $0.slot, name: style.name($0.product, status: status), picture: style.pictureURL($0.product), priceText: style.text($0.price))
        }
        salesVersion = followed.sales.map { "\($0.total.count)-\($0.total.amount)" }
        salesLegend = followed.sales.map { Self.salesChart($0, texts: texts).legend }
        hint = style.givesNoChange ? texts.noChangeHint : status.exactChangeOnly == true ? texts.exactChangeOnly : nil
        priceNote = Self.priceNote(status, texts: texts)

        switch status.state {
        case "out-of-order":
            mode = .outOfOrder
            message = Message(text: texts.outOfOrder, tone: .error)
            return
        case "service-mode":
            mode = status.serviceKey == true ? .technician : .service
            message = Message(text: texts.service, tone: .warning)
            return
        default:
            mode = .customer
        }
        if let vend = status.vendInProgress {
            // "V12 at slot A1": the slot tells the product.
            let slotID = vend.split(separator: " ").last.map(String.init)
            let product = status.slots.first { $0.id == slotID }.map { style.name($0.product, status: status) }
            if status.cardVendAwaitingApproval == true {
                message = Message(text: texts.cardApproval(product ?? ""), tone: .info)
            } else {
                message = Message(text: product.map(texts.vending) ?? texts.vendingSomething, tone: .info)
            }
        } else if let check = status.ageCheck {
            let product = status.slots.first { $0.id == check.slot }.map { style.name($0.product, status: status) } ?? check.slot
            message =
                check.approved
                ? Message(text: texts.ageVerified(product), tone: .good)
                : Message(text: texts.ageCheck(product, age: check.age, atReader: check.atReader == true), tone: .info)
        } else if let notice = followed.notice?.notice {
            message = Self.message(for: notice, creditText: creditText, style: style) { style.name($0, status: status) }
        } else if status.cardSession != nil {
            message = Message(text: texts.cardChoose, tone: .good)
        } else if credit?.isZero ?? true {
            let takesCards = status.cardReaders?.contains(where: \.ready) == true
            message = Message(text: takesCards ? texts.insertMoneyOrCard : texts.insertMoney, tone: .info)
        } else if slots.contains(where: \.affordable) {
            message = Message(text: texts.choose, tone: .good)
        } else {
            // Nothing affordable yet: how much more the cheapest product still there needs.
            let cheapest = status.slots.filter { $0.available > 0 }.compactMap { style.money($0.price) }.min()
            if let cheapest, let credit {
                message = Message(text: texts.insertMore(style.format.string(for: cheapest - credit)), tone: .info)
            } else {
                message = Message(text: texts.insertMoney, tone: .info)
            }
        }
    }

    /// The technician screen's pie chart of the sales: the kiosk draws its slices, the page its legend.
    public static func salesChart(_ sales: SalesReport, texts: DisplayTexts) -> PieChart {
        PieChart(
            title: "\(texts.sales) — \(sales.machine)",
            slices: sales.products.map { PieChart.Slice(label: $0.name, value: $0.sold.count, detail: "\($0.sold.count) · \($0.sold.amountText)") })
    }

    /// The card's prices while a session shows some other than cash's, else the band's.
    private static func priceNote(_ status: StatusReport, texts: DisplayTexts) -> String? {
        if status.cardSession != nil, status.slots.contains(where: { $0.sessionPrice != nil }) { return texts.cardPrices }
        guard let band = status.priceBand else { return nil }
        // "sat 18:00": the customer needs the time.
        return texts.bandPrices(band.name, until: band.untilText.split(separator: " ").last.map(String.init) ?? band.untilText)
    }

    /// A fault or a health lock says more than "sold out": the customer should not wait for a restock.
    private static func badge(_ slot: StatusReport.Slot, texts: DisplayTexts) -> String? {
        if slot.fault != nil { return texts.outOfServiceBadge }
        if slot.healthLock != nil || slot.expired != nil { return texts.notAvailableBadge }
        return slot.available == 0 ? texts.soldOutBadge : nil
    }

    private static func covers(_ credit: Money?, _ price: Money?) -> Bool {
        guard let credit, let price else { return false }
        return price <= credit
    }

    static func message(for notice: Notice, creditText: String, style: Style, name: (String) -> String) -> Message {
        let texts = style.texts
        switch notice {
        case .takeItem(let product): return Message(text: texts.takeItem(name(product)), tone: .good)
        case .jam: return Message(text: texts.jam(creditText), tone: .error)
        case .cardJam: return Message(text: texts.cardJam, tone: .error)
        case .soldOut(let product): return Message(text: texts.soldOut(name(product)), tone: .warning)
        case .notAvailable(let product): return Message(text: texts.notAvailable(name(product)), tone: .warning)
        case .outOfService(let product): return Message(text: texts.outOfService(name(product)), tone: .warning)
        case .insertMore(let product, let missing):
            return Message(text: texts.insertMore(style.text(missing), for: name(product)), tone: .warning)
        case .noChange: return Message(text: texts.noChange(creditText), tone: .warning)
        case .refunded(let amount): return Message(text: texts.refunded(style.text(amount)), tone: .good)
        case .change(let amount): return Message(text: texts.change(style.text(amount)), tone: .good)
        case .takeItemAndChange(let product, let change):
            return Message(text: texts.takeItem(name(product), change: style.text(change)), tone: .good)
        case .nothingToReturn: return Message(text: texts.nothingToReturn, tone: .info)
        case .busy: return Message(text: texts.busy, tone: .info)
        case .cardDenied: return Message(text: texts.cardDenied, tone: .warning)
        case .ageCheckEnded: return Message(text: texts.ageCheckEnded, tone: .warning)
        case .ageNoVerifier: return Message(text: texts.ageNoVerifier, tone: .warning)
        case .refused(let reason): return Message(text: reason, tone: .warning)
        }
    }
}
