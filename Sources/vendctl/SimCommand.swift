import ArgumentParser
import VendControl

struct Sim: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Drive the simulated hardware of `vendd run --simulate`.",
        subcommands: [Press.self, Coin.self, Drop.self, CoinReturn.self, Key.self])

    struct Press: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Press and release a slot's selection button.")
        @OptionGroup var connection: Connection
        @Argument(help: "The slot, e.g. A1.") var slot: String
        func run() throws { try send(.simPress(slot: slot), connection) }
    }

    struct Coin: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Insert a coin of the given value (e.g. 500, or 0.50).")
        @OptionGroup var connection: Connection
        @Argument(help: "The coin's value in the machine's currency.") var value: String
        func run() throws { try send(.simCoin(amount: value), connection) }
    }

    struct Drop: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Decide whether the next vend from a slot drops its item.")
        @OptionGroup var connection: Connection
        @Argument(help: "The slot, e.g. A1.") var slot: String
        @Argument(help: "ok (the item drops) or fail (it jams).") var outcome: DropOutcome
        func run() throws { try send(.simDrop(slot: slot, succeeds: outcome == .ok), connection) }
    }

    struct CoinReturn: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "coin-return", abstract: "Press the coin-return button.")
        @OptionGroup var connection: Connection
        func run() throws { try send(.simCoinReturn, connection) }
    }

    struct Key: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Turn the service key switch on or off (it stays there).")
        @OptionGroup var connection: Connection
        @Argument(help: "on or off.") var position: KeyPosition
        func run() throws { try send(.simKey(on: position == .on), connection) }
    }

    enum KeyPosition: String, ExpressibleByArgument, CaseIterable {
        case on, off
    }

    enum DropOutcome: String, ExpressibleByArgument, CaseIterable {
        case ok, fail
    }
}

extension ParsableCommand {
    func send(_ command: ControlCommand, _ connection: Connection) throws {
        try reporting {
            let response = try connection.send(command)
            if !connection.json, let message = response.message { print(message) }
        }
    }
}
