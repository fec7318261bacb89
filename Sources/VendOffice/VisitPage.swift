extension Pages {
    /// "Machines to visit": `VisitRanking`'s order, with what makes each score.
    static func visit(_ candidates: [VisitRanking.Candidate], machines: Int, amounts: AmountFormatter, user: OfficeUser, csrf: String) -> String {
        var rows = ""
        for candidate in candidates {
            let summary = candidate.summary
            let projected =
                candidate.projected.isEmpty
                ? "-" : candidate.projected.map { "\(html($0.slot)) in \(days($0.days)) d" }.joined(separator: "<br>")
            let others = summary.alerts.filter { !$0.hasSuffix(" sold out") }
            let box = candidate.cashBox.flatMap { amount in summary.currency.map { amounts.string(amount, currency: $0) } } ?? "-"
            rows += """
                <tr><td><a href="\(html("/machine?id=\(queryValue(summary.machine))"))">\(html(summary.machine))</a></td>\
                <td class="n">\(candidate.score)</td><td class="n">\(summary.soldOut)</td><td>\(projected)</td>\
                <td>\(others.isEmpty ? "-" : others.map { "<span class=\"alert\">\(html($0))</span>" }.joined(separator: "<br>"))</td>\
                <td class="n">\(html(box))</td></tr>

                """
        }
        let body = """
            <div id="live"><p>\(candidates.count) of \(machines) machines, the most urgent first. Score = 3 × slots sold out + 2 × slots \
            projected to sell out within \(VisitRanking.horizonDays) days (stock ÷ the slot's sales a day over the last 7 days) \
            + other alerts; ties: the soonest sell-out, then the fuller cash box.</p>
            <div class="scroll"><table><thead><tr><th>Machine</th><th class="n">Score</th><th class="n">Sold out</th>\
            <th>Projected sell-out</th><th>Other alerts</th><th class="n">Cash box</th></tr></thead>
            <tbody>
            \(rows)</tbody></table></div></div>
            <script src="/office.js" defer></script>
            """
        return page(title: "Machines to visit", user: user, csrf: csrf, body: body)
    }

    /// Days with one decimal ("0.5", "1.8"), rounded half up.
    static func days(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded(.toNearestOrAwayFromZero))
        return "\(tenths / 10).\(tenths % 10)"
    }
}
