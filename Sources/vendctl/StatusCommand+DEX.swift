import VendControl

extension Status {
    /// The DEX port, then its last sessions: when, who, what, how it ended.
    static func dexLines(_ dex: StatusReport.DEXPort) -> [String] {
        let state = dex.open ? "open" : "NOT OPEN"
        var modes: [String] = []
        if let interval = dex.intervalResetMode {
            modes.append(
                interval == "SAVE"
                    ? "SD105 SAVE: a read resets nothing (a handheld's RESET does)" : "SD105 \(interval): a read resets the interim figures")
        }
        if let events = dex.eventResetMode, events != dex.intervalResetMode { modes.append("SD106 \(events) for events") }
        if let reads = dex.reads, let resets = dex.resets { modes.append("\(reads) reads, \(resets) resets") }
        if dex.passCodeSet == true { modes.append("pass code kept (vendctl dex clear-pass-code)") }
        return ["dex      \(dex.port): \(state), \(dex.sessions.isEmpty ? "no session since vendd started" : "last sessions:")"]
            + (modes.isEmpty ? [] : ["         " + modes.joined(separator: "; ")])
            + dex.sessions.map { session in
                "         \(dateText(session.at)) \(session.handheld ?? "?") \(session.operation): \(session.result): \(session.detail)"
            }
    }
}
