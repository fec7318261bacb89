/// The host's side of the event counter of `read buffered credit or error codes` (Part 2 §3.27).
///
/// The device counts events 1…255, then 1 again; 0 only after power-up or reset. The host keeps a
/// `sequence` that only grows, with `sequence ≡ counter (mod 255)`: the event at counter `c` in
/// lap `L` is `L × 255 + c`. The sequence alone, stored durably, therefore says which counter the
/// host last processed, and a coin's sequence is its identity for exactly-once crediting.
public struct EventCursor: Sendable, Equatable {
    /// The device shows five events, newest first; older ones are gone.
    public static let bufferDepth = 5

    /// The sequence of the last event processed (0: none yet, counter 0).
    public private(set) var sequence: UInt64
    /// The counter the device showed last. Kept apart from `sequence` because after a reset the
    /// device shows 0 while the sequence sits at a lap boundary (≡ 255).
    public private(set) var counter: UInt8

    /// Resumes after `sequence` (from durable state).
    public init(sequence: UInt64) {
        self.sequence = sequence
        counter = sequence == 0 ? 0 : UInt8((sequence - 1) % 255 + 1)
    }

    /// How many events happened going from counter `last` to `current` (both non-zero, or `last`
    /// 0 after a reset): the spec's examples are 23→23: 0, 102→104: 2, 255→1: 1, 253→3: 5.
    public static func newEvents(from last: UInt8, to current: UInt8) -> Int {
        if last == 0 { return Int(current) }
        return (Int(current) - Int(last) + 255) % 255
    }

    public enum Advance: Sendable, Equatable {
        case none
        /// New events: the newest has sequence `newest`; the buffer holds the
        /// `min(count, bufferDepth)` newest of them; `lost` more are gone for good.
        case events(count: Int, newest: UInt64, lost: Int)
        /// The counter went back to 0: the device lost power or was reset. Events between the
        /// last poll and the reset are unknown; the next event starts a new lap.
        case reset(lapStart: UInt64)
    }

    /// Moves the cursor to the device's `current` counter and says what that means.
    public mutating func advance(to current: UInt8) -> Advance {
        if current == 0 {
            guard counter != 0 else { return .none }
            // Round up to the start of the next lap: counter 1 then continues the sequence.
            sequence = (sequence + 254) / 255 * 255
            counter = 0
            return .reset(lapStart: sequence)
        }
        let count = Self.newEvents(from: counter, to: current)
        guard count > 0 else { return .none }
        sequence += UInt64(count)
        counter = current
        return .events(count: count, newest: sequence, lost: max(0, count - Self.bufferDepth))
    }
}
