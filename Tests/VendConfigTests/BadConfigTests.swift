import Foundation
import Testing
import VendConfig

/// Each bad file gets exactly these messages, with line and column: the table is the spec of what a
/// technician reads. Every case edits a valid base file in one place (or three, in the last case).
@Suite struct BadConfigTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let edits: [(String, String)]
        let expected: [String]
        var testDescription: String { name }
    }

    static let base = """
        machine:
          name: Test machine
          currency:
            code: KRW
            minor_digits: 0
            format: "{amount}원"
          maximum_credit: 10000
          vend_timeout_ms: 30000
        gpio:
          chip: gpiochip0
        products:
          - id: milk
            name: Milk
            category: [beverage, milk]
            shelf_life_days: 10
          - id: coffee
            name: Coffee
            category: [beverage, coffee]
            hot: true
        slots:
          - id: A1
            product: milk
            price: 1200
            capacity: 8
            button: { line: 2, active_low: true, bias: pull-up }
            relay: { line: 6, pulse_ms: 500, max_on_ms: 2000 }
            drop_sensor: { line: 18, window_ms: 2000 }
          - id: A2
            product: coffee
            price: 900
            capacity: 6
            button: { line: 3 }
            relay: { line: 13 }
        buttons:
          - action: coin-return
            line: 23
        coin_acceptor:
          port: /dev/ttyUSB0
          protocol: cctalk
          channels:
            - { channel: 1, value: 100 }
            - { channel: 2, value: 500 }
        """ + "\n"

    static let cases: [Case] = [
        Case(
            name: "unknown top-level key", edits: [("    - { channel: 2, value: 500 }\n", "    - { channel: 2, value: 500 }\ncolour: red\n")],
            expected: [
                "test.yaml:43:1: unknown key 'colour' (allowed here: machine, gpio, pricing, products, zones, motors, slots, age_verification, buttons, coin_acceptor, payout_devices, mdb, state, control, display, mqtt, dex)"
            ]),
        Case(
            name: "misspelt section name", edits: [("gpio:\n", "gpoi:\n")],
            expected: [
                "test.yaml:9:1: unknown key 'gpoi'; did you mean 'gpio'? (allowed here: machine, gpio, pricing, products, zones, motors, slots, age_verification, buttons, coin_acceptor, payout_devices, mdb, state, control, display, mqtt, dex)"
            ]),
        Case(
            name: "missing maximum credit", edits: [("  maximum_credit: 10000\n", "")],
            expected: [
                "test.yaml:2:3: machine: missing required key 'maximum_credit'"
            ]),
        Case(
            name: "price is not a number", edits: [("price: 1200", "price: twelve")],
            expected: [
                "test.yaml:23:12: slots[A1].price: 'twelve' is not a decimal amount (digits, optionally one '.' and fraction digits) (write an amount in KRW like 1200)"
            ]),
        Case(
            name: "grouping comma in a price", edits: [("price: 1200", "price: 1,200")],
            expected: [
                "test.yaml:23:12: slots[A1].price: '1,200' is not a decimal amount: write it without the comma, 1200"
            ]),
        Case(
            name: "fraction in a currency without minor unit", edits: [("price: 1200", "price: 1200.50")],
            expected: [
                "test.yaml:23:12: slots[A1].price: '1200.50' has fraction digits, but the currency has no minor unit (write an amount in KRW like 1200)"
            ]),
        Case(
            name: "negative price", edits: [("price: 900", "price: -900")],
            expected: [
                "test.yaml:30:12: slots[A2].price: '-900' is not a decimal amount (digits, optionally one '.' and fraction digits) (write an amount in KRW like 1200)"
            ]),
        Case(
            name: "zero price", edits: [("price: 900", "price: 0")],
            expected: [
                "test.yaml:30:12: slots[A2].price: must be more than 0"
            ]),
        Case(
            name: "expired without a shelf life", edits: [("    hot: true\n", "    hot: true\n    expired: sell\n")],
            expected: [
                "test.yaml:20:14: products[coffee].expired: expired says what happens to items past their shelf life: give the product shelf_life_days too, or remove expired"
            ]),
        Case(
            name: "expired neither refuse nor sell", edits: [("shelf_life_days: 10\n", "shelf_life_days: 10\n    expired: keep\n")],
            expected: [
                "test.yaml:16:14: products[milk].expired: 'keep' is not one of 'refuse' or 'sell'"
            ]),
        Case(
            name: "price above maximum credit", edits: [("price: 900", "price: 20000")],
            expected: [
                "test.yaml:30:12: slots[A2].price: 20,000원 is above machine.maximum_credit (10,000원), so it could never be paid"
            ]),
        Case(
            name: "capacity zero", edits: [("capacity: 8", "capacity: 0")],
            expected: [
                "test.yaml:24:15: slots[A1].capacity: 0 is out of range (allowed: 1 to 999)"
            ]),
        Case(
            name: "capacity not a number", edits: [("capacity: 8", "capacity: many")],
            expected: [
                "test.yaml:24:15: slots[A1].capacity: 'many' is not a whole number (expected 1 to 999)"
            ]),
        Case(
            name: "capacity with leading zero", edits: [("capacity: 8", "capacity: 08")],
            expected: [
                "test.yaml:24:15: slots[A1].capacity: '08' has a leading zero; write 8"
            ]),
        Case(
            name: "misspelt product reference", edits: [("product: coffee", "product: cofee")],
            expected: [
                "test.yaml:29:14: slots[A2].product: unknown product 'cofee'; did you mean 'coffee'? (products: milk, coffee)"
            ]),
        Case(
            name: "unknown product reference", edits: [("product: coffee", "product: tea")],
            expected: [
                "test.yaml:29:14: slots[A2].product: unknown product 'tea' (products: milk, coffee)"
            ]),
        Case(
            name: "duplicate slot id", edits: [("  - id: A2", "  - id: A1")],
            expected: [
                "test.yaml:28:9: slots[A1].id: slot 'A1' is already defined at line 21; slot ids must be unique"
            ]),
        Case(
            name: "slot id with a space", edits: [("  - id: A2", "  - id: A 2")],
            expected: [
                "test.yaml:28:9: slots[A 2].id: 'A 2' is not a valid slot id (1 to 32 letters, digits, '-' or '_')"
            ]),
        Case(
            name: "duplicate product id", edits: [("  - id: coffee", "  - id: milk")],
            expected: [
                "test.yaml:16:9: products[milk].id: product 'milk' is already defined at line 12; product ids must be unique",
                "test.yaml:29:14: slots[A2].product: unknown product 'coffee' (products: milk)",
            ]),
        Case(
            name: "line used as button and relay", edits: [("relay: { line: 13 }", "relay: { line: 2 }")],
            expected: [
                "test.yaml:33:20: slots[A2].relay.line: line 2 is already the button of slot A1 (slots[A1].button.line at line 25); each GPIO line can serve one purpose"
            ]),
        Case(
            name: "line used by a slot and a button", edits: [("    line: 23", "    line: 3")],
            expected: [
                "test.yaml:36:11: buttons[coin-return].line: line 3 is already the button of slot A2 (slots[A2].button.line at line 32); each GPIO line can serve one purpose"
            ]),
        Case(
            name: "shared drop sensor with different settings",
            edits: [("    relay: { line: 13 }\n", "    relay: { line: 13 }\n    drop_sensor: { line: 18, active_low: true }\n")],
            expected: [
                "test.yaml:34:26: slots[A2].drop_sensor.line: the shared drop sensor on line 18 needs the same active_low, bias and debounce_ms as at slots[A1].drop_sensor.line (line 27)"
            ]),
        Case(
            name: "line offset out of range", edits: [("relay: { line: 13 }", "relay: { line: 600 }")],
            expected: [
                "test.yaml:33:20: slots[A2].relay.line: 600 is out of range (allowed: 0 to 511)"
            ]),
        Case(
            name: "line name with a space", edits: [("relay: { line: 13 }", "relay: { line: GPIO 13 }")],
            expected: [
                "test.yaml:33:20: slots[A2].relay.line: 'GPIO 13' is not a line: give its offset (17) or its name (GPIO17, see `gpioinfo`)"
            ]),
        Case(
            name: "misspelt bias", edits: [("bias: pull-up", "bias: pull-upp")],
            expected: [
                "test.yaml:25:48: slots[A1].button.bias: 'pull-upp' is not one of 'as-is', 'disabled', 'pull-up' or 'pull-down'; did you mean 'pull-up'?"
            ]),
        Case(
            name: "yes instead of true", edits: [("active_low: true", "active_low: yes")],
            expected: [
                "test.yaml:25:36: slots[A1].button.active_low: 'yes' is not a yes/no value (write true or false)"
            ]),
        Case(
            name: "relay pulse too short", edits: [("pulse_ms: 500", "pulse_ms: 5")],
            expected: [
                "test.yaml:26:33: slots[A1].relay.pulse_ms: 5 is out of range (allowed: 10 to 10000)"
            ]),
        Case(
            name: "relay limit shorter than its pulse", edits: [("max_on_ms: 2000", "max_on_ms: 400")],
            expected: [
                "test.yaml:26:49: slots[A1].relay.max_on_ms: 400 ms is shorter than the pulse (500 ms); the limit must allow one full pulse"
            ]),
        Case(
            name: "vend timeout shorter than the relay limits", edits: [("vend_timeout_ms: 30000", "vend_timeout_ms: 1500")],
            expected: [
                "test.yaml:8:20: machine.vend_timeout_ms: 1500 ms is not longer than the relay max_on_ms, motors.turn_ms or drop window_ms of slots A1, A2 (up to 3000 ms); raise it or shorten those"
            ]),
        Case(
            name: "vend timeout out of range", edits: [("vend_timeout_ms: 30000", "vend_timeout_ms: 500")],
            expected: [
                "test.yaml:8:20: machine.vend_timeout_ms: 500 is out of range (allowed: 1000 to 600000)"
            ]),
        Case(
            name: "misspelt unknown-outcome policy", edits: [("  vend_timeout_ms: 30000\n", "  vend_timeout_ms: 30000\n  unknown_outcome: refund\n")],
            expected: [
                "test.yaml:9:20: machine.unknown_outcome: 'refund' is not one of 'assume-dispensed' or 'refund-credit'"
            ]),
        Case(
            name: "pay-out without payout", edits: [("  vend_timeout_ms: 30000\n", "  vend_timeout_ms: 30000\n  failed_vend: pay-out\n")],
            expected: [
                "test.yaml:9:16: machine.failed_vend: 'pay-out' needs a way to pay out; set machine.payout to 'manual' or use 'keep-credit'"
            ]),
        Case(
            name: "change without payout devices", edits: [("  vend_timeout_ms: 30000\n", "  vend_timeout_ms: 30000\n  payout: change\n")],
            expected: [
                "test.yaml:9:11: machine.payout: payout 'change' needs at least one device under payout_devices (a hopper per coin value) or an mdb.changer"
            ]),
        Case(
            name: "payout devices without change",
            edits: [
                ("    - { channel: 2, value: 500 }\n", "    - { channel: 2, value: 500 }\npayout_devices:\n  - { type: cctalk-hopper, coin: 500 }\n")
            ],
            expected: [
                "test.yaml:44:3: payout_devices: these devices pay only with machine.payout: change (it is 'none'); set it, or remove them"
            ]),
        Case(
            name: "hopper on the coin acceptor's address",
            edits: [
                ("  vend_timeout_ms: 30000\n", "  vend_timeout_ms: 30000\n  payout: change\n"),
                (
                    "    - { channel: 2, value: 500 }\n",
                    "    - { channel: 2, value: 500 }\npayout_devices:\n  - { type: cctalk-hopper, coin: 500, address: 3 }\n  - { type: cctalk-hopper, coin: 100, address: 2 }\n"
                ),
            ],
            expected: [
                "test.yaml:46:5: payout_devices[#2].address: address 2 on /dev/ttyUSB0 is already coin_acceptor; give each device on a ccTalk bus its own address"
            ]),
        Case(
            name: "hopper naming a bytecode acceptor's port",
            edits: [
                ("  vend_timeout_ms: 30000\n", "  vend_timeout_ms: 30000\n  payout: change\n"),
                ("protocol: cctalk", "protocol: bytecode"),
                (
                    "    - { channel: 2, value: 500 }\n",
                    "    - { channel: 2, value: 500 }\npayout_devices:\n  - { type: cctalk-hopper, coin: 500, port: /dev/ttyUSB0 }\n"
                ),
            ],
            expected: [
                "test.yaml:45:5: payout_devices[#1]: the coin acceptor speaks 'bytecode', not ccTalk: give the hopper a 'port' of its own"
            ]),
        Case(
            name: "misspelt hopper type",
            edits: [
                ("  vend_timeout_ms: 30000\n", "  vend_timeout_ms: 30000\n  payout: change\n"),
                ("    - { channel: 2, value: 500 }\n", "    - { channel: 2, value: 500 }\npayout_devices:\n  - { type: cctalk-hoper, coin: 500 }\n"),
            ],
            expected: [
                "test.yaml:45:13: payout_devices[#1].type: 'cctalk-hoper' is not one of 'cctalk-hopper'; did you mean 'cctalk-hopper'?"
            ]),
        Case(
            name: "currency code that is not ISO 4217", edits: [("code: KRW", "code: WON")],
            expected: [
                "test.yaml:4:11: machine.currency.code: 'WON' is not an ISO 4217 currency code (KRW for the won, EUR, USD, JPY…; DEX audits and telemetry carry it)"
            ]),
        Case(
            name: "lowercase currency code", edits: [("code: KRW", "code: krw")],
            expected: [
                "test.yaml:4:11: machine.currency.code: 'krw' is not a currency code (three capital letters, such as KRW, EUR or USD)"
            ]),
        Case(
            name: "too many minor digits", edits: [("minor_digits: 0", "minor_digits: 7")],
            expected: [
                "test.yaml:5:19: machine.currency.minor_digits: 7 is out of range (allowed: 0 to 4)"
            ]),
        Case(
            name: "format without placeholder", edits: [("format: \"{amount}원\"", "format: \"원\"")],
            expected: [
                "test.yaml:6:13: machine.currency.format: '원' must contain {amount} exactly once, e.g. \"{amount}원\" or \"€{amount}\""
            ]),
        Case(
            name: "tab indentation", edits: [("  chip: gpiochip0", "\tchip: gpiochip0")],
            expected: [
                "test.yaml:10:1: YAML syntax: found character that cannot start any token (check the indentation and the ':' after each key; use spaces, not tabs)"
            ]),
        Case(
            name: "duplicate key", edits: [("    capacity: 6\n", "    capacity: 6\n    capacity: 7\n")],
            expected: [
                "test.yaml:32:5: 'capacity' appears twice in the same mapping (first at line 31); keep one"
            ]),
        Case(
            name: "slots as a mapping", edits: [("slots:\n", "slots:\n  first:\n")],
            expected: [
                "test.yaml:21:3: slots: expected a list ('- ' items), found a mapping"
            ]),
        Case(
            name: "product without name", edits: [("    name: Coffee\n", "")],
            expected: [
                "test.yaml:16:5: products[coffee]: missing required key 'name'"
            ]),
        Case(
            name: "empty category", edits: [("category: [beverage, coffee]", "category: []")],
            expected: [
                "test.yaml:18:15: products[coffee].category: give at least one category, e.g. [beverage, coffee]"
            ]),
        Case(
            name: "shelf life zero", edits: [("shelf_life_days: 10", "shelf_life_days: 0")],
            expected: [
                "test.yaml:15:22: products[milk].shelf_life_days: 0 is out of range (allowed: 1 to 3650)"
            ]),
        Case(
            name: "hot is not a boolean", edits: [("hot: true", "hot: maybe")],
            expected: [
                "test.yaml:19:10: products[coffee].hot: 'maybe' is not a yes/no value (write true or false)"
            ]),
        Case(
            name: "misspelt coin protocol", edits: [("protocol: cctalk", "protocol: cctalc")],
            expected: [
                "test.yaml:39:13: coin_acceptor.protocol: 'cctalc' is not one of 'cctalk' or 'bytecode'; did you mean 'cctalk'?"
            ]),
        Case(
            name: "ccTalk channel out of range", edits: [("channel: 2,", "channel: 17,")],
            expected: [
                "test.yaml:42:18: coin_acceptor.channels[17].channel: 17 is out of range (allowed: 1 to 16)"
            ]),
        Case(
            name: "channel mapped twice", edits: [("channel: 2,", "channel: 1,")],
            expected: [
                "test.yaml:42:18: coin_acceptor.channels[1].channel: channel 1 is already mapped at line 41; map each channel once"
            ]),
        Case(
            name: "channel without value", edits: [("{ channel: 2, value: 500 }", "{ channel: 2 }")],
            expected: [
                "test.yaml:42:7: coin_acceptor.channels[2]: missing required key 'value'"
            ]),
        Case(
            name: "relative port", edits: [("port: /dev/ttyUSB0", "port: ttyUSB0")],
            expected: [
                "test.yaml:38:9: coin_acceptor.port: 'ttyUSB0' is not a port: give a device path (/dev/ttyUSB0, /dev/serial/by-id/…) or unix:/path/to/socket"
            ]),
        Case(
            name: "non-standard baud rate", edits: [("  protocol: cctalk\n", "  protocol: cctalk\n  baud: 9000\n")],
            expected: [
                "test.yaml:40:9: coin_acceptor.baud: 9000 is not a standard baud rate (1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200; ccTalk uses 9600)"
            ]),
        Case(
            name: "ccTalk settings for the one-byte protocol", edits: [("  protocol: cctalk\n", "  protocol: bytecode\n  cctalk: { address: 2 }\n")],
            expected: [
                "test.yaml:40:11: coin_acceptor.cctalk: the 'cctalk' settings apply only to protocol 'cctalk'; remove them or change the protocol"
            ]),
        Case(
            name: "ccTalk address equal to the host's", edits: [("  protocol: cctalk\n", "  protocol: cctalk\n  cctalk: { address: 1 }\n")],
            expected: [
                "test.yaml:40:22: coin_acceptor.cctalk.address: the acceptor's address (1) must differ from the host's (host_address)"
            ]),
        Case(
            name: "misspelt button action", edits: [("action: coin-return", "action: coin-retrun")],
            expected: [
                "test.yaml:35:13: buttons[coin-retrun].action: 'coin-retrun' is not one of 'coin-return', 'service-mode' or 'door'; did you mean 'coin-return'?"
            ]),
        Case(
            name: "button action defined twice", edits: [("    line: 23\n", "    line: 23\n  - action: coin-return\n    line: 24\n")],
            expected: [
                "test.yaml:37:13: buttons[coin-return].action: the coin-return button is already defined at line 35; define each action once"
            ]),
        Case(
            name: "invalid control group",
            edits: [("    - { channel: 2, value: 500 }\n", "    - { channel: 2, value: 500 }\ncontrol:\n  group: tech team\n")],
            expected: [
                "test.yaml:44:10: control.group: 'tech team' is not a group name (letters, digits, '-' and '_')"
            ]),
        Case(
            name: "relative state directory",
            edits: [("    - { channel: 2, value: 500 }\n", "    - { channel: 2, value: 500 }\nstate:\n  directory: var/lib/vendd\n")],
            expected: [
                "test.yaml:44:14: state.directory: 'var/lib/vendd' must be an absolute path (starting with /)"
            ]),
        Case(
            name: "unknown key in a relay", edits: [("pulse_ms: 500", "pulse: 500")],
            expected: [
                "test.yaml:26:23: slots[A1].relay: unknown key 'pulse'; did you mean 'pulse_ms'? (allowed here: line, chip, active_low, pulse_ms, max_on_ms)"
            ]),
        Case(
            name: "empty chip name", edits: [("chip: gpiochip0", "chip: \"\"")],
            expected: [
                "test.yaml:10:9: gpio.chip: name the chip: gpiochip0, /dev/gpiochip0 or its label (see `gpiodetect`)"
            ]),
        Case(
            name: "debounce out of range", edits: [("  chip: gpiochip0\n", "  chip: gpiochip0\n  debounce_ms: 5000\n")],
            expected: [
                "test.yaml:11:16: gpio.debounce_ms: 5000 is out of range (allowed: 0 to 1000)"
            ]),
        Case(
            name: "key without a value", edits: [("price: 900", "price:")],
            expected: [
                "test.yaml:30:5: slots[A2]: 'price' has no value"
            ]),
        Case(
            name: "mapping where text belongs", edits: [("name: Coffee", "name: { en: Coffee }")],
            expected: [
                "test.yaml:17:11: products[coffee].name: expected a value, found a mapping"
            ]),
        Case(
            name: "empty slot list", edits: [("slots:\n", "slots: []\nx_slots:\n")],
            expected: [
                "test.yaml:20:8: slots: a machine needs at least one slot",
                "test.yaml:21:1: unknown key 'x_slots'; did you mean 'slots'? (allowed here: machine, gpio, pricing, products, zones, motors, slots, age_verification, buttons, coin_acceptor, payout_devices, mdb, state, control, display, mqtt, dex)",
            ]),
        Case(
            name: "line that is neither offset nor name", edits: [("relay: { line: 13 }", "relay: { line: -1 }")],
            expected: [
                "test.yaml:33:20: slots[A2].relay.line: '-1' is not a line: give its offset (17) or its name (GPIO17, see `gpioinfo`)"
            ]),
        Case(
            name: "invalid product id used by a slot", edits: [("  - id: coffee", "  - id: cof fee"), ("product: coffee", "product: cof fee")],
            expected: [
                "test.yaml:16:9: products[cof fee].id: 'cof fee' is not a valid product id (1 to 32 letters, digits, '-' or '_')"
            ]),
        Case(
            name: "empty machine name", edits: [("name: Test machine", "name: \"\"")],
            expected: [
                "test.yaml:2:9: machine.name: give the machine a name, or leave the key out"
            ]),
        Case(
            name: "display: unknown key",
            edits: [("    - { channel: 2, value: 500 }\n", "    - { channel: 2, value: 500 }\ndisplay:\n  language: ko\n  colour: red\n")],
            expected: [
                "test.yaml:45:3: display: unknown key 'colour' (allowed here: language, kiosk, lcd)"
            ]),
        Case(
            name: "display: unknown language",
            edits: [("    - { channel: 2, value: 500 }\n", "    - { channel: 2, value: 500 }\ndisplay:\n  language: jp\n")],
            expected: [
                "test.yaml:44:13: display.language: 'jp' is not one of 'ko' or 'en'"
            ]),
        Case(
            name: "display: kiosk port out of range",
            edits: [("    - { channel: 2, value: 500 }\n", "    - { channel: 2, value: 500 }\ndisplay:\n  kiosk: { port: 70000 }\n")],
            expected: [
                "test.yaml:44:18: display.kiosk.port: 70000 is out of range (allowed: 1 to 65535)"
            ]),
        Case(
            name: "display: kiosk address not an IP address",
            edits: [("    - { channel: 2, value: 500 }\n", "    - { channel: 2, value: 500 }\ndisplay:\n  kiosk: { address: kiosk.local }\n")],
            expected: [
                "test.yaml:44:21: display.kiosk.address: 'kiosk.local' is not an IP address (127.0.0.1 for this machine only, 0.0.0.0 for every interface, or ::1)"
            ]),
        Case(
            name: "display: kiosk off and no LCD",
            edits: [("    - { channel: 2, value: 500 }\n", "    - { channel: 2, value: 500 }\ndisplay:\n  kiosk: off\n")],
            expected: [
                "test.yaml:44:10: display.kiosk: the display has nothing to show on: keep the kiosk or add an lcd"
            ]),
        Case(
            name: "display: LCD on a serial port",
            edits: [("    - { channel: 2, value: 500 }\n", "    - { channel: 2, value: 500 }\ndisplay:\n  lcd: { bus: /dev/ttyUSB0 }\n")],
            expected: [
                "test.yaml:44:15: display.lcd.bus: '/dev/ttyUSB0' is not an I2C bus device; write /dev/i2c-N (`ls /dev/i2c-*`; 1 on a Raspberry Pi)"
            ]),
        Case(
            name: "display: LCD address out of range",
            edits: [
                ("    - { channel: 2, value: 500 }\n", "    - { channel: 2, value: 500 }\ndisplay:\n  lcd: { bus: /dev/i2c-1, address: 0x80 }\n")
            ],
            expected: [
                "test.yaml:44:36: display.lcd.address: '0x80' is not a 7-bit I2C address; write it in hex, 0x03 to 0x77 (backpacks answer at 0x27, or 0x3F with a PCF8574A)"
            ]),
        Case(
            name: "display: LCD size",
            edits: [("    - { channel: 2, value: 500 }\n", "    - { channel: 2, value: 500 }\ndisplay:\n  lcd: { bus: /dev/i2c-1, size: 16x4 }\n")],
            expected: [
                "test.yaml:44:33: display.lcd.size: '16x4' is not one of '16x2' or '20x4'; did you mean '16x2'?"
            ]),
        Case(
            name: "display: LCD without a bus",
            edits: [("    - { channel: 2, value: 500 }\n", "    - { channel: 2, value: 500 }\ndisplay:\n  lcd: { address: 0x3F }\n")],
            expected: [
                "test.yaml:44:8: display.lcd: missing required key 'bus'"
            ]),
        Case(
            name: "mqtt: plaintext without allow_plaintext",
            edits: [
                (
                    "    - { channel: 2, value: 500 }\n",
                    "    - { channel: 2, value: 500 }\nmqtt:\n  broker: mqtt://fleet.example.com\n  machine_id: m1\n"
                )
            ],
            expected: [
                "test.yaml:44:11: mqtt.broker: 'mqtt://fleet.example.com' sends credentials and sales in the clear; use mqtts://, or add allow_plaintext: true for a broker on a trusted network"
            ]),
        Case(
            name: "mqtt: not a broker URL",
            edits: [
                (
                    "    - { channel: 2, value: 500 }\n",
                    "    - { channel: 2, value: 500 }\nmqtt:\n  broker: https://fleet.example.com\n  machine_id: m1\n  ca_file: /etc/vendd/ca.pem\n"
                )
            ],
            expected: [
                "test.yaml:44:11: mqtt.broker: 'https://fleet.example.com' is not a broker URL; write mqtts://host:8883 (or mqtt://host:1883 with allow_plaintext: true)"
            ]),
        Case(
            name: "mqtt: TLS without a CA",
            edits: [
                (
                    "    - { channel: 2, value: 500 }\n",
                    "    - { channel: 2, value: 500 }\nmqtt:\n  broker: mqtts://fleet.example.com\n  machine_id: m1\n"
                )
            ],
            expected: [
                "test.yaml:44:11: mqtt.ca_file: mqtts needs the CA that signed the broker's certificate: add ca_file"
            ]),
        Case(
            name: "mqtt: machine id with a slash",
            edits: [
                (
                    "    - { channel: 2, value: 500 }\n",
                    "    - { channel: 2, value: 500 }\nmqtt:\n  broker: mqtts://fleet.example.com:8883\n  ca_file: /etc/vendd/ca.pem\n  machine_id: site/m1\n"
                )
            ],
            expected: [
                "test.yaml:46:15: mqtt.machine_id: 'site/m1' is not a machine id (letters, digits, '-', '_' and '.'; it is one topic level)"
            ]),
        Case(
            name: "mqtt: credentials readable by others",
            edits: [
                (
                    "    - { channel: 2, value: 500 }\n",
                    "    - { channel: 2, value: 500 }\nmqtt:\n  broker: mqtts://fleet.example.com\n  ca_file: /etc/vendd/ca.pem\n  machine_id: m1\n  credentials_file: /etc/passwd\n"
                )
            ],
            expected: [
                "test.yaml:47:21: mqtt.credentials_file: '/etc/passwd' is readable by others (mode 644): it holds the broker password; chmod 600 /etc/passwd and chown it to the user the service runs as (vendd, or vendstore)"
            ]),
        Case(
            name: "mqtt: credentials file missing",
            edits: [
                (
                    "    - { channel: 2, value: 500 }\n",
                    "    - { channel: 2, value: 500 }\nmqtt:\n  broker: mqtts://fleet.example.com\n  ca_file: /etc/vendd/ca.pem\n  machine_id: m1\n  credentials_file: /nonexistent/m1\n"
                )
            ],
            expected: [
                "test.yaml:47:21: mqtt.credentials_file: '/nonexistent/m1' cannot be read: No such file or directory"
            ]),
        Case(
            name: "mqtt: misspelt command",
            edits: [
                (
                    "    - { channel: 2, value: 500 }\n",
                    "    - { channel: 2, value: 500 }\nmqtt:\n  broker: mqtts://fleet.example.com\n  ca_file: /etc/vendd/ca.pem\n  machine_id: m1\n  commands: [report, prise]\n"
                )
            ],
            expected: [
                "test.yaml:47:22: mqtt.commands[#2]: 'prise' is not one of 'price', 'service', 'report' or 'dex'; did you mean 'price'?"
            ]),
        Case(
            name: "mqtt: outbox kept too long",
            edits: [
                (
                    "    - { channel: 2, value: 500 }\n",
                    "    - { channel: 2, value: 500 }\nmqtt:\n  broker: mqtts://fleet.example.com\n  ca_file: /etc/vendd/ca.pem\n  machine_id: m1\n  outbox_days: 400\n"
                )
            ],
            expected: [
                "test.yaml:47:16: mqtt.outbox_days: 400 is out of range (allowed: 1 to 366)"
            ]),
        Case(
            name: "mqtt: keep_until_stored not a yes/no",
            edits: [
                (
                    "    - { channel: 2, value: 500 }\n",
                    "    - { channel: 2, value: 500 }\nmqtt:\n  broker: mqtts://fleet.example.com\n  ca_file: /etc/vendd/ca.pem\n  machine_id: m1\n  keep_until_stored: store\n"
                )
            ],
            expected: [
                "test.yaml:47:22: mqtt.keep_until_stored: 'store' is not a yes/no value (write true or false)"
            ]),
        Case(
            name: "control: customer group same as technicians",
            edits: [("    - { channel: 2, value: 500 }\n", "    - { channel: 2, value: 500 }\ncontrol:\n  group: staff\n  customer_group: staff\n")],
            expected: [
                "test.yaml:45:19: control.customer_group: the customer group must differ from the technician group 'staff': its members may only select and return coins"
            ]),
        Case(
            name: "short name not ASCII", edits: [("    name: Coffee\n", "    name: Coffee\n    short_name: Café\n")],
            expected: [
                "test.yaml:18:17: products[coffee].short_name: 'Café' must be 1 to 40 printable ASCII characters (the LCD has no other letters)"
            ]),
        Case(
            name: "picture not an image", edits: [("    name: Coffee\n", "    name: Coffee\n    picture: coffee.txt\n")],
            expected: [
                "test.yaml:18:14: products[coffee].picture: 'coffee.txt' is not a picture the kiosk can show (a .svg, .png, .jpg or .webp file)"
            ]),
        Case(
            name: "three mistakes at once",
            edits: [("price: 1200", "prise: 1200"), ("product: coffee", "product: cofee"), ("relay: { line: 13 }", "relay: { line: 6 }")],
            expected: [
                "test.yaml:23:5: slots[A1]: unknown key 'prise'; did you mean 'price'? (allowed here: id, product, price, prices, capacity, button, drive, relay, drop_sensor, zone, perishable, restricted)",
                "test.yaml:29:14: slots[A2].product: unknown product 'cofee'; did you mean 'coffee'? (products: milk, coffee)",
                "test.yaml:33:20: slots[A2].relay.line: line 6 is already the relay of slot A1 (slots[A1].relay.line at line 26); each GPIO line can serve one purpose",
            ]),
    ]

    @Test func theBaseFileIsValid() throws {
        _ = try ConfigLoader.parse(Self.base, file: "test.yaml")
    }

    @Test(arguments: cases)
    func reportsExactlyTheseErrors(_ badCase: Case) throws {
        var text = Self.base
        for (original, replacement) in badCase.edits {
            try #require(text.components(separatedBy: original).count == 2, "edit target must occur once: \(original)")
            text = text.replacingOccurrences(of: original, with: replacement)
        }
        let error = try #require(throws: ConfigError.self) { try ConfigLoader.parse(text, file: "test.yaml") }
        #expect(error.diagnostics.map(\.description) == badCase.expected)
    }
}
