/// Writes an EVA-DTS 6.x audit file (research notes §6): CRLF-terminated segments, elements
/// separated by `*`, the DXS/ST…G85/SE/DXE envelope, and the G85 CRC-16 over ST up to the segment
/// before G85.
///
/// Every "since last reset" element carries `audit.interimOrTotal`: the figures since the last
/// read a DEX handheld acknowledged (the whole-life ones until the first). VA1 counts every
/// paid vend; CA2 the cash ones, DA2 and DB2 those paid on cashless #1 and #2. Events (EA1, EA2)
/// follow the selections, as in EVA-DTS 6.1.1's examples (§2.8.3).
public enum DEXWriter {
    public static func file(_ audit: DEXAudit) -> String {
        let decimals = String(audit.decimalPlaces)
        let sales = String(audit.paidValue), vends = String(audit.paidVends)
        let interim = audit.interimOrTotal
        let interimSales = String(interim.paidValue), interimVends = String(interim.paidVends)
        var body =
            [
                ["ST", "001", "0001"],
                ["ID1", audit.communicationID, "VENDD", "1", audit.location, "", audit.assetNumber],
                ["ID4", decimals, "", audit.currencyCode],
                ["VA1", sales, vends, interimSales, interimVends],
                ["VA3", "0", "0", "0", "0"],
            ] + paymentSegment("CA2", "cash", audit, interim)
            + cashSegments(audit.cash, since: interim.cash, bills: audit.devices.contains(.billValidator))
            + paymentSegment("DA2", "cashless1", audit, interim) + paymentSegment("DB2", "cashless2", audit, interim)
        for selection in audit.selections {
            let count = String(selection.vends), value = String(selection.value)
            let since = interim.selection(selection.id)
            body.append(["PA1", selection.id] + (selection.price.map { [String($0)] } ?? []))
            body.append(["PA2", count, value, String(since?.vends ?? 0), String(since?.value ?? 0)])
            body.append(["PA4", "0"])
            // PA7 follows its PA1's other records (EVA-DTS 6.1.1 §2.2.2, p.18).
            for line in audit.priceLists[selection.id] ?? [] {
                body.append([
                    "PA7", selection.id, line.device, String(line.list), line.price.map(String.init) ?? "", String(line.total.vends),
                    String(line.total.value), String(line.sinceReset.vends), String(line.sinceReset.value),
                ])
            }
        }
        for event in audit.events where event.isReported { body += event.segments }
        // EA309 and EA310 are M: every audit carries EA3 (after the events, as p.27's example).
        body.append(audit.reads.segment)
        let segments = body.map(segment)
        let checked = segments.joined()
        let crc = CRC16ARC.checksum(checked.utf8)
        let hex = String(crc, radix: 16, uppercase: true)
        let trailer = [
            segment(["G85", String(repeating: "0", count: 4 - hex.count) + hex]),
            // SE01 counts the segments from ST to SE inclusive.
            segment(["SE", String(segments.count + 2), "0001"]),
        ]
        return segment(["DXS", audit.communicationID, "VA", "V0/6", "1"]) + checked + trailer.joined()
            + segment(["DXE", "1", "1"])
    }

    /// CA2, DA2 or DB2: the vends paid by `payment`, since initialisation then since the reset.
    /// DA201/DA202 (DB201/DB202) are CM, "required if the device or feature is present" (p.33,
    /// p.41): a configured reader's record goes with zeros before its first sale; a reader
    /// neither configured nor ever sold on has none.
    static func paymentSegment(_ tag: String, _ payment: String, _ audit: DEXAudit, _ interim: DEXAudit.Interim) -> [[String]] {
        let configured = DEXAudit.Device(rawValue: payment).map(audit.devices.contains) ?? false
        let sold = DEXAudit.sales(payment, in: audit.byPayment, paidVends: audit.paidVends, paidValue: audit.paidValue)
        guard let total = sold ?? (configured ? DEXAudit.Sales(vends: 0, value: 0) : nil),
            payment == "cash" || configured || total.vends > 0
        else { return [] }
        let since =
            DEXAudit.sales(payment, in: interim.byPayment, paidVends: interim.paidVends, paidValue: interim.paidValue)
            ?? DEXAudit.Sales(vends: 0, value: 0)
        return [[tag, String(total.value), String(total.vends), String(since.value), String(since.vends)]]
    }

    /// CA3 cash in (to the box, to the tubes, bills), CA4 coins dispensed (by the machine, by
    /// hand), CA10 cash filled: each since the last reset first, then since initialisation
    /// (EVA-DTS 6.1.1's data dictionary; VA1, CA2 and PA2 have the opposite order); CA15 tube
    /// contents, now. With a bill validator, CA309/CA310 too: the bills in as Nc since the reset
    /// and since initialisation (p.31: CA310 CM; note 6, p.41: "new designs need only send CA309
    /// and CA310"; CA304/CA308 stay for older readers).
    static func cashSegments(_ cash: DEXAudit.Cash, since interim: DEXAudit.Cash, bills: Bool = false) -> [[String]] {
        func figures(_ cash: DEXAudit.Cash) -> (
            cashIn: String, toBox: String, toTubes: String, bills: String, dispensed: String, manual: String, filled: String
        ) {
            (
                String(cash.coinsIn + cash.billsIn), String(cash.coinsIn - cash.coinsToTubes), String(cash.coinsToTubes), String(cash.billsIn),
                String(cash.dispensed), String(cash.manuallyDispensed), String(cash.filled)
            )
        }
        let total = figures(cash), since = figures(interim)
        return [
            ["CA3", since.cashIn, since.toBox, since.toTubes, since.bills, total.cashIn, total.toBox, total.toTubes, total.bills]
                + (bills ? [since.bills, total.bills] : []),
            ["CA4", since.dispensed, since.manual, total.dispensed, total.manual],
            ["CA10", since.filled, total.filled],
        ] + (cash.tubeContents.map { [["CA15", String($0)]] } ?? [])
    }

    /// One segment: elements joined by `*`, trailing empty elements dropped, CRLF.
    static func segment(_ elements: [String]) -> String {
        var elements = elements.map(clean)
        while elements.last?.isEmpty == true { elements.removeLast() }
        return elements.joined(separator: "*") + "\r\n"
    }

    /// Only printable ASCII is allowed, and `*` is the separator: anything else becomes a space.
    static func clean(_ value: String) -> String {
        String(
            String.UnicodeScalarView(
                value.unicodeScalars.map { scalar in
                    (0x20...0x7E).contains(scalar.value) && scalar != "*" ? scalar : " "
                }))
    }
}
