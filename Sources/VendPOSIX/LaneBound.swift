/// A value only one lane's thread may touch, as swift-nio's `NIOLoopBound` is its event loop's:
/// every access checks the calling thread and stops the process on any other. A state owned by a
/// lane is so owned in the types: another thread reaches it only by handing work to the lane.
public final class LaneBound<Value>: @unchecked Sendable {
    // @unchecked: `value` is touched only on the lane's thread, which every access checks.
    private var value: Value
    private let laneName: String
    private let isOnLane: @Sendable () -> Bool

    public init<Item>(_ value: sending Value, on lane: Lane<Item>) {
        self.value = value
        laneName = lane.name
        isOnLane = { lane.isCurrentThread }
    }

    /// `body` with the value; on the lane's thread only. Not reentrant: one access at a time.
    public func withValue<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        precondition(isOnLane(), "\(Value.self) belongs to \(laneName) and was touched from another thread")
        return try body(&value)
    }
}
