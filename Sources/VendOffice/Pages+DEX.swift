extension Pages {
    /// The last DEX audit: the latest file with its time (operators download it: it holds the
    /// prices), and the latest request if it is still waiting or was refused or never answered.
    static func dexSection(
        _ machine: String, _ dex: (request: DEXArchive.Audit?, file: DEXArchive.Audit?), now: Int64, user: OfficeUser, csrf: String
    ) -> String {
        var body = "<h2 id=\"dex\">DEX audit</h2>"
        if let file = dex.file, let received = file.receivedAt {
            body += "<p>Latest: received \(localTime(received)), asked by \(html(file.requestedBy))"
            if user.role == .operator_ {
                body += " · <a href=\"\(html("/dex.txt?request=\(queryValue(file.request))"))\">download the DEX file</a>"
            }
            body += "</p>"
        } else {
            body += "<p>No DEX audit archived for this machine yet.</p>"
        }
        if let request = dex.request, request.request != dex.file?.request {
            let asked = "Asked \(localTime(request.requestedAt)) by \(html(request.requestedBy))"
            if let refusal = request.refusal {
                body += "<p class=\"error\">\(asked): the machine refused: \(html(refusal))</p>"
            } else if request.receivedAt == nil && now - request.requestedAt < DEXArchive.timeout {
                body += "<p class=\"dex-waiting\">\(asked): waiting for the machine's answer (reload in a few seconds).</p>"
            } else if request.receivedAt == nil {
                body +=
                    "<p class=\"error\">\(asked): no answer within \(DEXArchive.timeout / 1000) s. The machine may be offline, or the broker may not let vendstore send it (the journal says).</p>"
            }
        }
        body += """
            <form method="post" action="/dex">\(csrfField(csrf))<input type="hidden" name="id" value="\(html(machine))">\
            <button>Ask the machine for a DEX audit now</button></form>
            """
        return body
    }
}
