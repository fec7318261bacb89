import ArgumentParser
import VendControl
import VendDEX
import VendingCore

struct Audit: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write an EVA-DTS DEX audit file for route operators: sales per selection and cash totals.",
        discussion:
            "The file follows EVA-DTS 6.x (CRLF segments, G85 CRC-16). Writing it resets nothing: 'since last reset' counts from the last read a DEX handheld acknowledged on the machine's DEX port (from initialisation until the first)."
    )

    @OptionGroup var connection: Connection
    @Option(help: ArgumentHelp("The DEX file to write.", valueName: "file")) var dex: String
    @Option(
        help: ArgumentHelp(
            "The communication id (DXS01, ID101): 3 capital letters and 7 digits (default: the dex: section's communication_id, else VDD0000001).",
            valueName: "id"))
    var commId: String?
    @Option(
        help: ArgumentHelp(
            "The operator's asset number for the machine (ID106; default: the dex: section's asset_number, else the communication id).",
            valueName: "number"))
    var asset: String?

    func validate() throws {
        if let commId, !DEXAudit.isValidCommunicationID(commId) {
            throw ValidationError("--comm-id '\(commId)' must be 3 capital letters and 7 digits, e.g. VDD0000001")
        }
    }

    func run() throws {
        try reporting {
            let response = try connection.send(.sales(since: nil))
            guard let sales = response.sales else {
                throw Failure("vendd's answer lacks the sales; is vendd older than this vendctl?", code: ExitStatus.unavailable)
            }
            let audit: DEXAudit
            do {
                // Without the flags, the identity the DEX port's audit carries: the same report.
                let id = commId ?? sales.dexCommunicationID ?? "VDD0000001"
                audit = try DEXAudit(sales, communicationID: id, asset: asset ?? (commId == nil ? sales.dexAssetNumber : nil) ?? id)
            } catch {
                throw Failure("\(error)", code: ExitStatus.unavailable)
            }
            let file = DEXWriter.file(audit)
            try write(file, to: dex)
            if !connection.json {
                print(
                    "\(dex): \(audit.selections.count) selections, \(sales.total.count) paid vends for \(sales.total.amountText), \(Self.cashIn(sales))"
                )
            }
        }
    }

    /// What CA3 counts, said as what it is: coins, and notes when there were any.
    static func cashIn(_ sales: SalesReport) -> String {
        let coins = "\(sales.coinsInText) in coins"
        guard let cash = sales.cash, let notes = cash.billsInText, cash.billsIn.contains(where: { $0 != "0" && $0 != "." }) else {
            return "cash in (CA3): \(coins)"
        }
        return "cash in (CA3): \(coins) and \(notes) in notes"
    }
}
