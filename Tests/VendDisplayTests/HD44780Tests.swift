import Synchronization
import Testing

@testable import VendDisplay

/// Records what the LCD driver writes, as the PCF8574 would receive it.
final class RecordingDevice: I2CDevice {
    let writes = Mutex<[[UInt8]]>([])
    func write(_ bytes: [UInt8]) throws(I2CError) { writes.withLock { $0.append(bytes) } }
}

/// The HD44780's 4-bit protocol through the PCF8574 backpack's bit map (P0=RS, P1=RW, P2=E,
/// P3=backlight, P4–P7=D4–D7), checked byte by byte against the datasheet.
@Suite struct HD44780Tests {
    /// The datasheet's view of one transfer: RS, then the 4 data bits on D7–D4. The expander byte
    /// is the data in the high half, backlight (0x08) on, RS in bit 0, and E (0x04) pulsed:
    /// low, high, low.
    static func expander(rs: Bool, nibble: UInt8) -> [UInt8] {
        let byte = nibble << 4 | 0x08 | (rs ? 0x01 : 0x00)
        return [byte, byte | 0x04, byte]
    }

    static func instruction(_ code: UInt8) -> [UInt8] { expander(rs: false, nibble: code >> 4) + expander(rs: false, nibble: code & 0x0F) }
    static func character(_ code: UInt8) -> [UInt8] { expander(rs: true, nibble: code >> 4) + expander(rs: true, nibble: code & 0x0F) }

    @Test func initialisationIsTheDatasheetsFourBitSequence() {
        let steps = HD44780(columns: 16, rows: 2).initialisation
        // Figure 24 ("4-bit interface"): wait > 40 ms; 0x3 (RS=0); wait > 4.1 ms; 0x3; wait > 100 µs;
        // 0x3; 0x2; then function set N=1 F=0, display off, clear (1.52 ms), entry mode I/D=1, display on.
        let expected: [HD44780.Step] = [
            .pause(.milliseconds(50)),
            .write([0x08]),
            .write([0x38, 0x3C, 0x38]),
            .pause(.microseconds(4_500)),
            .write([0x38, 0x3C, 0x38]),
            .pause(.microseconds(150)),
            .write([0x38, 0x3C, 0x38]),
            .write([0x28, 0x2C, 0x28]),
            .write([0x28, 0x2C, 0x28, 0x88, 0x8C, 0x88]),  // 0x28 function set: 4 bits, 2 lines, 5×8
            .write([0x08, 0x0C, 0x08, 0x88, 0x8C, 0x88]),  // 0x08 display off
            .write([0x08, 0x0C, 0x08, 0x18, 0x1C, 0x18]),  // 0x01 clear
            .pause(.microseconds(2_000)),
            .write([0x08, 0x0C, 0x08, 0x68, 0x6C, 0x68]),  // 0x06 entry mode: increment, no shift
            .write([0x08, 0x0C, 0x08, 0xC8, 0xCC, 0xC8]),  // 0x0C display on, no cursor, no blink
        ]
        #expect(steps == expected)
        #expect(steps.allSatisfy { if case .pause(let d) = $0 { d >= .microseconds(150) } else { true } })
        // The literal bytes are the bit map applied to the datasheet's instructions.
        #expect(expected[8] == .write(Self.instruction(0x28)))
        #expect(expected[13] == .write(Self.instruction(0x0C)))
    }

    @Test func theDriverWritesTheInitialisationInOrder() throws {
        let device = RecordingDevice()
        try CharacterLCD.perform(HD44780(columns: 16, rows: 2).initialisation, on: device)
        let writes = HD44780(columns: 16, rows: 2).initialisation.compactMap { if case .write(let b) = $0 { b } else { nil } }
        #expect(device.writes.withLock { $0 } == writes)
    }

    @Test func aTwoLineUpdateSetsEachRowsAddressThenWritesItsCharacters() throws {
        let device = RecordingDevice()
        let lcd = CharacterLCD(device: device, columns: 16, rows: 2) { _ in }
        let rows = ["Credit 1,500 KRW", "Choose a product"]
        try CharacterLCD.perform(lcd.updates(from: nil, to: rows), on: device)
        let written = device.writes.withLock { $0 }
        // Row 0 at DDRAM 0x00 (instruction 0x80), row 1 at 0x40 (0xC0); each row in one I2C write.
        #expect(
            written == [
                Self.instruction(0x80) + rows[0].utf8.flatMap { Self.character($0) },
                Self.instruction(0xC0) + rows[1].utf8.flatMap { Self.character($0) },
            ])
        // 'C' is 0x43: RS=1, high nibble 4 then low nibble 3.
        #expect(Array(written[0][6..<12]) == [0x49, 0x4D, 0x49, 0x39, 0x3D, 0x39])
        #expect(written[0].count == 6 * 17)

        // The next frame rewrites only the row that changed, padded to the width.
        device.writes.withLock { $0.removeAll() }
        try CharacterLCD.perform(lcd.updates(from: rows, to: ["Credit 1,500 KRW", "Vending Cola..."]), on: device)
        #expect(device.writes.withLock { $0 } == [Self.instruction(0xC0) + "Vending Cola... ".utf8.flatMap { Self.character($0) }])
    }

    @Test func fourRowModulesContinueRowsZeroAndOne() {
        let lcd = HD44780(columns: 20, rows: 4)
        #expect((0..<4).map(lcd.rowAddress) == [0x00, 0x40, 0x14, 0x54])
    }

    @Test func textTheRomCannotDrawIsReplaced() {
        #expect(LCDText.characterCodes("Café…\\~", width: 10) == Array("Caf?.../? ".utf8))
        #expect(LCDText.characterCodes("a very long line for sixteen", width: 16) == Array("a very long line".utf8))
    }

    @Test func longLinesScrollAndShortOnesStandStill() {
        let text = "Take your Hot Cafe Latte"
        #expect(LCDText.scrolled(text, width: 16, step: 0) == "Take your Hot Ca")
        #expect(LCDText.scrolled(text, width: 16, step: 1) == "ake your Hot Caf")
        #expect(LCDText.scrolled(text, width: 16, step: 20) == "atte    Take you")
        #expect(LCDText.scrolled(text, width: 16, step: 28) == LCDText.scrolled(text, width: 16, step: 0))
        #expect(LCDText.scrolled("Insert money", width: 16, step: 7) == "Insert money")
    }
}
