/// Where a product sits in the category tree, from the root down: beverage → coffee → canned.
public struct CategoryPath: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public let components: [String]

    public init(_ components: [String]) { self.components = components }

    public var description: String { components.joined(separator: " / ") }

    public func hasPrefix(_ other: CategoryPath) -> Bool {
        components.starts(with: other.components)
    }

    public static func < (lhs: CategoryPath, rhs: CategoryPath) -> Bool {
        lhs.components.lexicographicallyPrecedes(rhs.components)
    }

    public init(from decoder: any Decoder) throws {
        components = try decoder.singleValueContainer().decode([String].self)
    }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(components)
    }
}

/// A product the machine sells. Products are data from the configuration, not types, so a
/// technician adds one without a rebuild.
public struct Product: Hashable, Sendable, Codable {
    public let id: ProductID
    public let name: String
    public let category: CategoryPath
    /// Sold hot (a heated coffee column, say): listed by the "hot products" query.
    public let isHot: Bool
    /// Days an item stays sellable after it was loaded; nil when it does not expire.
    public let shelfLifeDays: Int?
    /// Free-form labels ("sugar-free", "vegan"), sorted and unique.
    public let tags: [String]
    /// Whether items past their shelf life still sell; nil: the default, which refuses them in a
    /// perishable slot and sells them elsewhere (see `sellsExpired(in:)`).
    public let expiryPolicy: ExpiryPolicy?
    /// Prices for every slot holding the product, where the slot names none of its own (`prices:`).
    public let priceLines: [PriceLine]

    public init(
        id: ProductID, name: String, category: CategoryPath,
        isHot: Bool = false, shelfLifeDays: Int? = nil, tags: [String] = [], expiryPolicy: ExpiryPolicy? = nil,
        priceLines: [PriceLine] = []
    ) {
        self.id = id
        self.name = name
        self.category = category
        self.isHot = isHot
        self.shelfLifeDays = shelfLifeDays
        self.tags = Array(Set(tags)).sorted()
        self.expiryPolicy = expiryPolicy
        self.priceLines = priceLines
    }

    private enum CodingKeys: String, CodingKey { case id, name, category, isHot, shelfLifeDays, tags, expiryPolicy, priceLines }

    /// Products saved before price lists had none.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(ProductID.self, forKey: .id)
        name = try container.decode(String.self, forKey: .name)
        category = try container.decode(CategoryPath.self, forKey: .category)
        isHot = try container.decode(Bool.self, forKey: .isHot)
        shelfLifeDays = try container.decodeIfPresent(Int.self, forKey: .shelfLifeDays)
        tags = try container.decode([String].self, forKey: .tags)
        expiryPolicy = try container.decodeIfPresent(ExpiryPolicy.self, forKey: .expiryPolicy)
        priceLines = try container.decodeIfPresent([PriceLine].self, forKey: .priceLines) ?? []
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(name, forKey: .name)
        try container.encode(category, forKey: .category)
        try container.encode(isHot, forKey: .isHot)
        try container.encodeIfPresent(shelfLifeDays, forKey: .shelfLifeDays)
        try container.encode(tags, forKey: .tags)
        try container.encodeIfPresent(expiryPolicy, forKey: .expiryPolicy)
        // Written only when used, so that a file without it stays readable by an older vendd.
        if !priceLines.isEmpty { try container.encode(priceLines, forKey: .priceLines) }
    }

    /// Whether an item of this product past its shelf life may still be sold from `slot`: only
    /// when the file says `expired: sell` (a best-before date), or, saying nothing, from a slot
    /// that is not perishable.
    public func sellsExpired(in slot: SlotSetup) -> Bool {
        switch expiryPolicy {
        case .sell: true
        case .refuse: false
        case nil: slot.healthZone == nil
        }
    }
}

/// What happens to items past their shelf life (`expired:` in the file).
public enum ExpiryPolicy: String, Hashable, Sendable, Codable, CaseIterable {
    /// The slot stops selling until a technician unloads them (a use-by date).
    case refuse
    /// They keep selling (a best-before date); `vendctl expired` still lists them.
    case sell
}

/// The products the machine knows, by id.
public struct Catalog: Hashable, Sendable, Codable {
    public let products: [ProductID: Product]

    public init(_ products: [Product]) {
        self.products = Dictionary(products.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    }

    public subscript(id: ProductID) -> Product? { products[id] }

    /// Products sorted by id, for stable listings.
    public var sortedProducts: [Product] { products.values.sorted { $0.id < $1.id } }

    public var hotProducts: [Product] { sortedProducts.filter(\.isHot) }

    /// Products whose category is `path` or lies below it.
    public func products(under path: CategoryPath) -> [Product] {
        sortedProducts.filter { $0.category.hasPrefix(path) }
    }

    /// The category tree built from every product's path; the root has an empty name.
    public var categoryTree: CategoryNode {
        var root = CategoryNode(name: "", path: CategoryPath([]))
        for product in sortedProducts {
            root.insert(product.id, at: product.category.components[...])
        }
        return root
    }
}

/// One category and what is under it, children sorted by name.
public struct CategoryNode: Hashable, Sendable, Codable {
    public let name: String
    public let path: CategoryPath
    public private(set) var children: [CategoryNode] = []
    public private(set) var products: [ProductID] = []

    init(name: String, path: CategoryPath) {
        self.name = name
        self.path = path
    }

    fileprivate mutating func insert(_ product: ProductID, at remaining: ArraySlice<String>) {
        guard let next = remaining.first else {
            products.append(product)
            return
        }
        let index: Int
        if let existing = children.firstIndex(where: { $0.name == next }) {
            index = existing
        } else {
            children.append(CategoryNode(name: next, path: CategoryPath(path.components + [next])))
            children.sort { $0.name < $1.name }
            index = children.firstIndex { $0.name == next }!
        }
        children[index].insert(product, at: remaining.dropFirst())
    }
}
