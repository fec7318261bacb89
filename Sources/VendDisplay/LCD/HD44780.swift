/// An HD44780 character LCD in 4-bit mode behind a PCF8574 I2C backpack, with the common wiring:
///
///     PCF8574 pin  P7  P6  P5  P4  P3         P2  P1  P0
///     LCD signal   D7  D6  D5  D4  backlight  E   RW  RS
///
/// Each 4-bit transfer is three expander writes: the nibble with E low (RS and data settle
/// before E rises: tAS), E high, E low again (the LCD latches on the falling edge). At the
/// I2C bus's 100 kHz one byte takes about 90 µs, longer than any of the HD44780's timings
/// except the ones `pause` covers (power-up, the reset nibbles, clear).
public struct HD44780: Sendable {
    public static let registerSelect: UInt8 = 0x01
    public static let readWrite: UInt8 = 0x02
    public static let enable: UInt8 = 0x04
    public static let backlight: UInt8 = 0x08

    /// One step of talking to the LCD: bytes for the expander, or a wait.
    public enum Step: Equatable, Sendable {
        case write([UInt8])
        case pause(Duration)
    }

    public let columns: Int
    public let rows: Int

    public init(columns: Int, rows: Int) {
        self.columns = columns
        self.rows = rows
    }

    /// The expander bytes of one nibble: RS for data (not a command), the backlight kept on.
    static func nibble(_ value: UInt8, data: Bool) -> [UInt8] {
        let bits = (value & 0x0F) << 4 | backlight | (data ? registerSelect : 0)
        return [bits, bits | enable, bits]
    }

    /// A byte is its high nibble, then its low nibble.
    static func byte(_ value: UInt8, data: Bool) -> [UInt8] {
        nibble(value >> 4, data: data) + nibble(value, data: data)
    }

    /// The datasheet's "initializing by instruction" for the 4-bit interface (figure 24): three
    /// 0x3 nibbles with the waits between them, 0x2 for 4 bits, then function set (2 lines, 5×8
    /// dots; 4-row modules are 2-line controllers too), display off, clear, entry mode (cursor
    /// moves right, no shift), display on without cursor.
    public var initialisation: [Step] {
        [
            .pause(.milliseconds(50)),  // > 40 ms after VCC rises to 2.7 V
            .write([Self.backlight]),  // every line low, the backlight on
            .write(Self.nibble(0x3, data: false)),
            .pause(.microseconds(4_500)),  // > 4.1 ms
            .write(Self.nibble(0x3, data: false)),
            .pause(.microseconds(150)),  // > 100 µs
            .write(Self.nibble(0x3, data: false)),
            .write(Self.nibble(0x2, data: false)),
            .write(Self.byte(0x28, data: false)),  // function set: DL=0 (4 bits), N=1 (2 lines), F=0 (5×8)
            .write(Self.byte(0x08, data: false)),  // display off
            .write(Self.byte(0x01, data: false)),  // clear display
            .pause(.microseconds(2_000)),  // clear takes 1.52 ms
            .write(Self.byte(0x06, data: false)),  // entry mode: I/D=1, S=0
            .write(Self.byte(0x0C, data: false)),  // display on, cursor off, blink off
        ]
    }

    /// DDRAM address of a row's first column: rows 2 and 3 continue rows 0 and 1 in memory.
    func rowAddress(_ row: Int) -> UInt8 {
        let base: [UInt8] = [0x00, 0x40, UInt8(columns), 0x40 + UInt8(columns)]
        return base[row]
    }

    /// Rewrites one row: set DDRAM address, then every column (padded with spaces, so what was
    /// there before is overwritten), in one write.
    public func row(_ row: Int, _ text: String) -> Step {
        var bytes = Self.byte(0x80 | rowAddress(row), data: false)
        for code in LCDText.characterCodes(text, width: columns) {
            bytes += Self.byte(code, data: true)
        }
        return .write(bytes)
    }
}
