import Foundation
import Testing
import VendHardware
import VenddTestSupport

@testable import VendGPIO

/// What the libgpiod driver can show without a GPIO chip: how it reports a missing or unusable
/// chip, and which libgpiod it was built against. Lines, edges and relays are tested on a real
/// kernel by scripts/hil/run.sh.
@Suite struct LibgpiodChipTests {
    @Test func aMissingChipListsTheChipsThatExist() throws {
        let devices = try TemporaryDirectory()
        defer { devices.remove() }
        #expect(throws: GPIOError.chipNotFound("gpiochip0", available: [])) {
            try LibgpiodChip("gpiochip0", devices: devices.url.path)
        }
        let message = GPIOError.chipNotFound("gpiochip0", available: []).description
        #expect(message == "GPIO chip 'gpiochip0' (gpio.chip) not found; no GPIO chips exist (is the gpio driver loaded?)")
    }

    @Test func aChipNamedByALabelThatNoChipHasIsNotFound() throws {
        let devices = try TemporaryDirectory()
        defer { devices.remove() }
        #expect(throws: GPIOError.chipNotFound("pinctrl-bcm2711", available: [])) {
            try LibgpiodChip("pinctrl-bcm2711", devices: devices.url.path)
        }
    }

    @Test func aFileThatIsNoGPIOChipIsRefusedWithTheReason() throws {
        let devices = try TemporaryDirectory()
        defer { devices.remove() }
        let impostor = devices.url.appendingPathComponent("gpiochip0").path
        #expect(FileManager.default.createFile(atPath: impostor, contents: Data("not a chip".utf8)))
        #expect {
            try LibgpiodChip("gpiochip0", devices: devices.url.path)
        } throws: { error in
            guard case .ioFailure(let message, nil) = error as? GPIOError else { return false }
            return message.hasPrefix("cannot open GPIO chip \(impostor): ")
        }
    }

    /// The levels are those the shim wrote, not the zeros the buffer held before the call.
    @Test func currentLevelsAreReadAfterTheShimFilledThem() {
        let levels = LibgpiodInputGroup.levels(count: 3) { values in
            values[0] = 1
            values[2] = 1
            return 0
        }
        #expect(levels == [true, false, true])
        #expect(LibgpiodInputGroup.levels(count: 0) { _ in 0 } == [])
        #expect(LibgpiodInputGroup.levels(count: 2) { _ in -1 } == nil)
    }

    /// CI builds twice, against v1 and v2, and says which one it expects; the shim must agree.
    @Test func theShimUsesTheLibgpiodItWasBuiltAgainst() throws {
        let description = LibgpiodChip.libraryDescription
        #expect(description.hasPrefix("libgpiod "))
        if let expected = ProcessInfo.processInfo.environment["VENDD_EXPECT_LIBGPIOD_API"] {
            #expect(description.hasSuffix("(API \(expected))"), "built against \(description), CI expected \(expected)")
        }
    }
}
