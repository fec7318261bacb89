import VendTelemetry

/// A machine's price lists on its page (operators only), as its retained stock message says:
/// each list with its name and when it is in force, then each slot's prices by list and payment.
extension Pages {
    /// Empty for a machine with one price per slot (the planogram shows it). `money` formats an
    /// amount of the machine's currency, escaped.
    static func priceLists(_ detail: MachineDetail, money: (String?, String?) -> String) -> String {
        let priced = detail.slots.filter { !$0.priceLines.isEmpty }
        guard !priced.isEmpty || !detail.priceLists.isEmpty || !detail.bands.isEmpty else { return "" }
        let names = Dictionary(detail.priceLists.map { ($0.list, $0.name) }, uniquingKeysWith: { first, _ in first })
        func listName(_ list: Int) -> String {
            list == 1 ? "1 (normal prices)" : names[list].map { "\(list) (\(html($0)))" } ?? "\(list)"
        }
        var body = "<h2>Price lists</h2><p>Times are the machine's local time; list 1 applies outside every band.</p>"
        body += "<table><thead><tr><th>List</th><th>In force</th></tr></thead><tbody>"
        let listed = Set(detail.priceLists.map(\.list) + detail.bands.map(\.list)).sorted()
        for list in listed {
            let bands = detail.bands.filter { $0.list == list }.map { band in
                let days = band.days.count == 7 ? "every day" : band.days.joined(separator: ", ")
                return html("\(days) \(band.from)–\(band.to)")
            }
            body += "<tr><td>\(listName(list))</td><td>\(bands.isEmpty ? "no band (cards mapped to it)" : bands.joined(separator: "; "))</td></tr>"
        }
        body += "</tbody></table>"
        guard !priced.isEmpty else { return body }
        body += """
            <h3>Prices by list and payment</h3><div class="scroll"><table><thead><tr><th>Slot</th><th>Product</th><th>List</th>\
            <th>Payment</th><th class="n">Price</th></tr></thead><tbody>
            """
        for slot in priced {
            let lines = [StockMessage.PriceLine(list: 1, payment: "any", price: slot.price)] + slot.priceLines
            for line in lines {
                body += """
                    <tr><td>\(html(slot.slot))</td><td>\(html(slot.product))</td><td>\(listName(line.list))</td>\
                    <td>\(html(paymentName(line.payment)))</td><td class="n">\(money(line.price, detail.currency))</td></tr>
                    """
            }
        }
        return body + "</tbody></table></div>"
    }

    /// A price line's payment (docs/mqtt.md) as an operator reads it.
    static func paymentName(_ payment: String) -> String {
        switch payment {
        case "any": "every payment"
        case "cash": "cash"
        case "cashless": "cards"
        case "cashless1": "card reader 1"
        case "cashless2": "card reader 2"
        default: payment
        }
    }
}
