import VendConfig

/// Every sentence the customer reads, in the machine's language. Amounts arrive formatted.
public struct DisplayTexts: Sendable {
    public let language: DisplaySettings.Language

    public init(_ language: DisplaySettings.Language) {
        self.language = language
    }

    private func pick(_ ko: String, _ en: String) -> String { language == .ko ? ko : en }

    /// "콜라는 …", or "White Milk: …" when the name's last sound is not known (`KoreanParticle`).
    private static func koTopic(_ product: String, _ rest: String) -> String {
        KoreanParticle.topic.after(product).map { "\($0) \(rest)" } ?? "\(product): \(rest)"
    }

    public var insertMoney: String { pick("돈을 넣어 주세요", "Insert money") }
    public var insertMoneyOrCard: String { pick("돈을 넣거나 카드를 대 주세요", "Insert money or tap a card") }
    public var cardChoose: String { pick("카드가 준비되었습니다: 상품을 골라 주세요", "Card ready: choose a product") }
    public func cardApproval(_ product: String) -> String {
        pick("\(product): 카드를 대 주세요. 승인을 기다리는 중…", "\(product): tap your card. Waiting for approval…")
    }
    public func ageCheck(_ product: String, age: Int, atReader: Bool) -> String {
        atReader
            ? pick("\(product): \(age)세 이상 연령 확인. 카드 단말기에 신분증을 대 주세요", "Age check (\(age)+) for \(product): show your ID at the card reader")
            : pick("\(product): \(age)세 이상 연령 확인. 직원에게 신분증을 보여 주세요", "Age check (\(age)+) for \(product): show your ID to the attendant")
    }
    public func ageVerified(_ product: String) -> String {
        pick("연령 확인 완료: \(product)", "Age verified: \(product)")
    }
    public var ageCheckEnded: String {
        pick("연령 확인이 끝나지 않았습니다. 청구된 금액은 없습니다", "Age check not completed: nothing was charged. Choose again to retry")
    }
    public var ageNoVerifier: String {
        pick("이 상품은 연령 확인이 필요하여 이 자판기에서 판매하지 않습니다", "This product needs an age check, which this machine cannot do: choose another product")
    }
    public var cardDenied: String { pick("카드가 승인되지 않았습니다. 청구된 금액은 없습니다", "Card declined: nothing was charged") }
    public func insertMore(_ amount: String) -> String { pick("\(amount) 더 넣어 주세요", "Insert \(amount) more") }
    public func insertMore(_ amount: String, for product: String) -> String {
        pick("\(product): \(amount) 더 넣어 주세요", "\(product): insert \(amount) more")
    }
    public var choose: String { pick("상품을 골라 주세요", "Choose a product") }
    public func vending(_ product: String) -> String { pick("\(product) 나오는 중…", "Vending \(product)…") }
    public var vendingSomething: String { pick("나오는 중…", "Vending…") }
    public func takeItem(_ product: String) -> String {
        pick(KoreanParticle.object.after(product).map { "\($0) 꺼내 주세요" } ?? "\(product): 상품을 꺼내 주세요", "Take your \(product)")
    }
    /// Change paid after a sale, told with the item while its notice is up.
    public func takeItem(_ product: String, change: String) -> String {
        let goods = KoreanParticle.and.after(product).map { "\($0) " } ?? "\(product): 상품과 "
        let money = KoreanParticle.object.after(change).map { "거스름돈 \($0) 꺼내 주세요" } ?? "거스름돈을 꺼내 주세요 (\(change))"
        return pick(goods + money, "Take your \(product) and your change: \(change)")
    }
    public func change(_ amount: String) -> String {
        pick(KoreanParticle.object.after(amount).map { "거스름돈 \($0) 드립니다" } ?? "거스름돈을 드립니다 (\(amount))", "Take your change: \(amount)")
    }
    public func jam(_ credit: String) -> String {
        let kept = KoreanParticle.topic.after(credit).map { "투입 금액 \($0) 그대로 있습니다" } ?? "투입 금액은 그대로 있습니다 (\(credit))"
        return pick("상품이 걸려 나오지 않았습니다. " + kept, "Item stuck: nothing dropped. Your credit of \(credit) is kept")
    }
    public var cardJam: String {
        pick("상품이 걸려 나오지 않았습니다. 카드 결제는 환불됩니다", "Item stuck: nothing dropped. Your card payment is refunded")
    }
    public var outOfOrder: String { pick("고장: 지금은 사용할 수 없습니다", "Out of order") }
    public var outOfOrderDetail: String { pick("관리자에게 연락해 주세요", "Sorry: please try again later") }
    public var service: String { pick("점검 중입니다", "Service in progress") }
    public func soldOut(_ product: String) -> String {
        pick(Self.koTopic(product, "품절입니다. 다른 상품을 골라 주세요"), "\(product) is sold out: choose another product")
    }
    public func notAvailable(_ product: String) -> String {
        pick(Self.koTopic(product, "지금 판매하지 않습니다. 다른 상품을 골라 주세요"), "\(product) is not available now: choose another product")
    }
    public func outOfService(_ product: String) -> String {
        pick("\(product) 칸이 고장입니다. 다른 상품을 골라 주세요", "\(product) is out of service: choose another product")
    }
    public func noChange(_ credit: String) -> String {
        let stays =
            KoreanParticle.topic.after(credit).map { "\($0) 다음 구매에 쓸 수 있습니다" } ?? "투입 금액은 다음 구매에 쓸 수 있습니다 (\(credit))"
        return pick("이 자판기는 돈을 돌려드리지 못합니다. " + stays, "This machine cannot give money back: your \(credit) stays for a purchase")
    }
    public func refunded(_ amount: String) -> String {
        pick(KoreanParticle.object.after(amount).map { "\($0) 돌려드립니다" } ?? "돈을 돌려드립니다 (\(amount))", "Returning \(amount)")
    }
    public var nothingToReturn: String { pick("돌려드릴 돈이 없습니다", "There is no credit to return") }
    public var busy: String { pick("앞의 상품이 나오는 중입니다", "Please wait: an item is on its way") }
    public var noChangeHint: String {
        pick("거스름돈이 나오지 않습니다: 남은 금액은 다음 구매에 쓸 수 있습니다", "No change given: what is left stays for your next purchase")
    }
    public var exactChangeOnly: String {
        pick("거스름돈이 부족합니다: 정확한 금액을 넣어 주세요", "Exact change only: the machine may not be able to give change")
    }
    /// A time band's prices are shown ("Happy hour prices until 18:00").
    public func bandPrices(_ name: String?, until: String) -> String {
        guard let name else { return pick("\(until)까지 특별 가격", "Special prices until \(until)") }
        return pick("\(name): \(until)까지 특별 가격", "\(name) prices until \(until)")
    }
    /// A card session's prices are shown.
    public var cardPrices: String { pick("카드 가격입니다", "Prices shown are your card's") }

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
