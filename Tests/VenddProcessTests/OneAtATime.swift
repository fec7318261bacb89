import Testing

/// The tests in this target run real vendd processes in real time (answers timed, SIGKILLs at
/// random instants, thousands of connections): one at a time, so that none takes the two cores
/// the others are timing. The unit tests of the other targets still run beside them, in parallel.
struct OneRealProcessTestAtATime: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        // A suite's own scope passes straight through; each test case takes the gate.
        guard testCase != nil else { return try await function() }
        await Gate.shared.enter()
        do {
            try await function()
        } catch {
            await Gate.shared.leave()
            throw error
        }
        await Gate.shared.leave()
    }

    private actor Gate {
        static let shared = Gate()
        private var occupied = false
        private var waiting: [CheckedContinuation<Void, Never>] = []

        func enter() async {
            guard occupied else {
                occupied = true
                return
            }
            await withCheckedContinuation { waiting.append($0) }
        }

        /// Hands the gate to the next test waiting, if any.
        func leave() {
            if waiting.isEmpty { occupied = false } else { waiting.removeFirst().resume() }
        }
    }
}

extension Trait where Self == OneRealProcessTestAtATime {
    static var oneRealProcessTestAtATime: Self { Self() }
}
