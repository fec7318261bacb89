import Foundation
import Testing
import VendControl
import VendingCore

/// `vendctl price --list N --payment P` on the wire: the op `price` of today with two more
/// fields, list 1 for every payment still the plain `price`, and hostile lines refused by name.
@Suite struct PriceRequestTests {
    static func decode(_ line: String) -> Result<ControlRequest, ControlError> { ControlRequest.decode(line: line) }

    @Test func aLineOnAListKeepsTheOpAndAddsTwoFields() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let command = ControlCommand.priceLine(slot: "A1", amount: "0.80", list: 2, payment: .cashless1)
        let line = #"{"amount":"0.80","list":2,"op":"price","payment":"cashless1","slot":"A1","v":1}"#
        #expect(String(decoding: try encoder.encode(ControlRequest(command)), as: UTF8.self) == line)
        #expect(try Self.decode(line).get() == ControlRequest(command))
        #expect(command.permission == .technician && ControlCommand.prices.permission == .anyone)
        // Today's line, and list 1 for every payment spelt out, are the slot's price.
        #expect(try Self.decode(#"{"v":1,"op":"price","slot":"A1","amount":"1.50"}"#).get() == ControlRequest(.price(slot: "A1", amount: "1.50")))
        #expect(
            try Self.decode(#"{"v":1,"op":"price","slot":"A1","amount":"1.50","list":1,"payment":"any"}"#).get()
                == ControlRequest(.price(slot: "A1", amount: "1.50")))
        #expect(
            try Self.decode(#"{"v":1,"op":"price","slot":"A1","amount":"default","payment":"cash"}"#).get()
                == ControlRequest(.priceLine(slot: "A1", amount: "default", list: 1, payment: .cash)))
        #expect(try Self.decode(#"{"v":1,"op":"prices"}"#).get() == ControlRequest(.prices))
    }

    static let hostile: [(String, String)] = [
        (#"{"v":1,"op":"price","slot":"A1","amount":"1","list":0}"#, "list 0 is not a price list number (1 to 999)"),
        (#"{"v":1,"op":"price","slot":"A1","amount":"1","list":1000}"#, "list 1000 is not a price list number (1 to 999)"),
        (#"{"v":1,"op":"price","slot":"A1","amount":"1","list":-2}"#, "list -2 is not a price list number (1 to 999)"),
        (#"{"v":1,"op":"price","slot":"A1","amount":"1","list":"2"}"#, "'list' has the wrong type"),
        // Foundation reports a number that fits no Int without its key: refused all the same.
        (#"{"v":1,"op":"price","slot":"A1","amount":"1","list":2.5}"#, #"not a JSON request line (expected {"v":1,"op":"status"} and the like)"#),
        (
            #"{"v":1,"op":"price","slot":"A1","amount":"1","list":99999999999999999999}"#,
            #"not a JSON request line (expected {"v":1,"op":"status"} and the like)"#
        ),
        (
            #"{"v":1,"op":"price","slot":"A1","amount":"1","payment":"bitcoin"}"#,
            "unknown payment 'bitcoin' (known: any, cash, cashless, cashless1, cashless2)"
        ),
        (
            #"{"v":1,"op":"price","slot":"A1","amount":"1","payment":"CASH"}"#,
            "unknown payment 'CASH' (known: any, cash, cashless, cashless1, cashless2)"
        ),
        (#"{"v":1,"op":"price","slot":"A1","amount":"1","payment":3}"#, "'payment' has the wrong type"),
        (#"{"v":1,"op":"price","slot":"A1","list":2}"#, "missing 'amount'"),
    ]

    @Test(arguments: hostile)
    func hostileLinesAreRefusedByName(line: String, message: String) {
        guard case .failure(let error) = Self.decode(line) else {
            Issue.record("accepted \(line)")
            return
        }
        #expect(error.code == .badRequest)
        #expect(error.message == message)
    }
}
