import Foundation
import Testing
import VendConfig
import VenddTestSupport
import VendingCore

/// Every configuration the repository ships must load: they are what technicians copy.
@Suite struct ShippedConfigTests {
    static let shipped = [
        "config/vendd.yaml", "config/examples/minimal.yaml", "config/examples/cctalk-euro.yaml",
        "config/examples/change-won.yaml", "config/examples/cctalk-coins.yaml", "config/examples/chilled-food.yaml",
        "config/examples/spiral-matrix.yaml",
    ]

    @Test(arguments: shipped)
    func loads(_ path: String) throws {
        let config = try ConfigLoader.load(file: repositoryRoot.appendingPathComponent(path).path)
        #expect(!config.slots.isEmpty)
        #expect(config.machineSetup.slots.count == config.slots.count)
    }

    @Test func theCcTalkExampleIsTheSampleWithACoinValidatorAndNoChange() throws {
        let config = try ConfigLoader.load(file: repositoryRoot.appendingPathComponent("config/examples/cctalk-coins.yaml").path)
        let sample = try ConfigLoader.load(file: repositoryRoot.appendingPathComponent("config/vendd.yaml").path)
        #expect(config.slots.map(\.setup) == sample.slots.map(\.setup))
        #expect(config.coinAcceptor?.protocol == .cctalk)
        #expect(config.coinAcceptor?.channels.map(\.enabled) == [false, true, true, true])
        #expect(config.machine.payout == PayoutPolicy.none)
        #expect(config.mdb == nil)
    }

    @Test func theSampleIsATenSlotDrinksMachineInWon() throws {
        let config = try ConfigLoader.load(file: repositoryRoot.appendingPathComponent("config/vendd.yaml").path)
        #expect(config.slots.count == 10)
        #expect(config.machine.currency == Currency(code: "KRW", minorDigits: 0))
        #expect(config.machine.moneyFormat.string(for: config.slots[0].setup.price) == "1,200원")
        #expect(config.products.filter(\.isHot).map(\.id) == ["hot-americano", "hot-latte"])
        // Coins, notes and cards on MDB, and change from the changer's tubes.
        #expect(config.coinAcceptor == nil)
        #expect(config.machine.payout == .change)
        #expect(config.mdb?.changer?.coins.map(\.enabled) == [false, true, true, true])
        #expect(config.mdb?.billValidator?.bills.filter(\.enabled).map(\.value.minorUnits) == [1000, 5000, 10000])
        #expect(config.mdb?.cashless.map(\.reader) == [.first])
        // One drop sensor across the chute, shared by every slot.
        #expect(Set(config.slots.compactMap { $0.dropSensor?.input.line }) == [.offset(18)])
        // check-config names every MDB device, the card reader too, and the currency they must report.
        #expect(
            config.summary.contains(
                "\nmdb       changer (4 coin types), bill validator (4 bill types, escrow on), cashless #1 (selection first when it offers it, session time-out 60 s) on /dev/serial/by-id/usb-Qibixx_MDB-USB-if00, poll 150 ms, devices must report ISO 4217 410\n"
            ), "\(config.summary)")
    }

    /// `check-config --print` output is itself a valid file describing the same machine.
    @Test(arguments: shipped)
    func theResolvedFileReadsBackToTheSameMachine(_ path: String) throws {
        let config = try ConfigLoader.load(file: repositoryRoot.appendingPathComponent(path).path)
        let again = try ConfigLoader.parse(config.resolvedYAML, file: "resolved.yaml")
        #expect(again.machineSetup == config.machineSetup)
        #expect(again.resolvedYAML == config.resolvedYAML)
        #expect(again.summary.replacingOccurrences(of: "resolved.yaml", with: config.file) == config.summary)
    }

    @Test func defaultsAreFilledIn() throws {
        let config = try ConfigLoader.load(file: repositoryRoot.appendingPathComponent("config/examples/minimal.yaml").path)
        #expect(config.machine.vendTimeout == .seconds(30))
        #expect(config.machine.unknownOutcomePolicy == .refundCredit)
        #expect(config.machine.payout == .none)
        #expect(config.gpio.debounce == .milliseconds(20))
        #expect(config.slots[0].relay?.pulse == .milliseconds(500))
        #expect(config.slots[0].relay?.maximumOn == .milliseconds(3_000))
        #expect(config.stateDirectory == "/var/lib/vendd")
        #expect(config.control.socketPath == "/run/vendd/control.sock")
        #expect(config.control.group == "vendtech")
        #expect(config.slots[0].setup.price == Money(minorUnits: 125, currency: Currency(code: "USD", minorDigits: 2)))
    }

    @Test func aMissingFileSaysSo() throws {
        let error = try #require(throws: ConfigError.self) { try ConfigLoader.load(file: "/nonexistent/vendd.yaml") }
        #expect(
            error.description == """
                /nonexistent/vendd.yaml:1:1: the file does not exist (pass the path of the configuration file, e.g. /etc/vendd/vendd.yaml)
                /nonexistent/vendd.yaml: 1 error; nothing was applied
                """)
    }

    @Test func anEmptyFileSaysWhereToStart() throws {
        let error = try #require(throws: ConfigError.self) { try ConfigLoader.parse("\n", file: "empty.yaml") }
        #expect(error.diagnostics.map(\.description) == ["empty.yaml:1:1: the file is empty; start from config/vendd.yaml"])
    }
}
