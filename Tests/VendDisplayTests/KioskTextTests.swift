import Testing
import VendConfig
import VendControl
import VendingCore

@testable import VendDisplay

/// The customer's sentences in Korean: the particle after a name or an amount follows its last
/// sound, and a name whose sound its spelling does not tell is phrased around (no "을(를)").
@Suite struct KioskTextTests {
    let ko = DisplayTexts(.ko)

    @Test func particlesFollowTheLastSyllable() {
        #expect(ko.takeItem("콜라") == "콜라를 꺼내 주세요")
        #expect(ko.takeItem("보리차") == "보리차를 꺼내 주세요")
        #expect(ko.takeItem("콘칩") == "콘칩을 꺼내 주세요")
        #expect(ko.soldOut("바나나우유") == "바나나우유는 품절입니다. 다른 상품을 골라 주세요")
        #expect(ko.soldOut("캔커피 큰것") == "캔커피 큰것은 품절입니다. 다른 상품을 골라 주세요")
        #expect(ko.notAvailable("삼각김밥") == "삼각김밥은 지금 판매하지 않습니다. 다른 상품을 골라 주세요")
    }

    /// Latin names are read as words ("Milk" 밀크, "Corn" 콘): the sentence needs no particle.
    @Test func latinNamesArePhrasedWithoutAParticle() {
        #expect(ko.takeItem("White Milk") == "White Milk: 상품을 꺼내 주세요")
        #expect(ko.soldOut("Hot Café Latte") == "Hot Café Latte: 품절입니다. 다른 상품을 골라 주세요")
        #expect(ko.notAvailable("Corn Chips (L)") == "Corn Chips (L): 지금 판매하지 않습니다. 다른 상품을 골라 주세요")
        for sentence in [ko.takeItem("Cola"), ko.soldOut("Cola"), ko.notAvailable("Cola"), ko.takeItem("Tea 2")] {
            #expect(!sentence.contains("("), "\(sentence)")
        }
    }

    /// Amounts: "원" ends in a consonant; a number is read in Sino-Korean ("₩1,500" 천오백, "₩2" 이).
    @Test func amountsTakeTheParticleOfTheirReading() {
        #expect(ko.jam("1,500원") == "상품이 걸려 나오지 않았습니다. 투입 금액 1,500원은 그대로 있습니다")
        #expect(ko.refunded("1,500원") == "1,500원을 돌려드립니다")
        #expect(ko.refunded("₩1,500") == "₩1,500을 돌려드립니다")
        #expect(ko.refunded("₩2") == "₩2를 돌려드립니다")
        #expect(ko.refunded("₩7") == "₩7을 돌려드립니다")
        #expect(ko.noChange("₩900") == "이 자판기는 돈을 돌려드리지 못합니다. ₩900은 다음 구매에 쓸 수 있습니다")
        #expect(ko.refunded("1,500 KRW") == "돈을 돌려드립니다 (1,500 KRW)")
        #expect(ko.jam("1,500 KRW") == "상품이 걸려 나오지 않았습니다. 투입 금액은 그대로 있습니다 (1,500 KRW)")
    }

    /// A coin, a bill or a card that finds the machine holding nothing starts a new customer: the
    /// strip no longer shows what the one before bought.
    @Test func theNextCustomerStartsWithAnEmptyStrip() {
        let sale = HistoryReport.Sale(
            vend: 7, at: 10_000, slot: "A1", product: "banana-milk", productName: "Banana Milk",
            price: "1200", priceText: "1,200원", confirmation: "drop-sensor")
        for kind in ["coin", "bill", "card-session"] {
            var machine = MachineViewTests.machine(MachineViewTests.status(credit: "1500"))
            machine.sold(sale, at: 10_000)
            machine.status = MachineViewTests.status(credit: "300")
            machine.observe(kind: "coin", at: 11_000)
            #expect(machine.bought.count == 1, "credit left: the same customer adds a coin")
            machine.status = MachineViewTests.status(credit: "0")
            machine.observe(kind: kind, at: 12_000)
            #expect(machine.bought.isEmpty, "a \(kind) on a machine that held nothing: a new customer")
        }
        // A vend in flight: its customer's, whatever the credit says.
        var vending = MachineViewTests.machine(MachineViewTests.status(credit: "0", vend: "V8 at slot A1"))
        vending.sold(sale, at: 10_000)
        vending.observe(kind: "coin", at: 10_500)
        #expect(vending.bought.count == 1)
        // Nothing known (vendd away): nothing is cleared.
        var away = MachineViewTests.machine(MachineViewTests.status(credit: "0"))
        away.sold(sale, at: 10_000)
        away.status = nil
        away.observe(kind: "coin", at: 10_500)
        #expect(away.bought.count == 1)
    }

    /// The rule of `KoreanParticle`, each case once.
    @Test func particleFormsFollowTheRule() {
        #expect(KoreanParticle.object.after("우유") == "우유를")
        #expect(KoreanParticle.object.after("빵") == "빵을")
        #expect(KoreanParticle.subject.after("커피") == "커피가")
        #expect(KoreanParticle.subject.after("떡") == "떡이")
        #expect(KoreanParticle.topic.after("사이다 ") == "사이다 는", "trailing spaces are not the last sound")
        #expect(KoreanParticle.and.after("콜라") == "콜라와")
        #expect(KoreanParticle.and.after("김밥") == "김밥과")
        // 영 일 이 삼 사 오 육 칠 팔 구
        let digits = (0...9).map { KoreanParticle.topic.after("\($0)")!.last! }
        #expect(String(digits) == "은은는은는는은은은는")
        for unknown in ["Milk", "Cola!", "(대)", "", "ㅋ"] {
            #expect(KoreanParticle.object.after(unknown) == nil, "\(unknown)")
        }
    }

    /// Change paid after a sale is told with the item, in both languages.
    @Test func changeIsToldWithTheItem() {
        #expect(ko.takeItem("콜라", change: "300원") == "콜라와 거스름돈 300원을 꺼내 주세요")
        #expect(ko.takeItem("콘칩", change: "₩500") == "콘칩과 거스름돈 ₩500을 꺼내 주세요")
        #expect(ko.takeItem("Cola", change: "300원") == "Cola: 상품과 거스름돈 300원을 꺼내 주세요")
        #expect(ko.change("300원") == "거스름돈 300원을 드립니다")
        #expect(DisplayTexts(.en).takeItem("Cola", change: "300원") == "Take your Cola and your change: 300원")
        #expect(DisplayTexts(.en).change("300원") == "Take your change: 300원")
    }
}
