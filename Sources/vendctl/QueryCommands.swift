import ArgumentParser
import VendControl
import VendText

struct Stock: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Items a customer can buy, per product, over every slot that sells it.")

    @OptionGroup var connection: Connection

    func run() throws {
        try reporting {
            try connection.show(.stock, { $0.stock }) { products in
                table(
                    [.left, .left, .right, .right, .left], header: ["product", "id", "available", "capacity", "slots"],
                    rows: products.map { [$0.name, $0.product, "\($0.available)", "\($0.capacity)", $0.slots.joined(separator: " ")] })
            }
        }
    }
}

struct Purchasable: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The slots the credit in the machine can buy from now.")

    @OptionGroup var connection: Connection

    func run() throws {
        try reporting {
            try connection.show(.purchasable, { $0.purchasable }) { report in
                guard !report.slots.isEmpty else { return "credit \(report.creditText) buys nothing" }
                return "credit \(report.creditText) buys from:\n"
                    + table(
                        [.left, .left, .right, .right], header: ["slot", "product", "price", "free"],
                        rows: report.slots.map { [$0.id, $0.productName, $0.priceText, "\($0.available)"] })
            }
        }
    }
}

struct Expired: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Items past their shelf life, per slot.",
        discussion: "An item expires its product's shelf_life_days after it was loaded (see restock --loaded).")

    @OptionGroup var connection: Connection

    @Option(help: ArgumentHelp("The moment to judge at (default: now).", valueName: "date"), transform: parseDate)
    var at: Int64?

    func run() throws {
        try reporting {
            try connection.show(.expired(at: at), { $0.expired }) { report in
                guard !report.slots.isEmpty else { return "nothing has expired at \(dateText(report.at))" }
                return "expired at \(dateText(report.at)):\n"
                    + table(
                        [.left, .left, .right, .left], header: ["slot", "product", "items", "expired since"],
                        rows: report.slots.map { [$0.slot, $0.productName, "\($0.count)", dateText($0.since)] })
            }
        }
    }
}

struct Hot: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "The hot products some slot sells.")

    @OptionGroup var connection: Connection

    func run() throws {
        try reporting {
            try connection.show(.hot, { $0.hot }) { products in
                guard !products.isEmpty else { return "no slot sells a hot product" }
                return table(
                    [.left, .left, .left, .right], header: ["product", "id", "slots", "shelf life"],
                    rows: products.map {
                        [$0.name, $0.id, $0.slots.joined(separator: " "), $0.shelfLifeDays.map { "\($0) days" } ?? "-"]
                    })
            }
        }
    }
}

struct Products: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Every product in its category tree, with the slots that sell it.")

    @OptionGroup var connection: Connection

    func run() throws {
        try reporting {
            try connection.show(.products, { $0.products }) { root in
                var table = TextTable([.left, .left, .left, .left])
                Self.add(root, depth: -1, to: &table)
                return table.render().joined(separator: "\n")
            }
        }
    }

    /// The root has no name: its children start at the left margin.
    private static func add(_ node: CategoryReport, depth: Int, to table: inout TextTable) {
        let indent = String(repeating: "  ", count: max(depth, 0))
        if depth >= 0 { table.add([indent + node.name + "/"]) }
        for product in node.products {
            let marks = ([product.hot ? "hot" : nil] + product.tags.map { Optional($0) }).compactMap { $0 }
            table.add([
                indent + (depth >= 0 ? "  " : "") + product.name, product.id,
                product.slots.isEmpty ? "-" : product.slots.joined(separator: " "), marks.joined(separator: ", "),
            ])
        }
        for child in node.children { add(child, depth: depth + 1, to: &table) }
    }
}
