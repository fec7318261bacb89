/// "'a', 'b' or 'c'" for messages listing what is allowed.
func listing(_ items: [String], conjunction: String = "or") -> String {
    let quoted = items.map { "'\($0)'" }
    guard quoted.count > 1 else { return quoted.first ?? "" }
    return quoted.dropLast().joined(separator: ", ") + " \(conjunction) " + quoted.last!
}
