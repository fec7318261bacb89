import Foundation
import Testing
import VendConfig
import VenddTestSupport

/// The display section as read: defaults, the sample machine, an LCD.
@Suite struct DisplayConfigTests {
    static func sample() throws -> String {
        try String(contentsOf: repositoryRoot.appendingPathComponent("config/vendd.yaml"), encoding: .utf8)
    }

    @Test func theSampleMachineShowsKoreanOnLoopbackWithAPictureForEveryProduct() throws {
        let path = repositoryRoot.appendingPathComponent("config/vendd.yaml").path
        let config = try ConfigLoader.load(file: path)
        #expect(config.display == DisplaySettings(language: .ko, kiosk: .init(address: "127.0.0.1", port: 8080), lcd: nil))
        #expect(config.control.customerGroup == "vendcustomer")
        for product in config.products {
            let picture = try #require(config.productFaces[product.id.rawValue]?.picture)
            #expect(FileManager.default.isReadableFile(atPath: picture), "\(picture)")
        }
        #expect(config.productFaces["hot-latte"]?.shortName == "Hot Cafe Latte")
    }

    @Test func withoutTheSectionTheKioskIsOnLoopbackInEnglish() throws {
        let text = try Self.sample().components(separatedBy: "\n# What vendd-display shows")[0]
        let config = try ConfigLoader.parse(text, file: "/etc/vendd/vendd.yaml")
        #expect(config.display == DisplaySettings(language: .en, kiosk: .init(address: "127.0.0.1", port: 8080), lcd: nil))
        // Relative pictures are relative to the file's directory.
        #expect(config.productFaces["cola"]?.picture == "/etc/vendd/pictures/cola.svg")
    }

    @Test func anLCDOnlyMachine() throws {
        let text =
            try Self.sample().components(separatedBy: "\n# What vendd-display shows")[0]
            + "\ndisplay:\n  kiosk: off\n  lcd:\n    bus: /dev/i2c-1\n    address: 0x3F\n    size: 20x4\n"
        let config = try ConfigLoader.parse(text, file: "vendd.yaml")
        #expect(config.display == DisplaySettings(language: .en, kiosk: nil, lcd: .init(bus: "/dev/i2c-1", address: 0x3F, size: .size20x4)))
        // What check-config --print writes reads back the same.
        #expect(try ConfigLoader.parse(config.resolvedYAML, file: "vendd.yaml").display == config.display)
    }
}
