import VendingCore

/// A zone's recent temperatures for `vendctl temps`: one sample per interval (a minute) with the
/// lowest, highest and last good reading in it and how many reads failed, the newest day kept.
/// In memory only: what a food-safety decision needs is journaled (the lock and the incidents
/// with their times and worst temperature); a history written to the state's flash once a minute
/// would cost writes for a picture a technician looks at on the spot. A restart starts it afresh.
public struct TemperatureHistory: Sendable {
    public struct Sample: Hashable, Sendable {
        /// The start of the interval.
        public let start: Instant
        public fileprivate(set) var lowest: Temperature?
        public fileprivate(set) var highest: Temperature?
        public fileprivate(set) var last: Temperature?
        /// Reads in the interval that gave no temperature.
        public fileprivate(set) var faults: Int
    }

    public let intervalMilliseconds: Int64
    public let capacity: Int
    /// Oldest first; at most `capacity`.
    public private(set) var samples: [Sample] = []

    /// A day of minutes by default.
    public init(intervalMilliseconds: Int64 = 60_000, capacity: Int = 24 * 60) {
        precondition(intervalMilliseconds > 0 && capacity > 0, "a history needs an interval and room")
        self.intervalMilliseconds = intervalMilliseconds
        self.capacity = capacity
    }

    public mutating func record(_ reading: Result<Temperature, SensorFault>, at now: Instant) {
        let milliseconds = intervalMilliseconds, time = now.millisecondsSinceEpoch
        let start = Instant(millisecondsSinceEpoch: time - ((time % milliseconds) + milliseconds) % milliseconds)
        // A clock set back lands in an earlier interval: it is a new sample all the same.
        if samples.last?.start != start {
            samples.append(Sample(start: start, lowest: nil, highest: nil, last: nil, faults: 0))
            if samples.count > capacity { samples.removeFirst(samples.count - capacity) }
        }
        switch reading {
        case .success(let value):
            samples[samples.count - 1].lowest = min(samples[samples.count - 1].lowest ?? value, value)
            samples[samples.count - 1].highest = max(samples[samples.count - 1].highest ?? value, value)
            samples[samples.count - 1].last = value
        case .failure: samples[samples.count - 1].faults += 1
        }
    }

    /// The samples that began at or after `since`.
    public func samples(since: Instant) -> ArraySlice<Sample> {
        samples[(samples.firstIndex { $0.start >= since } ?? samples.endIndex)...]
    }
}
