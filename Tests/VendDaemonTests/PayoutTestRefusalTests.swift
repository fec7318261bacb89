import Foundation
import Testing
import VendingCore

@testable import VendControl
@testable import VendDaemon

/// `vendctl cash payout-test`: an amount the coins cannot make is a wrong argument, and one the
/// devices cannot cover (it would empty them) needs `--yes`.
@Suite(.timeLimit(.minutes(5))) struct PayoutTestRefusalTests {
    static let won = Currency(code: "KRW", minorDigits: 0)
    static let format = MoneyFormat(template: "{amount}원")!
    static func won(_ amount: Int64) -> Money { Money(minorUnits: amount, currency: won) }
    static let tubes = [
        ChangeStock(value: won(10), count: 20), ChangeStock(value: won(50), count: 10), ChangeStock(value: won(100), count: 30),
        ChangeStock(value: won(500), count: 0),
    ]

    static func refusal(_ amount: Int64, confirmed: Bool = false, coins: [ChangeStock] = tubes) -> ControlError? {
        CommandHandler.payoutTestRefusal(won(amount), confirmed: confirmed, coins: coins, format: format)
    }

    @Test func anAmountTheCoinsCannotMakeIsAWrongArgumentThatSaysWhatIsPossible() {
        let refused = Self.refusal(15)
        #expect(refused?.code == .badRequest)
        #expect(refused?.message == "the payout devices cannot pay 15원: their coins (10원, 50원, 100원) pay multiples of 10원; try 10원 or 20원")
        #expect(Self.refusal(5)?.message.hasSuffix("try 10원") == true)
        #expect(Self.refusal(700) == nil)
    }

    @Test func moreThanTheDevicesHoldNeedsConfirmation() {
        // 20 × 10 + 10 × 50 + 30 × 100 = 3,700원.
        let refused = Self.refusal(100_000)
        #expect(refused?.code == .badRequest)
        #expect(
            refused?.message
                == "the payout devices hold 3,700원: a test of 100,000원 would empty them. Add --yes to pay what they hold, or ask for less")
        #expect(Self.refusal(100_000, confirmed: true) == nil)
        #expect(Self.refusal(3_700) == nil)
        // A hopper that cannot count its coins: what it holds is unknown, nothing to compare.
        #expect(Self.refusal(100_000, coins: [ChangeStock(value: Self.won(100), count: nil)]) == nil)
    }

    @Test func theRequestCarriesTheConfirmation() throws {
        let request = ControlRequest(.payoutTest(amount: "100000", confirmed: true))
        let line = try JSONEncoder().encode(request)
        #expect(String(decoding: line, as: UTF8.self).contains(#""yes":true"#))
        #expect(try JSONDecoder().decode(ControlRequest.self, from: line) == request)
        let plain = try JSONDecoder().decode(ControlRequest.self, from: Data(#"{"v":1,"op":"payout-test","amount":"500"}"#.utf8))
        #expect(plain.command == .payoutTest(amount: "500", confirmed: false))
    }
}
