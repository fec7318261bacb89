import ArgumentParser
import VendControl

struct Sim: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Drive the simulated hardware of `vendd run --simulate`.",
        subcommands: [
            Press.self, Coin.self, Note.self, Card.self, Drop.self, Jam.self, MotorMissing.self, FreeMotor.self, CoinReturn.self, Key.self,
            Door.self, VerifyAge.self, Temp.self, SensorFault.self,
        ])

    struct Press: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Press and release a slot's selection button.")
        @OptionGroup var connection: Connection
        @Argument(help: "The slot, e.g. A1.") var slot: String
        func run() throws { try send(.sim(.press(slot: slot)), connection) }
    }

    struct Jam: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The next turn of a slot's spiral motor jams away from home.")
        @OptionGroup var connection: Connection
        @Argument(help: "The slot, e.g. B3.") var slot: String
        func run() throws { try send(.sim(.motor(slot: slot, action: "jam")), connection) }
    }

    struct MotorMissing: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "motor-missing", abstract: "A slot's spiral motor is missing for its next turn (its cam never leaves home).")
        @OptionGroup var connection: Connection
        @Argument(help: "The slot, e.g. B3.") var slot: String
        func run() throws { try send(.sim(.motor(slot: slot, action: "missing")), connection) }
    }

    struct FreeMotor: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "free-motor", abstract: "Free a jammed spiral and turn its cam home by hand, as the technician does.")
        @OptionGroup var connection: Connection
        @Argument(help: "The slot, e.g. B3.") var slot: String
        func run() throws { try send(.sim(.motor(slot: slot, action: "free")), connection) }
    }

    struct Coin: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Insert a coin of the given value (e.g. 500, or 0.50).")
        @OptionGroup var connection: Connection
        @Argument(help: "The coin's value in the machine's currency.") var value: String
        func run() throws { try send(.sim(.coin(amount: value)), connection) }
    }

    struct Note: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Insert a note into the MDB bill validator (e.g. 1000).")
        @OptionGroup var connection: Connection
        @Argument(help: "The note's value in the machine's currency.") var value: String
        func run() throws { try send(.sim(.note(amount: value)), connection) }
    }

    struct Card: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A customer or the bank at an MDB card reader.",
            discussion: """
                tap [FUNDS]    a card presented, with FUNDS on it (default: the reader does not say)
                remove         the customer takes the card away
                deny           the bank denies the next vend
                slow POLLS     the next approval comes after POLLS polls (an online authorisation)
                refund-fail    the next failed vend's refund fails
                id [AGE]       at the reader's age prompt, an ID showing AGE (default: no age readable)
                back           the customer gives up at the reader's age prompt
                """)
        @OptionGroup var connection: Connection
        @Option(name: .long, help: "The reader: 1 (10h) or 2 (60h).") var reader = 1
        @Argument(help: "tap, remove, deny, slow, refund-fail, id or back.") var action: String
        @Argument(help: "tap: the card's funds; slow: how many polls; id: the age on the ID.") var value: String?

        func validate() throws {
            guard SimulatedCardAction.names.contains(action) else {
                throw ValidationError("unknown card action '\(action)' (known: \(SimulatedCardAction.names.joined(separator: ", ")))")
            }
            if action == "slow", value.flatMap(Int.init) == nil { throw ValidationError("slow needs a number of polls, e.g. sim card slow 50") }
            if action == "id", let value, Int(value).map({ (1...150).contains($0) }) != true {
                throw ValidationError("id takes an age in years, e.g. sim card id 25 (or nothing: no age readable)")
            }
            if !["tap", "slow", "id"].contains(action), value != nil { throw ValidationError("\(action) takes no value") }
        }

        func run() throws {
            let card: SimulatedCardAction =
                switch action {
                case "tap": .tap(funds: value)
                case "remove": .remove
                case "deny": .deny
                case "slow": .slow(polls: value.flatMap(Int.init) ?? 0)
                case "id": .showID(age: value.flatMap(Int.init))
                case "back": .back
                default: .refundFail
                }
            try send(.sim(.card(reader: reader, action: card)), connection)
        }
    }

    struct Drop: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Decide whether the next vend from a slot drops its item.")
        @OptionGroup var connection: Connection
        @Argument(help: "The slot, e.g. A1.") var slot: String
        @Argument(help: "ok (the item drops) or fail (it jams).") var outcome: DropOutcome
        func run() throws { try send(.sim(.drop(slot: slot, succeeds: outcome == .ok)), connection) }
    }

    struct CoinReturn: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "coin-return", abstract: "Press the coin-return button.")
        @OptionGroup var connection: Connection
        func run() throws { try send(.sim(.coinReturn), connection) }
    }

    struct VerifyAge: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify-age",
            abstract: "Approve the age check: the verifier's input (attendant, ID scanner), or an adult's ID at the checking card reader.")
        @OptionGroup var connection: Connection
        func run() throws { try send(.sim(.verifyAge), connection) }
    }

    struct Key: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Turn the service key switch on or off (it stays there).")
        @OptionGroup var connection: Connection
        @Argument(help: "on or off.") var position: KeyPosition
        func run() throws { try send(.sim(.key(on: position == .on)), connection) }
    }

    struct Door: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Open or close the door switch: an open door puts the machine in service mode, and every temperature zone sees it.")
        @OptionGroup var connection: Connection
        @Argument(help: "open or close.") var position: DoorPosition
        func run() throws { try send(.sim(.door(open: position == .open)), connection) }
    }

    struct Temp: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Put a zone's simulated cabinet at a temperature (degrees Celsius); it drifts on from there.")
        @OptionGroup var connection: Connection
        @Argument(help: "The zone, e.g. chilled.") var zone: String
        @Argument(help: "Degrees Celsius, e.g. 9 or 7.5.") var value: String
        func run() throws { try send(.sim(.temp(zone: zone, value: value)), connection) }
    }

    struct SensorFault: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sensor-fault", abstract: "Make a zone's simulated sensors fail (missing, crc, 85) or read again (clear).")
        @OptionGroup var connection: Connection
        @Argument(help: "The zone, e.g. chilled.") var zone: String
        @Argument(help: "missing, crc, 85 or clear.") var fault: String
        func run() throws { try send(.sim(.sensorFault(zone: zone, fault: fault)), connection) }
    }

    enum DoorPosition: String, ExpressibleByArgument, CaseIterable {
        case open, close
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
