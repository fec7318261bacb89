/// "Stable for N": a change counts only once the line has stayed at its new level for the whole
/// debounce period. Unlike a lockout after the first edge, a bounce can neither fire twice nor
/// swallow a real release. Pure state: the caller feeds edges and asks what settled by when.
public struct Debouncer: Sendable {
    public typealias Instant = ContinuousClock.Instant

    /// Per line: lines may have their own debounce period.
    private let periods: [Duration]
    /// The level last reported per line.
    private var stable: [Bool]
    /// The latest raw level per line, and when it was seen.
    private var latest: [(level: Bool, since: Instant)?]

    public init(initialLevels: [Bool], periods: [Duration]) {
        precondition(initialLevels.count == periods.count)
        self.periods = periods
        stable = initialLevels
        latest = Array(repeating: nil, count: initialLevels.count)
    }

    /// Records an edge. Returns the instant by which to call `settle`.
    public mutating func edge(line: Int, isActive: Bool, at instant: Instant) -> Instant {
        latest[line] = (isActive, instant)
        return instant + periods[line]
    }

    /// The lines whose new level has been stable for the period at `now`, with that level and
    /// the instant it became stable (its last edge plus the period: when the line really settled,
    /// however late this is asked).
    ///
    /// `levels`, the lines' levels read now, is checked against each edge due: an edge stream can
    /// lose the last edge of a bounce (libgpiod v1's kernel interface labels an edge with the
    /// level its interrupt thread reads, and the simulated chip and I2C expanders drop an edge
    /// that comes while that thread runs). A line that reads otherwise than its last edge said is
    /// judged again from `now`: its level must then stay for a whole period, and `recheckAt`
    /// says when to call again.
    public mutating func settle(
        at now: Instant, levels: [Bool]? = nil
    ) -> (changes: [(line: Int, isActive: Bool, at: Instant)], recheckAt: Instant?) {
        var changes: [(Int, Bool, Instant)] = []
        var recheckAt: Instant?
        for line in latest.indices {
            guard let pending = latest[line], now >= pending.since + periods[line] else { continue }
            if let level = levels?[line], level != pending.level {
                latest[line] = (level, now)
                let again = now + periods[line]
                recheckAt = recheckAt.map { min($0, again) } ?? again
                continue
            }
            latest[line] = nil
            if pending.level != stable[line] {
                stable[line] = pending.level
                changes.append((line, pending.level, pending.since + periods[line]))
            }
        }
        return (changes, recheckAt)
    }

    /// The earliest instant at which a pending edge settles, if any is pending.
    public var nextDeadline: Instant? {
        latest.indices.compactMap { line in latest[line].map { $0.since + periods[line] } }.min()
    }
}
