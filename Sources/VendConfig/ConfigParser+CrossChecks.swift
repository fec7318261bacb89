import VendSettings
import VendingCore

/// Rules that span sections: they run after every section was read, on what was valid.
extension ConfigParser {
    /// A line serving two purposes would make a button press fire a relay, or two slots share one.
    /// The one exception is a drop sensor across the delivery chute, which every slot may share:
    /// only one vend is ever in flight, so a drop on it is unambiguous.
    func checkLinesUsedOnce() {
        var firstUse: [LineReference: LineUse] = [:]
        for use in lineUses.uses {
            if let first = firstUse[use.line], first.isDropSensor, use.isDropSensor {
                if first.inputSettings != use.inputSettings {
                    sink.report(
                        "the shared drop sensor on line \(use.line) needs the same active_low, bias and debounce_ms as at \(first.origin.path) (line \(first.origin.location.line))",
                        at: use.origin.location, path: use.origin.path)
                }
            } else if let first = firstUse[use.line] {
                sink.report(
                    "line \(use.line) is already the \(first.purpose) (\(first.origin.path) at line \(first.origin.location.line)); each GPIO line can serve one purpose",
                    at: use.origin.location, path: use.origin.path)
            } else {
                firstUse[use.line] = use
            }
        }
    }
}
