import ArgumentParser
import VendControl

/// What a customer does at the machine, sent as the customer group may (the display sends the
/// same requests when the touch screen is tapped). Unlike `sim press`, these work on real hardware.
struct Select: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Select a slot, as its button would: vends it if the credit covers the price.")
    @OptionGroup var connection: Connection
    @Argument(help: "The slot, e.g. A1.") var slot: String
    func run() throws { try send(.select(slot: slot), connection) }
}

struct CoinReturn: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coin-return", abstract: "Press coin return, as the button would.")
    @OptionGroup var connection: Connection
    func run() throws { try send(.coinReturn, connection) }
}
