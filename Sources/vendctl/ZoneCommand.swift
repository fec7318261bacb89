import ArgumentParser
import VendControl

struct Zone: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Temperature zones: service a zone whose food-safety lock latched.",
        subcommands: [Service.self])

    struct Service: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Clear a zone's health lock after servicing it (service mode only; recorded with your user name).",
            discussion:
                "Discard or check the perishable food of the zone first: the lock latched because the zone could not hold it at a safe temperature. The zone then gets its recovery window before it can lock again."
        )
        @OptionGroup var connection: Connection
        @Argument(help: "The zone, e.g. chilled.") var zone: String
        func run() throws { try send(.zoneService(zone: zone), connection) }
    }
}
