#if canImport(Glibc)
    import Glibc
#endif

/// Termination signals for a process whose main thread blocks in the kernel (poll) instead of
/// running a dispatch queue: there, a DispatchSource's signal handler never ran (vendstore
/// ignored SIGTERM for good). `block` blocks the signals in the calling thread, so in every
/// thread started after it (libmosquitto's too); they stay pending until `deliver` starts a
/// thread that takes them with sigwait(3). Block first, before any other thread starts: a thread
/// started earlier could be handed the signal and die of it.
public struct ProcessSignals: Sendable {
    private let numbers: [Int32]

    public static func block(_ numbers: [Int32]) -> ProcessSignals {
        var set = Self.set(of: numbers)
        pthread_sigmask(SIG_BLOCK, &set, nil)
        return ProcessSignals(numbers: numbers)
    }

    /// From now on, `handler` gets each signal (and any that came since `block`), on a thread of
    /// its own.
    public func deliver(to handler: @escaping @Sendable (Int32) -> Void) {
        let numbers = numbers
        PosixThread.start(name: "signals") {
            var set = Self.set(of: numbers)
            while true {
                var number: Int32 = 0
                if sigwait(&set, &number) == 0 { handler(number) }
            }
        }
    }

    private static func set(of numbers: [Int32]) -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for number in numbers { sigaddset(&set, number) }
        return set
    }
}
