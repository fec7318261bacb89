import ArgumentParser
import VendControl
import VendPOSIX
import VendReports

#if canImport(Glibc)
    import Glibc
#endif

struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the machine's events as they happen, until interrupted.",
        discussion: "Exits 69 with \"vendd stopped\" on stderr when vendd stops (or restarts) and closes the stream.")

    @OptionGroup var connection: Connection

    func run() throws {
        Self.unblockInterrupts()
        try reporting {
            let client = try connection.client()
            do {
                try client.watch { event in
                    let line =
                        connection.json
                        ? jsonLine(event)
                        : "\(DateText.format(event.at, seconds: true))  \(event.text)"
                    // Written straight away, unbuffered, so a pipe or `tee` sees each event as it happens.
                    StandardOutput.write(line + "\n")
                    return true
                }
            } catch {
                throw Failure("\(error)", code: ExitStatus.unavailable)
            }
            // The stream ends only when vendd hangs up: it stopped (or restarts).
            throw Failure(
                "vendd stopped: it closed the event stream on \(connection.socket) (watch again once it runs: systemctl status vendd)",
                code: ExitStatus.unavailable)
        }
    }

    /// watch ends only by a signal, and a blocked signal mask is inherited: a parent that blocks
    /// SIGINT and SIGTERM (some supervisors and test runners do) would make it unstoppable.
    private static func unblockInterrupts() {
        var signals = sigset_t()
        sigemptyset(&signals)
        for signal in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&signals, signal) }
        pthread_sigmask(SIG_UNBLOCK, &signals, nil)
    }
}
