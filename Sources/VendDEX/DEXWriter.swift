/// Writes an EVA-DTS 6.x audit file (research notes §6): CRLF-terminated segments, elements
/// separated by `*`, the DXS/ST…G85/SE/DXE envelope, and the G85 CRC-16 over ST up to the segment
/// before G85.
///
/// vendd never resets its interim counters, so every "since last reset" element carries the same
/// value as its "since initialisation" twin. All sales are cash (coins and bills).
public enum DEXWriter {
    public static func file(_ audit: DEXAudit) -> String {
        let decimals = String(audit.decimalPlaces)
        let sales = String(audit.paidValue), vends = String(audit.paidVends)
        var body =
            [
                ["ST", "001", "0001"],
                ["ID1", audit.communicationID, "VENDD", "1", audit.location, "", audit.assetNumber],
                ["ID4", decimals, "", audit.currencyCode],
                ["VA1", sales, vends, sales, vends],
                ["VA3", "0", "0", "0", "0"],
                ["CA2", sales, vends, sales, vends],
            ] + cashSegments(audit.cash)
        for selection in audit.selections {
            let count = String(selection.vends), value = String(selection.value)
            body.append(["PA1", selection.id] + (selection.price.map { [String($0)] } ?? []))
            body.append(["PA2", count, value, count, value])
            body.append(["PA4", "0"])
        }
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

    /// CA3 cash in (to the box, to the tubes, bills), CA4 coins dispensed (by the machine, by
    /// hand), CA10 cash filled, CA15 tube contents: each "since reset" element twice.
    static func cashSegments(_ cash: DEXAudit.Cash) -> [[String]] {
        let cashIn = String(cash.coinsIn + cash.billsIn), toBox = String(cash.coinsIn - cash.coinsToTubes)
        let toTubes = String(cash.coinsToTubes), bills = String(cash.billsIn)
        let dispensed = String(cash.dispensed), manual = String(cash.manuallyDispensed), filled = String(cash.filled)
        return [
            ["CA3", cashIn, toBox, toTubes, bills, cashIn, toBox, toTubes, bills],
            ["CA4", dispensed, manual, dispensed, manual],
            ["CA10", filled, filled],
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
