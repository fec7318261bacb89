import VendFleetStore

/// The cash box collections: per machine the list with its chart, per collection what the
/// machine counted in against what the driver counted, and the driver's form.
extension Pages {
    static func signedMoney(_ text: String?, _ currency: String, _ amounts: AmountFormatter) -> String {
        shown(text.flatMap { Amount.signed($0) }, currency, amounts)
    }

    static func shown(_ amount: Amount?, _ currency: String, _ amounts: AmountFormatter) -> String {
        amount.map { html(amounts.string($0, currency: currency)) } ?? "-"
    }

    /// A difference other than zero is marked.
    static func differenceClass(_ amount: Amount?) -> String { (amount?.units ?? 0) == 0 ? "n" : "n alert" }

    static func cash(machine: String, records: [CollectionRecord], chart: String, amounts: AmountFormatter, user: OfficeUser, csrf: String) -> String
    {
        var body = "<p><a href=\"\(html("/machine?id=\(queryValue(machine))"))\">Machine \(html(machine))</a></p>"
        guard !records.isEmpty else {
            return page(
                title: "Cash collections: \(machine)", user: user, csrf: csrf,
                body: body + "<p>No collection stored yet: they come with the machine's <code>cash-collected</code> event (vendctl cash collect).</p>"
            )
        }
        body += "<div class=\"chart\">\(chart)</div>"
        body += """
            <div class="scroll"><table><thead><tr><th class="n">#</th><th>Emptied</th><th>By</th><th class="n">Machine counted</th>\
            <th class="n">Driver counted</th><th class="n">Difference</th><th>Entered</th></tr></thead><tbody>
            """
        for record in records.reversed() {
            let currency = record.columns.currency
            let link = "/collection?id=\(queryValue(machine))&seq=\(record.seq)"
            let entered =
                record.counted.map { "\(html($0.enteredBy)), \(localTime($0.enteredAt))" } ?? "<a href=\"\(html(link))\">enter the count</a>"
            body += """
                <tr><td class="n"><a href="\(html(link))">\(record.columns.number)</a></td><td>\(localTime(record.at))</td>\
                <td>\(html(record.columns.collectedBy ?? "-"))</td><td class="n">\(signedMoney(record.columns.total, currency, amounts))</td>\
                <td class="n">\(signedMoney(record.countedTotal, currency, amounts))</td>\
                <td class="\(differenceClass(record.difference.flatMap { Amount.signed($0) }))">\(signedMoney(record.difference, currency, amounts))</td><td>\(entered)</td></tr>

                """
        }
        body += "</tbody></table></div>"
        return page(title: "Cash collections: \(machine)", user: user, csrf: csrf, body: body)
    }

    /// One collection: per denomination the machine's count, the driver's (a field of the form)
    /// and the difference; `typed` refills the form after a refused entry.
    static func collection(
        _ record: CollectionRecord, known: [(kind: DenominationCount.Kind, value: String)], amounts: AmountFormatter, user: OfficeUser,
        csrf: String, error: String?, typed: [String: String]?
    ) -> String {
        let currency = record.columns.currency
        let machine = record.machine
        var body = "<p><a href=\"\(html("/cash?id=\(queryValue(machine))"))\">All collections of \(html(machine))</a></p>"
        body += "<p>Emptied \(localTime(record.at))"
        body += record.columns.collectedBy.map { " by \(html($0))" } ?? ""
        body +=
            record.columns.since.map { "; the machine's count since the previous collection (\(localTime($0)))." }
            ?? "; the machine's count since it was new."
        body += "</p>"
        if let error { body += "<p class=\"error\">\(html(error))</p>" }
        if let counted = record.counted {
            body +=
                "<p>Counted by \(html(counted.enteredBy)), entered \(localTime(counted.enteredAt)). Entering again replaces it (the audit log keeps both).</p>"
        }
        let comparison = Dictionary(record.comparison.map { (CashEntry.field($0.kind, $0.value), $0) }) { first, _ in first }
        body += """
            <form method="post" action="/collection">\(csrfField(csrf))<input type="hidden" name="id" value="\(html(machine))">\
            <input type="hidden" name="seq" value="\(record.seq)">
            <div class="scroll"><table><thead><tr><th>Denomination</th><th class="n">Machine counted</th><th class="n">Driver counted</th>\
            <th class="n">Difference</th><th class="n">Difference amount</th></tr></thead><tbody>
            """
        for (kind, value) in known {
            let name = CashEntry.field(kind, value)
            let row = comparison[name]
            let machineCount = row?.machine ?? 0
            let entered = typed?[name] ?? row?.counted.map { String($0) } ?? ""
            let difference = row?.difference
            let differenceAmount = difference.flatMap { Amount(value)?.times($0) }
            body += """
                <tr><td>\(kind.rawValue) \(signedMoney(value, currency, amounts))</td>\
                <td class="n">\(machineCount) = \(shown(Amount(value)?.times(machineCount), currency, amounts))</td>\
                <td class="n"><input name="\(html(name))" value="\(html(entered))" size="6" inputmode="numeric" aria-label="\(kind.rawValue) \(html(value)) counted"></td>\
                <td class="\(difference.map { $0 == 0 ? "n" : "n alert" } ?? "n")">\(difference.map { $0 > 0 ? "+\($0)" : "\($0)" } ?? "-")</td>\
                <td class="\(differenceClass(differenceAmount))">\(shown(differenceAmount, currency, amounts))</td></tr>

                """
        }
        body += """
            <tr><th>Total</th><th class="n">\(signedMoney(record.columns.total, currency, amounts))</th>\
            <th class="n">\(signedMoney(record.countedTotal, currency, amounts))</th><th></th>\
            <th class="\(differenceClass(record.difference.flatMap { Amount.signed($0) }))">\(signedMoney(record.difference, currency, amounts))</th></tr>
            </tbody></table></div>
            <button>\(record.counted == nil ? "Save the count" : "Replace the count")</button></form>
            """
        return page(title: "Collection \(record.columns.number) of \(machine)", user: user, csrf: csrf, body: body)
    }
}
