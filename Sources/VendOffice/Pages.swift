import VendText

#if canImport(Glibc)
    import Glibc
#endif

/// The office's HTML: server-rendered, one inline style sheet, only its own optional script (the
/// live pages' `/office.js`: a page works without it) and nothing fetched from
/// elsewhere; every text from the database or the request goes through `html(_:)`.
enum Pages {
    /// Text for HTML content and quoted attribute values.
    static func html(_ text: String) -> String {
        // Most texts (ids, states, amounts) have nothing to escape: a 10,000-machine fleet page
        // spent a tenth of its time rebuilding them.
        guard text.utf8.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22 || $0 == 0x27 }) else { return text }
        return text.replacingScalars(["&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;"])
    }

    /// A query argument's value, percent-encoded (all but unreserved characters).
    static func queryValue(_ text: String) -> String {
        func unreserved(_ byte: UInt8) -> Bool {
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a) || "-._~".utf8.contains(byte)
        }
        // Machine ids and slots mostly need nothing: a fleet page writes 10,000 of them.
        guard !text.utf8.allSatisfy(unreserved) else { return text }
        var encoded = ""
        for byte in text.utf8 {
            if unreserved(byte) {
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let digits = Array("0123456789ABCDEF".unicodeScalars)
                encoded += "%" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0x0f)])
            }
        }
        return encoded
    }

    /// "2026-11-28 14:05" in the box's time zone.
    static func localTime(_ milliseconds: Int64) -> String {
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        localtime_r(&seconds, &parts)
        var text = [CChar](repeating: 0, count: 32)
        strftime(&text, text.count, "%Y-%m-%d %H:%M", &parts)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static let style = """
        body{font-family:system-ui,sans-serif;margin:0;color:#1b1b1b;background:#fafafa}
        header{display:flex;flex-wrap:wrap;gap:.8em;align-items:center;padding:.6em 1em;background:#24364b;color:#fff}
        header a{color:#fff}header form{margin-left:auto}main{padding:1em}
        table{border-collapse:collapse;width:100%;background:#fff}th,td{padding:.35em .5em;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}
        td.n,th.n{text-align:right;white-space:nowrap}.scroll{overflow-x:auto}
        .offline{color:#a40000;font-weight:600}.online{color:#1f6e2c}.alert{color:#a40000}
        .error{background:#fde7e7;border:1px solid #a40000;padding:.5em}form.inline{display:inline}
        input,select,button,textarea{font-size:1em;padding:.3em}label{display:block;margin:.4em 0}
        .chart svg{max-width:100%;height:auto;display:block;margin:.5em 0}
        """

    /// A whole page: `user` nil for the login page.
    static func page(title: String, user: OfficeUser?, csrf: String?, body: String) -> String {
        var header = "<header><strong>vendd back office</strong>"
        if let user {
            header += "<a href=\"/fleet\">Fleet</a><a href=\"/visit\">To visit</a><a href=\"/routes\">Routes</a>"
            if user.role == .operator_ { header += "<a href=\"/prices\">Prices</a><a href=\"/audit\">Audit log</a>" }
            header += "<span>\(html(user.name)) (\(user.role.rawValue))</span>"
            header += "<form method=\"post\" action=\"/logout\">\(csrfField(csrf))<button>Log out</button></form>"
        }
        header += "</header>"
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(html(title)) - vendd back office</title><style>\(style)</style></head>
            <body>\(header)<main><h1>\(html(title))</h1>
            \(body)
            </main></body></html>
            """
    }

    static func csrfField(_ token: String?) -> String {
        "<input type=\"hidden\" name=\"csrf\" value=\"\(html(token ?? ""))\">"
    }

    static func login(csrf: String, message: String?) -> String {
        page(
            title: "Log in", user: nil, csrf: nil,
            body: """
                \(message.map { "<p class=\"error\">\(html($0))</p>" } ?? "")
                <form method="post" action="/login">\(csrfField(csrf))
                <label>User <input name="user" autocomplete="username" required></label>
                <label>Password <input name="password" type="password" autocomplete="current-password" required></label>
                <button>Log in</button></form>
                """)
    }

    static func message(_ title: String, _ text: String, user: OfficeUser?, csrf: String?) -> String {
        page(title: title, user: user, csrf: csrf, body: "<p class=\"error\">\(html(text))</p>")
    }

    // MARK: Fleet

    enum FleetSort: String, CaseIterable {
        case machine, state, alerts, today, week
    }

    enum FleetFilter: String, CaseIterable {
        case all, offline, alerts
        case notInService = "not-in-service"
    }

    static func fleet(
        _ machines: [MachineSummary], sort: FleetSort, filter: FleetFilter, search: String, amounts: AmountFormatter, user: OfficeUser, csrf: String
    ) -> String {
        let shown = machines.filter { summary in
            let matches = search.isEmpty || summary.machine.lowercased().contains(search.lowercased())
            switch filter {
            case .all: return matches
            case .offline: return matches && summary.online != true
            case .alerts: return matches && !summary.alerts.isEmpty
            case .notInService: return matches && summary.state != "in-service"
            }
        }.sorted(by: sort)
        func sortLink(_ key: FleetSort, _ label: String, numeric: Bool = false) -> String {
            let href = "/fleet?sort=\(key.rawValue)&filter=\(filter.rawValue)&q=\(queryValue(search))"
            return "<th\(numeric ? " class=\"n\"" : "")><a href=\"\(html(href))\">\(label)</a>\(key == sort ? " ▾" : "")</th>"
        }
        var rows = ""
        rows.reserveCapacity(shown.count * 512)
        // The same amounts (0 above all) recur across a fleet: each is formatted once per page.
        struct Shown: Hashable {
            let units: Int64
            let digits: Int
            let currency: String
        }
        var formatted: [Shown: String] = [:]
        for summary in shown {
            let money = { (amount: Amount) -> String in
                guard let currency = summary.currency else { return "-" }
                let key = Shown(units: amount.units, digits: amount.digits, currency: currency)
                if let text = formatted[key] { return text }
                let text = amounts.string(amount, currency: currency)
                formatted[key] = text
                return text
            }
            let status: String
            switch summary.online {
            case true?: status = "<span class=\"online\">online</span>"
            case false?: status = "<span class=\"offline\">offline</span>"
            case nil: status = "<span class=\"offline\">never reported</span>"
            }
            let since = summary.since.map { " since \(localTime($0))" } ?? ""
            let credit = summary.credit.map { " · credit \(html(money($0)))" } ?? ""
            let state = summary.online == false ? "" : "<br>\(html(summary.state))\(summary.reason.map { ": " + html($0) } ?? "")\(credit)"
            let alerts = summary.alerts.isEmpty ? "-" : summary.alerts.map { "<span class=\"alert\">\(html($0))</span>" }.joined(separator: "<br>")
            rows += """
                <tr><td><a href="\(html("/machine?id=\(queryValue(summary.machine))"))">\(html(summary.machine))</a></td><td>\(status)\(since)\(state)</td><td>\(alerts)</td>\
                <td class="n">\(html(money(summary.sales.todayCash)))</td><td class="n">\(html(money(summary.sales.todayCard)))</td>\
                <td class="n">\(html(money(summary.sales.weekCash)))</td><td class="n">\(html(money(summary.sales.weekCard)))</td></tr>

                """
        }
        let options = FleetFilter.allCases.map {
            "<option value=\"\($0.rawValue)\"\($0 == filter ? " selected" : "")>\($0.rawValue)</option>"
        }.joined()
        let body = """
            <form method="get" action="/fleet"><input type="hidden" name="sort" value="\(sort.rawValue)">
            <label>Show <select name="filter">\(options)</select></label>
            <label>Machine <input name="q" value="\(html(search))"></label><button>Filter</button></form>
            <div id="live"><p>\(shown.count) of \(machines.count) machines. Today: since local midnight; 7 days: today and the 6 days before.</p>
            <div class="scroll"><table><thead><tr>\(sortLink(.machine, "Machine"))\(sortLink(.state, "State"))\(sortLink(.alerts, "Alerts"))\
            \(sortLink(.today, "Today cash", numeric: true))<th class="n">Today card</th>\(sortLink(.week, "7 days cash", numeric: true))\
            <th class="n">7 days card</th></tr></thead>
            <tbody>
            \(rows)</tbody></table></div></div>
            <script src="/office.js" defer></script>
            """
        return page(title: "Fleet", user: user, csrf: csrf, body: body)
    }

    // MARK: Routes

    static func routes(_ routes: [OfficeRoute], user: OfficeUser, csrf: String, error: String?) -> String {
        var body = error.map { "<p class=\"error\">\(html($0))</p>" } ?? ""
        body += "<table><thead><tr><th>Route</th><th>Machines in visit order</th><th></th></tr></thead><tbody>"
        for route in routes {
            let pick = "/pick-list?route=\(queryValue(route.name))"
            var actions = "<a href=\"\(html(pick))\">pick list</a> · <a href=\"\(html("/pick-list.csv?route=\(queryValue(route.name))"))\">CSV</a>"
            if user.role == .operator_ {
                actions += """
                     <form class="inline" method="post" action="/routes/delete">\(csrfField(csrf))\
                    <input type="hidden" name="name" value="\(html(route.name))"><button>Delete</button></form>
                    """
            }
            body += "<tr><td>\(html(route.name))</td><td>\(route.machines.map(html).joined(separator: ", "))</td><td>\(actions)</td></tr>"
        }
        body += "</tbody></table>"
        if user.role == .operator_ {
            body += """
                <h2>New route (or replace one)</h2>
                <form method="post" action="/routes">\(csrfField(csrf))
                <label>Name <input name="name" required maxlength="64"></label>
                <label>Machines, in visit order (one a line or separated by commas)<br><textarea name="machines" rows="6" cols="30" required></textarea></label>
                <button>Save route</button></form>
                """
        }
        return page(title: "Routes", user: user, csrf: csrf, body: body)
    }

    static func pickList(_ list: PickList, user: OfficeUser, csrf: String) -> String {
        var body = "<p><a href=\"\(html("/pick-list.csv?route=\(queryValue(list.route))"))\">CSV</a></p>"
        for (machine, lines) in list.machines {
            body += "<h2>\(html(machine))</h2>"
            guard !lines.isEmpty else {
                body += "<p class=\"alert\">no stock report stored for this machine</p>"
                continue
            }
            body += """
                <div class="scroll"><table><thead><tr><th>Slot</th><th>Product</th><th class="n">Stock</th><th class="n">Capacity</th>\
                <th class="n">Par</th><th class="n">Unload expired</th><th class="n">Load</th><th>Expires soon</th></tr></thead><tbody>
                """
            for line in lines {
                var par = line.par.map { "\($0)" } ?? "-"
                if user.role == .operator_ {
                    par = """
                        <form class="inline" method="post" action="/par">\(csrfField(csrf))\
                        <input type="hidden" name="route" value="\(html(list.route))"><input type="hidden" name="machine" value="\(html(machine))">\
                        <input type="hidden" name="slot" value="\(html(line.slot))">\
                        <input name="par" size="3" inputmode="numeric" value="\(line.par.map { "\($0)" } ?? "")"><button>Set</button></form>
                        """
                }
                body += """
                    <tr><td>\(html(line.slot))</td><td>\(html(line.product))</td><td class="n">\(line.stock)</td><td class="n">\(line.capacity)</td>\
                    <td class="n">\(par)</td><td class="n">\(line.expired)</td><td class="n"><strong>\(line.load)</strong></td>\
                    <td>\(line.expiresSoon.map { "<span class=\"alert\">\(localTime($0)): check and unload</span>" } ?? "")</td></tr>

                    """
            }
            body += "</tbody></table></div>"
        }
        body +=
            "<h2>Totals for the warehouse</h2><table><thead><tr><th>Product</th><th class=\"n\">Unload expired</th><th class=\"n\">Load</th></tr></thead><tbody>"
        for total in list.totals {
            body += "<tr><td>\(html(total.product))</td><td class=\"n\">\(total.expired)</td><td class=\"n\"><strong>\(total.load)</strong></td></tr>"
        }
        body += "</tbody></table>"
        return page(title: "Pick list: \(list.route)", user: user, csrf: csrf, body: body)
    }

    static func audit(_ entries: [OfficeRecords.AuditEntry], user: OfficeUser, csrf: String) -> String {
        var body = "<table><thead><tr><th>When</th><th>Who</th><th>What</th><th>Detail</th></tr></thead><tbody>"
        for entry in entries {
            body +=
                "<tr><td>\(localTime(entry.at))</td><td>\(html(entry.actor))</td><td>\(html(entry.action))</td><td>\(html(entry.detail))</td></tr>"
        }
        body += "</tbody></table>"
        return page(title: "Audit log", user: user, csrf: csrf, body: body)
    }
}

extension Pages {
    /// A machine's page. A driver sees no prices.
    static func machine(
        _ detail: MachineDetail, charts: MachinePageCharts, dex: (request: DEXArchive.Audit?, file: DEXArchive.Audit?), amounts: AmountFormatter,
        now: Int64, user: OfficeUser, csrf: String
    ) -> String {
        func money(_ text: String?, _ currency: String?) -> String {
            guard let text, let currency, let amount = Amount(text) else { return "-" }
            return html(amounts.string(amount, currency: currency))
        }
        let prices = user.role == .operator_
        var body = ""
        if let state = detail.state {
            body += "<p><span class=\"\(state.online ? "online" : "offline")\">\(state.online ? "online" : "offline")</span>"
            body += state.at.map { " since \(localTime($0))" } ?? ""
            body += " · \(html(state.state))\(state.reason.map { ": " + html($0) } ?? "")</p>"
        } else {
            body += "<p class=\"offline\">no state reported</p>"
        }
        body += "<p><a href=\"\(html("/cash?id=\(queryValue(detail.machine))"))\">Cash collections</a> · <a href=\"#dex\">DEX audit</a></p>"
        body += "<h2>Sales</h2><div class=\"chart\">\(charts.days)</div><div class=\"chart\">\(charts.products)</div>"
        body += "<h2>Planogram</h2><div class=\"scroll\"><table><thead><tr><th>Slot</th><th>Product</th>"
        body += prices ? "<th class=\"n\">Price</th>" : ""
        body += "<th class=\"n\">Stock / capacity</th><th>Earliest expiry</th><th>Fault</th></tr></thead><tbody>"
        for slot in detail.slots {
            let expired = slot.earliestExpiry.map { $0 <= now } == true && slot.available < slot.stock
            body += "<tr><td>\(html(slot.slot))</td><td>\(html(slot.product))</td>"
            body += prices ? "<td class=\"n\">\(money(slot.price, detail.currency))</td>" : ""
            body += "<td class=\"n\">\(slot.stock) / \(slot.capacity)</td>"
            body += "<td\(expired ? " class=\"alert\"" : "")>\(slot.earliestExpiry.map { localTime($0) } ?? "-")\(expired ? " (expired)" : "")</td>"
            body += "<td\(slot.fault == nil ? "" : " class=\"alert\"")>\(slot.fault.map(html) ?? "-")</td></tr>"
        }
        body += "</tbody></table></div>"
        if prices { body += priceLists(detail, money: money) }
        if !detail.zones.isEmpty {
            body +=
                "<h2>Zones</h2><table><thead><tr><th>Zone</th><th>Health</th><th class=\"n\">°C</th><th class=\"n\">Set point</th><th>Since</th></tr></thead><tbody>"
            for zone in detail.zones {
                let health = zone.health + (zone.cause.map { ": " + $0 } ?? "") + (zone.sensorFault.map { " (sensor: \($0))" } ?? "")
                body += "<tr><td>\(html(zone.zone)) (\(html(zone.kind)))</td><td\(zone.health == "ok" ? "" : " class=\"alert\"")>\(html(health))</td>"
                body += "<td class=\"n\">\(html(zone.temperature ?? "-"))</td><td class=\"n\">\(html(zone.setPoint ?? "-"))</td>"
                body += "<td>\(zone.since.map { localTime($0) } ?? "-")</td></tr>"
            }
            body += "</tbody></table>"
            body += charts.zones.map { "<div class=\"chart\">\($0)</div>" }.joined()
        }
        if let cash = detail.cash {
            body += "<h2>Cash position</h2><table><tbody>"
            let lines: [(String, String?)] = [
                ("Coins in", cash.coinsIn), ("Bills in", cash.billsIn), ("Sales", cash.sales), ("Refunds", cash.refunds),
                ("Change paid", cash.changePaid), ("Payouts of unknown outcome", cash.unknownPayouts),
            ]
            for (label, amount) in lines where amount != nil {
                body += "<tr><th>\(label)</th><td class=\"n\">\(money(amount, cash.currency))</td></tr>"
            }
            for level in cash.changeStock ?? [] {
                body +=
                    "<tr><th>Tube \(money(level.value, cash.currency))</th><td class=\"n\">\(level.count.map { "\($0) coins" } ?? "not counted")</td></tr>"
            }
            if cash.exactChangeOnly == true { body += "<tr><th>Exact change only</th><td class=\"n alert\">yes</td></tr>" }
            body += "</tbody></table>"
        }
        body += "<h2>Recent events</h2><div class=\"scroll\"><table><thead><tr><th class=\"n\">Seq</th><th>When</th><th>Event</th><th>Detail</th>"
        body += prices ? "<th class=\"n\">Amount</th>" : ""
        body += "</tr></thead><tbody>"
        for event in detail.events {
            body += "<tr><td class=\"n\">\(event.seq)</td><td>\(localTime(event.at))</td><td>\(html(event.type))</td><td>\(html(event.summary))</td>"
            body += prices ? "<td class=\"n\">\(money(event.amount, event.currency))</td>" : ""
            body += "</tr>"
        }
        body += "</tbody></table></div>"
        body += dexSection(detail.machine, dex, now: now, user: user, csrf: csrf)
        return page(title: "Machine \(detail.machine)", user: user, csrf: csrf, body: body)
    }
}
