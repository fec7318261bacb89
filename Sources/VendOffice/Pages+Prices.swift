import VendingCore

/// The remote price pages (operators only): the two forms, the latest changes, one change's
/// answers per machine.
extension Pages {
    static let priceHint = "minor units of the machine's currency (1300 for 1,300원, 150 for 1.50 €), or default for its configured price"
    static let lineHint =
        "list 1 for every payment is the slot's price; another list (one the machine's file defines) or payment sets that line, as vendctl price --list --payment"

    static func prices(
        choices: (machines: [(machine: String, currency: String)], products: [String]), routes: [OfficeRoute], recent: [PriceCommandRecord],
        connected: Bool?, waitSeconds: Int, user: OfficeUser, csrf: String, error: String?
    ) -> String {
        var body = error.map { "<p class=\"error\">\(html($0))</p>" } ?? ""
        switch connected {
        case nil: body += "<p class=\"error\">This vendstore has no broker connection for commands: prices cannot be changed here.</p>"
        case false?: body += "<p class=\"error\">vendstore is not connected to the broker now: a change would not be sent.</p>"
        case true?: break
        }
        let machines = choices.machines.map { (value: html($0.machine), label: "\(html($0.machine)) (\(html($0.currency)))") }
        let machineOptions = machines.map { "<option value=\"\($0.value)\">\($0.label)</option>" }.joined()
        let payments = PriceScope.allCases.map { "<option value=\"\($0.rawValue)\">\(html(paymentName($0.rawValue)))</option>" }.joined()
        let priceField = """
            <label>Price <input name="price" required size="10" inputmode="numeric"> <small>\(html(priceHint))</small></label>
            <label>List <input name="list" size="4" inputmode="numeric" placeholder="1"></label>
            <label>Payment <select name="payment">\(payments)</select></label> <small>\(html(lineHint))</small>
            """
        body += """
            <p>Each machine is asked through the broker (vendd's <code>price</code> command) and its answer shown; a machine \
            that does not answer within \(waitSeconds) s is shown so. Every change is in the audit log.</p>
            <h2>One slot</h2>
            <form method="post" action="/prices/slot">\(csrfField(csrf))
            <label>Machine <select name="machine" required>\(machineOptions)</select></label>
            <label>Slot <input name="slot" required maxlength="32" size="6"></label>
            \(priceField)
            <button>Change the price</button></form>
            <h2>A product across machines</h2>
            <form method="post" action="/prices/product">\(csrfField(csrf))
            <label>Product <select name="product" required>\(choices.products.map { "<option>\(html($0))</option>" }.joined())</select></label>
            \(priceField)
            <p>Machines:</p>
            \(machines.map { "<label><input type=\"checkbox\" name=\"machine\" value=\"\($0.value)\"> \($0.label)</label>" }.joined())
            <label>or a route <select name="route"><option value="">(the machines ticked above)</option>\
            \(routes.map { "<option>\(html($0.name))</option>" }.joined())</select></label>
            <button>Change the price</button></form>
            <h2>Latest changes</h2>
            """
        var changes: [(first: PriceCommandRecord, outcomes: [PriceCommandRecord.Outcome: Int])] = []
        for record in recent {
            if changes.last?.first.change == record.change {
                changes[changes.count - 1].outcomes[record.outcome, default: 0] += 1
            } else {
                changes.append((record, [record.outcome: 1]))
            }
        }
        body += "<table><thead><tr><th>When</th><th>Who</th><th>Product</th><th>Answers</th><th></th></tr></thead><tbody>"
        for (first, outcomes) in changes {
            let counts = outcomes.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.value) \($0.key.rawValue)" }.joined(separator: ", ")
            body += """
                <tr><td>\(localTime(first.requestedAt))</td><td>\(html(first.requestedBy))</td><td>\(html(first.product))\(lineNote(first.line))</td>\
                <td>\(html(counts))</td><td><a href="\(html("/price-change?id=\(queryValue(first.change))"))">answers</a></td></tr>
                """
        }
        body += "</tbody></table>"
        return page(title: "Prices", user: user, csrf: csrf, body: body)
    }

    /// One change: per machine and slot, the price asked and the machine's answer.
    static func priceChange(_ records: [PriceCommandRecord], amounts: AmountFormatter, user: OfficeUser, csrf: String) -> String {
        let first = records[0]
        var body =
            "<p>Asked by \(html(first.requestedBy)) at \(localTime(first.requestedAt))\(lineNote(first.line)). <a href=\"/prices\">Prices</a></p>"
        body += """
            <div class="scroll"><table><thead><tr><th>Machine</th><th>Slot</th><th>Product</th><th class="n">Price asked</th>\
            <th>Outcome</th><th>The machine's answer</th></tr></thead><tbody>
            """
        for record in records {
            let price =
                record.price == "default"
                ? "configured price" : Amount(record.price).map { amounts.string($0, currency: record.currency) } ?? record.price
            let outcome = record.outcome == .sent ? "sent, no answer recorded" : record.outcome.rawValue
            body += """
                <tr><td>\(html(record.machine))</td><td>\(html(record.slot.isEmpty ? "-" : record.slot))</td><td>\(html(record.product))</td>\
                <td class="n">\(html(price))</td><td class="\(record.outcome == .done ? "online" : "alert")">\(html(outcome))</td>\
                <td>\(html(record.answer))</td></tr>

                """
        }
        body += "</tbody></table></div>"
        return page(title: "Price change \(first.change)", user: user, csrf: csrf, body: body)
    }

    /// " on list 2, cash" for a change of another line than list 1 for every payment.
    static func lineNote(_ line: PriceLineChoice) -> String {
        line == .standard ? "" : " on \(html(line.description))"
    }
}
