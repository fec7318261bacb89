import CGPIOShim
import FoundationEssentials
import Glibc
import Synchronization
import VendHardware
import VendPOSIX
import VendSettings

/// Relay lines, requested inactive. Setting and releasing take turns on one lock (libgpiod
/// objects are for one thread at a time); after release every set fails instead of touching a
/// line that is no longer ours.
final class LibgpiodOutputGroup: GPIOOutputGroup, @unchecked Sendable {
    private let request: Mutex<OpaquePointer?>
    private let lines: [OutputLineConfig]

    init(request: sending OpaquePointer, lines: [OutputLineConfig]) {
        self.request = Mutex(request)
        self.lines = lines
    }

    func set(_ index: Int, active: Bool) throws(GPIOError) {
        let failure = request.withLock { request -> Int32? in
            guard let request else { return EBADF }
            return vgpio_set_value(request, index, active ? 1 : 0) == 0 ? nil : errno
        }
        if let failure {
            let line = lines[index]
            throw .ioFailure(
                "cannot set line \(line.line) \(active ? "active" : "inactive"): \(SystemError.text(failure))",
                origin: line.origin)
        }
    }

    func release() {
        request.withLock { request in
            vgpio_release(request)
            request = nil
        }
    }
}
