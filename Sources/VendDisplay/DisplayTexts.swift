import VendConfig

/// Every sentence the customer reads, in the machine's language. Amounts arrive formatted.
public struct DisplayTexts: Sendable {
    public let language: DisplaySettings.Language

    public init(_ language: DisplaySettings.Language) {
        self.language = language
    }

    private func pick(_ ko: String, _ en: String) -> String { language == .ko ? ko : en }

    public var insertMoney: String { pick("돈을 넣어 주세요", "Insert money") }
    public var insertMoneyOrCard: String { pick("돈을 넣거나 카드를 대 주세요", "Insert money or tap a card") }
    public var cardChoose: String { pick("카드가 준비되었습니다: 상품을 골라 주세요", "Card ready: choose a product") }
    public func cardApproval(_ product: String) -> String {
        pick("\(product): 카드를 대 주세요. 승인을 기다리는 중…", "\(product): tap your card. Waiting for approval…")
    }
    public var cardDenied: String { pick("카드가 승인되지 않았습니다. 청구된 금액은 없습니다", "Card declined: nothing was charged") }
    public func insertMore(_ amount: String) -> String { pick("\(amount) 더 넣어 주세요", "Insert \(amount) more") }
    public func insertMore(_ amount: String, for product: String) -> String {
        pick("\(product): \(amount) 더 넣어 주세요", "\(product): insert \(amount) more")
    }
    public var choose: String { pick("상품을 골라 주세요", "Choose a product") }
    public func vending(_ product: String) -> String { pick("\(product) 나오는 중…", "Vending \(product)…") }
    public var vendingSomething: String { pick("나오는 중…", "Vending…") }
    public func takeItem(_ product: String) -> String { pick("\(product)을(를) 꺼내 주세요", "Take your \(product)") }
    public func jam(_ credit: String) -> String {
        pick("상품이 걸려 나오지 않았습니다. 투입 금액 \(credit)은 그대로 있습니다", "Item stuck: nothing dropped. Your credit of \(credit) is kept")
    }
    public var outOfOrder: String { pick("고장: 지금은 사용할 수 없습니다", "Out of order") }
    public var outOfOrderDetail: String { pick("관리자에게 연락해 주세요", "Sorry: please try again later") }
    public var service: String { pick("점검 중입니다", "Service in progress") }
    public func soldOut(_ product: String) -> String {
        pick("\(product)은(는) 품절입니다. 다른 상품을 골라 주세요", "\(product) is sold out: choose another product")
    }
    public func notAvailable(_ product: String) -> String {
        pick("\(product)은(는) 지금 판매하지 않습니다. 다른 상품을 골라 주세요", "\(product) is not available now: choose another product")
    }
    public func outOfService(_ product: String) -> String {
        pick("\(product) 칸이 고장입니다. 다른 상품을 골라 주세요", "\(product) is out of service: choose another product")
    }
    public func noChange(_ credit: String) -> String {
        pick(
            "이 자판기는 돈을 돌려드리지 못합니다. \(credit)은 다음 구매에 쓸 수 있습니다",
            "This machine cannot give money back: your \(credit) stays for a purchase")
    }
    public func refunded(_ amount: String) -> String { pick("\(amount)을 돌려드립니다", "Returning \(amount)") }
    public var nothingToReturn: String { pick("돌려드릴 돈이 없습니다", "There is no credit to return") }
    public var busy: String { pick("앞의 상품이 나오는 중입니다", "Please wait: an item is on its way") }
    public var noChangeHint: String {
        pick("거스름돈이 나오지 않습니다: 남은 금액은 다음 구매에 쓸 수 있습니다", "No change given: what is left stays for your next purchase")
    }
    public var exactChangeOnly: String {
        pick("거스름돈이 부족합니다: 정확한 금액을 넣어 주세요", "Exact change only: the machine may not be able to give change")
    }

    // Labels of the page itself.
    public var credit: String { pick("투입 금액", "Credit") }
    public var soldOutBadge: String { pick("품절", "Sold out") }
    public var notAvailableBadge: String { pick("판매 중지", "Not available") }
    public var outOfServiceBadge: String { pick("고장", "Out of service") }
    public var hotBadge: String { pick("따뜻한", "HOT") }
    public var coinReturn: String { pick("반환", "Coin return") }
    public var bought: String { pick("구매한 상품", "Bought") }
    public var technician: String { pick("관리자 화면 (서비스 키)", "Technician (service key on)") }
    public var stock: String { pick("재고", "Stock") }
    public var restock: String { pick("채우기", "Restock") }
    public var sales: String { pick("판매 비율", "Sales") }
}
