import VendText

#if canImport(Glibc)
    import Glibc
#endif

/// What the SVG charts share: the face, the palette, numbers printed as printf prints them,
/// text escaped for SVG, and the width a text takes.
enum SVG {
    static let fontFamily = "DejaVu Sans, Verdana, NanumGothic, Noto Sans CJK KR, sans-serif"

    static let palette = [
        "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
        "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
    ]

    /// Text for SVG content and quoted attribute values.
    static func escape(_ text: String) -> String {
        text.replacingScalars(["&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&apos;"])
    }

    /// A coordinate: two decimals.
    static func n(_ value: Double) -> String { fixed(value, digits: 2) }

    /// `value` with `digits` decimals, rounded as printf's `%.Nf` rounds (which the charts
    /// have always printed).
    static func fixed(_ value: Double, digits: Int) -> String {
        withVaList([value]) { arguments in
            var buffer = [CChar](repeating: 0, count: 64)
            let length = Int(vsnprintf(&buffer, buffer.count, "%.\(digits)f", arguments))
            precondition(length < buffer.count, "\(value) is far outside any chart")
            return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    /// A generous estimate for a sans-serif face: wide (CJK) characters a full em, others 0.62 em.
    static func estimatedWidth(_ text: some StringProtocol, fontSize: Double) -> Double {
        text.unicodeScalars.reduce(0) { width, scalar in
            width + fontSize
                * ((0x1100...0x115F).contains(scalar.value) || (0x2E80...0xD7A3).contains(scalar.value)
                    ? 1.0 : 0.62)
        }
    }

    /// `text` as it fits in `width`: whole, or cut with an ellipsis.
    static func fitted(_ text: String, fontSize: Double, width: Double) -> String {
        guard estimatedWidth(text, fontSize: fontSize) > width else { return text }
        var cut = Substring(text)
        while !cut.isEmpty, estimatedWidth(cut.trimmingSuffixSpaces + "…", fontSize: fontSize) > width { cut = cut.dropLast() }
        return cut.trimmingSuffixSpaces + "…"
    }

    /// The opening tag of a chart that scales to its container's width.
    static func open(width: Double, height: Double, label: String) -> String {
        "<svg xmlns='http://www.w3.org/2000/svg' width='\(n(width))' height='\(n(height))' viewBox='0 0 \(n(width)) \(n(height))' role='img' aria-label='\(escape(label))' font-family='\(fontFamily)'>"
    }

    /// A small chart's first lines: the opening tag, a white ground and the title top left.
    static func header(width: Double, height: Double, title: String) -> [String] {
        [
            open(width: width, height: height, label: title),
            "<rect width='100%' height='100%' fill='#ffffff'/>",
            "<text x='12' y='24' font-size='16' font-weight='bold' fill='#222222'>\(escape(title))</text>",
        ]
    }
}

extension Substring {
    /// Without the spaces it ends with ("Banana " + "…" reads worse than "Banana…").
    fileprivate var trimmingSuffixSpaces: String {
        var text = self
        while text.last == " " { text = text.dropLast() }
        return String(text)
    }
}
