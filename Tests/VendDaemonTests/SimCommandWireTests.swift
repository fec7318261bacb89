import Foundation
import Testing
import VendControl

/// The `sim-…` verbs are `ControlCommand.sim` in Swift and ops of their own on the wire: every
/// line vendctl, the tests and the scripts send is the one they sent before the move.
@Suite struct SimCommandWireTests {
    static let lines: [(SimCommand, String)] = [
        (.press(slot: "A1"), #"{"op":"sim-press","slot":"A1","v":1}"#),
        (.coin(amount: "500"), #"{"amount":"500","op":"sim-coin","v":1}"#),
        (.note(amount: "1000"), #"{"amount":"1000","op":"sim-note","v":1}"#),
        (.card(reader: 1, action: .tap(funds: "50.00")), #"{"action":"tap","amount":"50.00","op":"sim-card","reader":1,"v":1}"#),
        (.card(reader: 1, action: .tap(funds: nil)), #"{"action":"tap","op":"sim-card","reader":1,"v":1}"#),
        (.card(reader: 2, action: .slow(polls: 3)), #"{"action":"slow","count":3,"op":"sim-card","reader":2,"v":1}"#),
        (.card(reader: 2, action: .refundFail), #"{"action":"refund-fail","op":"sim-card","reader":2,"v":1}"#),
        (.drop(slot: "B2", succeeds: false), #"{"op":"sim-drop","slot":"B2","succeeds":false,"v":1}"#),
        (.motor(slot: "C5", action: "jam"), #"{"action":"jam","op":"sim-motor","slot":"C5","v":1}"#),
        (.coinReturn, #"{"op":"sim-coin-return","v":1}"#),
        (.key(on: true), #"{"on":true,"op":"sim-key","v":1}"#),
        (.door(open: false), #"{"on":false,"op":"sim-door","v":1}"#),
        (.verifyAge, #"{"op":"sim-verify-age","v":1}"#),
        (.temp(zone: "chilled", value: "7.5"), #"{"op":"sim-temp","v":1,"value":"7.5","zone":"chilled"}"#),
        (.sensorFault(zone: "chilled", fault: "crc"), #"{"fault":"crc","op":"sim-sensor-fault","v":1,"zone":"chilled"}"#),
    ]

    @Test(arguments: lines)
    func eachVerbKeepsItsLine(command: SimCommand, line: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        #expect(String(decoding: try encoder.encode(ControlRequest(.sim(command))), as: UTF8.self) == line)
        #expect(try ControlRequest.decode(line: line).get() == ControlRequest(.sim(command)))
    }

    @Test func everyOpIsKnownOnceAndNeedsATechnician() {
        let ops = Self.lines.map(\.0.op)
        #expect(Set(ops) == Set(SimCommand.knownOps))
        #expect(ControlCommand.knownOps.count == Set(ControlCommand.knownOps).count)
        #expect(SimCommand.knownOps.allSatisfy(ControlCommand.knownOps.contains))
        #expect(Self.lines.allSatisfy { ControlCommand.sim($0.0).permission == .technician })
    }
}
