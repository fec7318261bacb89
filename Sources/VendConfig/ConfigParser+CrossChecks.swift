import VendSettings
import VendingCore

/// Rules that span sections: they run after every section was read, on what was valid.
extension ConfigParser {
    /// A line serving two purposes would make a button press fire a relay, or two slots share one.
    /// The exceptions are a drop sensor across the delivery chute and a motor matrix's home
    /// switch, which every slot may share: only one vend is ever in flight, so either is
    /// unambiguous. A line is one offset on one chip (`defaultChip` for a line naming none).
    func checkLinesUsedOnce(defaultChip: String?) {
        var firstUse: [String: LineUse] = [:]
        for use in lineUses.uses {
            let key = "\(use.chip ?? defaultChip ?? "")/\(use.line)"
            if let first = firstUse[key], first.isShareable, first.purpose.isSameKind(as: use.purpose) {
                if first.inputSettings != use.inputSettings {
                    sink.report(
                        "the shared \(use.purpose.kindName) on line \(use.line) needs the same active_low, bias and debounce_ms as at \(first.origin.path) (line \(first.origin.location.line))",
                        at: use.origin.location, path: use.origin.path)
                }
            } else if let first = firstUse[key] {
                sink.report(
                    "line \(use.line) is already the \(first.purpose) (\(first.origin.path) at line \(first.origin.location.line)); each GPIO line can serve one purpose",
                    at: use.origin.location, path: use.origin.path)
            } else {
                firstUse[key] = use
            }
        }
    }
}

extension LineUse.Purpose {
    /// Drop sensors are shared with drop sensors, home switches with home switches.
    fileprivate func isSameKind(as other: Self) -> Bool {
        switch (self, other) {
        case (.dropSensor, .dropSensor), (.home, .home): true
        default: false
        }
    }

    fileprivate var kindName: String {
        if case .home = self { "home switch" } else { "drop sensor" }
    }
}
