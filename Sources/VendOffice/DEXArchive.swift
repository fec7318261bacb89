import FoundationEssentials
import VendFleetIngest
import VendFleetStore

/// The DEX audits the office asked machines for with the `dex` command (schema 6's
/// `dex_audits`): each request with who asked and when, and the machine's answer when it came —
/// the file, or the machine's refusal. Every request and file is kept.
struct DEXArchive {
    let sql: FleetSQL

    /// How long the machine page waits for an answer before it says none came.
    static let timeout: Int64 = 30_000
    /// A larger answer is not kept (vendd's files are a few kilobytes).
    static let largestFile = 1 << 20

    struct Audit: Equatable {
        let request: String
        let machine: String
        let requestedBy: String
        let requestedAt: Int64
        let receivedAt: Int64?
        let file: String?
        let refusal: String?
    }

    func requested(_ request: String, machine: String, by user: String, at now: Int64) throws {
        try sql.rows(
            "INSERT INTO dex_audits (request, machine, requested_by, requested_at) VALUES (?, ?, ?, ?)",
            [.text(request), .text(machine), .text(user), .integer(now)])
    }

    /// Archives `reply`: false when it answers no open request of its machine (another
    /// machine's token, a second answer, or one not asked for here).
    func received(_ reply: MachineAnswer, at now: Int64) throws -> Bool {
        var file: String?
        var refusal: String?
        if reply.payload.count > Self.largestFile {
            refusal = "an answer of \(reply.payload.count) bytes (more than 1 MiB) was not kept"
        } else if reply.payload.first == UInt8(ascii: "{") {
            // vendctl's failure response: the machine refused (the command not in its
            // `mqtt.commands`, a bad commId).
            refusal =
                (try? JSONDecoder().decode(Failure.self, from: Data(reply.payload)))?.error?.message ?? "the machine answered without a file"
        } else if let text = String(validating: reply.payload, as: UTF8.self) {
            file = text
        } else {
            refusal = "the answer was not text"
        }
        return try !sql.rows(
            """
            UPDATE dex_audits SET received_at = ?, file = ?, refusal = ? WHERE request = ? AND machine = ? AND received_at IS NULL
            RETURNING request
            """, [.integer(now), .text(file), .text(refusal), .text(reply.request), .text(reply.machine)]
        ).isEmpty
    }

    private struct Failure: Decodable {
        struct Detail: Decodable { let message: String? }
        let error: Detail?
    }

    /// The machine's latest request, and its latest file (which may be an earlier request's).
    func latest(of machine: String) throws -> (request: Audit?, file: Audit?) {
        let request = try audits("WHERE machine = ? ORDER BY requested_at DESC LIMIT 1", [.text(machine)]).first
        let file = try audits("WHERE machine = ? AND file IS NOT NULL ORDER BY received_at DESC LIMIT 1", [.text(machine)]).first
        return (request, file)
    }

    func audit(_ request: String) throws -> Audit? {
        try audits("WHERE request = ?", [.text(request)]).first
    }

    private func audits(_ condition: String, _ parameters: [SQLValue]) throws -> [Audit] {
        try sql.rows("SELECT request, machine, requested_by, requested_at, received_at, file, refusal FROM dex_audits \(condition)", parameters).map {
            Audit(
                request: $0[0] ?? "", machine: $0[1] ?? "", requestedBy: $0[2] ?? "", requestedAt: $0[3].flatMap { Int64($0) } ?? 0,
                receivedAt: $0[4].flatMap { Int64($0) }, file: $0[5], refusal: $0[6])
        }
    }
}
