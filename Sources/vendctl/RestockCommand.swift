import ArgumentParser
import VendControl

struct Restock: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Load items into a slot (or all slots), filling to capacity unless a count is given.",
        discussion: "The items' shelf life starts when they were loaded: --loaded says when that was (default: now).")

    @OptionGroup var connection: Connection
    @Argument(help: "A slot such as A1, or all.") var slot: String
    @Argument(help: "How many items to add (default: fill to capacity).") var count: Int?
    @Option(help: ArgumentHelp("When the items were loaded (default: now).", valueName: "date"), transform: parseDate)
    var loaded: Int64?

    func run() throws {
        try send(.restock(slot: slot, count: count, loadedAt: loaded), connection)
    }
}

struct Unload: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Take items out of a slot, oldest first (all of them unless a count is given).",
        discussion:
            "Items past their shelf life are booked as discarded (vendctl status shows how many and their value). A slot stopped because its next item expired sells again once the expired items are out."
    )

    @OptionGroup var connection: Connection
    @Argument(help: "The slot, e.g. A2.") var slot: String
    @Argument(help: "How many items to take out (default: all).") var count: Int?

    func validate() throws {
        if let count, count < 1 { throw ValidationError("unload at least 1 item (or leave the count out to empty the slot)") }
    }

    func run() throws {
        try send(.unload(slot: slot, count: count), connection)
    }
}

struct Price: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Set a slot's price, or go back to the configured one with default.",
        discussion:
            "The amount is a plain decimal in the machine's currency (1300, or 1.50). A later edit of that slot's price in the configuration file wins over this one."
    )

    @OptionGroup var connection: Connection
    @Argument(help: "The slot, e.g. A1.") var slot: String
    @Argument(help: "The new price, or default.") var amount: String

    func run() throws {
        try send(.price(slot: slot, amount: amount), connection)
    }
}

struct Service: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Switch service mode on (sales stop, coins are refused) or off.",
        discussion: "Service mode is also on while the service key is turned or the door is open; off cannot override those.")

    @OptionGroup var connection: Connection
    @Argument(help: "on or off.") var mode: Mode

    enum Mode: String, ExpressibleByArgument, CaseIterable { case on, off }

    func run() throws {
        try send(.service(on: mode == .on), connection)
    }
}
