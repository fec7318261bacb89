import ArgumentParser
import VendControl

struct Restock: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Load items into a slot (or all slots), filling to capacity unless a count is given.")

    @OptionGroup var connection: Connection
    @Argument(help: "A slot such as A1, or all.") var slot: String
    @Argument(help: "How many items to add (default: fill to capacity).") var count: Int?

    func run() throws {
        try send(.restock(slot: slot, count: count), connection)
    }
}
