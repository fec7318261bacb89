import CVendSystem

#if canImport(Glibc)
    import Glibc
#endif

/// A thread of its own for a loop that blocks in the kernel (poll, read), named so that
/// `ps -L` and a debugger show what it is. Plain pthreads: no Foundation.
public enum PosixThread {
    private final class Body {
        let name: String
        let run: () -> Void
        init(name: String, run: @escaping () -> Void) {
            self.name = name
            self.run = run
        }
    }

    /// Starts `body` on a new detached thread. The name is cut to the 15 bytes Linux keeps. With
    /// `neverWaits`, the thread is one that must never wait for another (see `markNeverWaits`).
    /// With `realTimePriority`, it is scheduled SCHED_FIFO at that priority, so that it runs as
    /// soon as it wakes instead of waiting for a busy core's time slice; the error when the
    /// system refuses (no CAP_SYS_NICE, RLIMIT_RTPRIO below it, systemd's RestrictRealtime=):
    /// the thread then runs as any other.
    @discardableResult
    public static func start(
        name: String, neverWaits: Bool = false, realTimePriority: Int32? = nil, _ body: @escaping @Sendable () -> Void
    ) -> SystemError? {
        let run: () -> Void = {
            if neverWaits { markNeverWaits(name) }
            body()
        }
        let context = Unmanaged.passRetained(Body(name: name, run: run)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(
            &thread, nil,
            { context in
                let body = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
                cvendsystem_name_this_thread(String(body.name.utf8.prefix(15))!)
                PosixThread.blockProcessSignals()
                body.run()
                return nil
            }, context)
        precondition(created == 0, "cannot start thread \(name): \(SystemError.text(created))")
        defer { pthread_detach(thread) }
        guard let realTimePriority else { return nil }
        var parameters = sched_param(sched_priority: realTimePriority)
        let scheduled = pthread_setschedparam(thread, SCHED_FIFO, &parameters)
        return scheduled == 0 ? nil : SystemError(call: "pthread_setschedparam(SCHED_FIFO, \(realTimePriority))", path: nil, errno: scheduled)
    }

    /// Where a thread that must never wait keeps its name (thread-specific data).
    private static let neverWaitsKey: pthread_key_t = {
        var key = pthread_key_t()
        let created = pthread_key_create(&key, nil)
        precondition(created == 0, "pthread_key_create: \(SystemError.text(created))")
        return key
    }()

    /// Marks the calling thread as one that must never wait for another thread — a lane whose
    /// work stalls while it waits: the machine's (it would wait for itself), the relays' (a pulse
    /// would stretch), the log's, the GPIO reader's. Whatever would make a thread wait asks
    /// `neverWaitingName` first and refuses. The name is kept for the thread's life.
    public static func markNeverWaits(_ name: String) {
        pthread_setspecific(neverWaitsKey, UnsafeRawPointer(strdup(name)))
    }

    /// The calling thread's name if it is marked as never waiting; nil for any other thread.
    public static var neverWaitingName: String? {
        pthread_getspecific(neverWaitsKey).map { String(cString: $0.assumingMemoryBound(to: CChar.self)) }
    }

    /// The signals a process is told things with (stop, reload) are not this thread's: the kernel
    /// hands a process's signal to any thread that does not block it, and one that landed here
    /// while the daemon ignores it for its dispatch source would be lost — a SIGTERM that never
    /// stops vendd. Faults (SIGSEGV…) stay with the thread that causes them.
    static func blockProcessSignals() {
        var blocked = sigset_t()
        sigemptyset(&blocked)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2] { sigaddset(&blocked, signal) }
        pthread_sigmask(SIG_BLOCK, &blocked, nil)
    }
}
