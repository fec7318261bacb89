import ArgumentParser
import VendControl

/// `vendctl slot clear B3`: the technician's word that a jammed or missing motor is fixed.
struct SlotCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "slot", abstract: "Put a slot locked by a motor fault back in service.", subcommands: [Clear.self])

    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Clear a slot's motor fault (jammed, motor missing, away from home) once the spiral is free and its cam home.",
            discussion: """
                Only in service mode: someone at the machine frees the spiral first. The journal records who cleared it. \
                `vendctl status` lists the slots out of service.
                """)
        @OptionGroup var connection: Connection
        @Argument(help: "The slot, e.g. B3.") var slot: String
        func run() throws { try send(.slotClear(slot: slot), connection) }
    }
}
