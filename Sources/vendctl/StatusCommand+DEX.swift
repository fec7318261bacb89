import VendControl

extension Status {
    /// The DEX port, then its last sessions: when, who, what, how it ended.
    static func dexLines(_ dex: StatusReport.DEXPort) -> [String] {
        let state = dex.open ? "open" : "NOT OPEN"
        return ["dex      \(dex.port): \(state), \(dex.sessions.isEmpty ? "no session since vendd started" : "last sessions:")"]
            + dex.sessions.map { session in
                "         \(dateText(session.at)) \(session.handheld ?? "?") \(session.operation): \(session.result): \(session.detail)"
            }
    }
}
