import Testing
import VendHardware
import VendSettings

/// A chip that is not there is reported where the file names it: a line's own `chip:`, or
/// `gpio.chip` for the lines that name none.
@Suite struct GPIOChipSetTests {
    static let defaultChipOrigin = ConfigOrigin(location: SourceLocation(file: "/etc/vendd/vendd.yaml", line: 12, column: 9), path: "gpio.chip")
    static let lineOrigin = ConfigOrigin(location: SourceLocation(file: "/etc/vendd/vendd.yaml", line: 40, column: 20), path: "slots[A1].button.line")
    static let present = ["gpiochip0 [pinctrl-bcm2711]"]

    let chips = GPIOChipSet(defaultChip: "gpiochip9", origin: defaultChipOrigin) { name throws(GPIOError) in
        throw .chipNotFound(name, available: present)
    }

    @Test func aMissingDefaultChipIsReportedAtGPIOChip() {
        #expect(throws: GPIOError.chipNotFound("gpiochip9", available: Self.present, origin: Self.defaultChipOrigin)) {
            try chips.chip(nil, for: Self.lineOrigin)
        }
        #expect(throws: GPIOError.chipNotFound("gpiochip9", available: Self.present, origin: Self.defaultChipOrigin)) {
            try chips.chip(nil)
        }
        let message = GPIOError.chipNotFound("gpiochip9", available: Self.present, origin: Self.defaultChipOrigin).description
        #expect(message.hasPrefix("\(Self.defaultChipOrigin): GPIO chip 'gpiochip9' not found; chips present: gpiochip0 [pinctrl-bcm2711]"))
    }

    @Test func aMissingChipALineNamesIsReportedAtThatLine() {
        #expect(throws: GPIOError.chipNotFound("mcp23017-20", available: Self.present, origin: Self.lineOrigin)) {
            try chips.chip("mcp23017-20", for: Self.lineOrigin)
        }
    }
}
