import Foundation
import VenddTestSupport

extension ProcessRun {
    /// The output with wall-clock times (sales, events) replaced by `<time>`.
    var normalisedOutput: String {
        output.replacingOccurrences(
            of: #"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2})?(\.\d+)?(Z|[+-]\d{2}:?\d{2})?"#,
            with: "<time>", options: .regularExpression)
    }

    /// The output as a JSON object (for `--json`).
    func json() throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any] else {
            throw HarnessError("not a JSON object: \(output)")
        }
        return object
    }
}

extension DaemonHarness {
    @discardableResult
    func vendctl(_ arguments: String...) throws -> ProcessRun {
        try Self.vendctl(["--socket", socketPath] + arguments)
    }

    /// The real vendctl binary, run as a technician would. Local time is UTC so that dates given
    /// with --loaded/--at/--since print the same everywhere.
    static func vendctl(_ arguments: [String]) throws -> ProcessRun {
        try ProcessRun.run(builtProduct("vendctl"), arguments, environment: ["TZ": "UTC"])
    }

    /// Restocks everything as loaded on 2025-03-01 09:00 UTC, then sells `purchases` (slot and the
    /// coins that pay for it) one after another.
    func stockAndSell(_ purchases: [(slot: String, coins: [String])]) throws {
        try requireSuccess(vendctl("restock", "all", "--loaded", "2025-03-01T09:00"))
        for (index, purchase) in purchases.enumerated() {
            for coin in purchase.coins { try requireSuccess(vendctl("sim", "coin", coin)) }
            try requireSuccess(vendctl("sim", "press", purchase.slot))
            _ = try waitUntil("sale \(index + 1)") { $0.books.itemsSold == index + 1 && $0.vendInProgress == nil }
        }
    }

    func requireSuccess(_ run: ProcessRun) throws {
        guard run.status == 0 else { throw HarnessError("vendctl failed (\(run.status)): \(run.errors)") }
    }
}

/// Four sales of three products: cola twice, canned coffee, banana milk.
let sampleSales: [(slot: String, coins: [String])] = [
    ("A4", ["500", "500", "500"]), ("B2", ["500", "500"]), ("A4", ["500", "500", "500"]),
    ("A1", ["500", "500", "100", "100"]),
]
