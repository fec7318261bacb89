import ArgumentParser
import VendControl
import VendingCore
import VendReports

struct Audit: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write an EVA-DTS DEX audit file for route operators: sales per selection and cash totals.",
        discussion: "The file follows EVA-DTS 6.x (CRLF segments, G85 CRC-16). vendd never resets its counters, so 'since last reset' equals 'since initialisation'.")

    @OptionGroup var connection: Connection
    @Option(help: ArgumentHelp("The DEX file to write.", valueName: "file")) var dex: String
    @Option(help: ArgumentHelp("The communication id (DXS01, ID101): 3 capital letters and 7 digits.", valueName: "id"))
    var commId = "VDD0000001"
    @Option(help: ArgumentHelp("The operator's asset number for the machine (ID106; default: the communication id).", valueName: "number"))
    var asset: String?

    func validate() throws {
        guard DEXAudit.isValidCommunicationID(commId) else {
            throw ValidationError("--comm-id '\(commId)' must be 3 capital letters and 7 digits, e.g. VDD0000001")
        }
    }

    func run() throws {
        try reporting {
            let response = try connection.send(.sales(since: nil))
            guard let sales = response.sales else {
                throw Failure("vendd's answer lacks the sales; is vendd older than this vendctl?", code: ExitStatus.unavailable)
            }
            let audit = try Self.audit(sales, communicationID: commId, asset: asset ?? commId)
            let file = DEXWriter.file(audit)
            try write(file, to: dex)
            if !connection.json {
                print("\(dex): \(audit.selections.count) selections, \(sales.total.count) paid vends for \(sales.total.amountText), \(sales.coinsInText) cash in")
            }
        }
    }

    static func audit(_ sales: SalesReport, communicationID: String, asset: String) throws -> DEXAudit {
        let currency = Currency(code: sales.currency, minorDigits: sales.minorDigits)
        func minorUnits(_ amount: String) throws -> Int64 {
            do {
                return try Money(parsing: amount, currency: currency).minorUnits
            } catch {
                throw Failure("vendd sent an amount this vendctl cannot read: \(error)", code: ExitStatus.unavailable)
            }
        }
        return DEXAudit(
            communicationID: communicationID, assetNumber: asset, location: sales.machine, decimalPlaces: sales.minorDigits,
            currencyCode: sales.currency,
            selections: try sales.slots.map { slot in
                DEXAudit.Selection(id: slot.slot, price: try slot.price.map(minorUnits), vends: slot.sold.count,
                                   value: try minorUnits(slot.sold.amount))
            },
            cashIn: try minorUnits(sales.coinsIn))
    }
}
