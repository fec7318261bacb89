extension String {
    /// The text with each scalar that `replacements` names replaced by its text: the one loop
    /// behind the escapers for SVG, YAML and JSON-in-HTML.
    public func replacingScalars(_ replacements: [Unicode.Scalar: String]) -> String {
        var replaced = ""
        for scalar in unicodeScalars {
            if let replacement = replacements[scalar] {
                replaced += replacement
            } else {
                replaced.unicodeScalars.append(scalar)
            }
        }
        return replaced
    }
}
