import Foundation
import Testing
import VendControl
import VendPOSIX
import VenddTestSupport

/// systemd's watchdog, end to end: vendd with `NOTIFY_SOCKET` and `WATCHDOG_USEC` set as systemd
/// sets them, its state directory on an ext4 file system that the test freezes (`fsfreeze`), so
/// the machine's lane is stuck in a journal write as on a hung SD card. The timers thread goes on;
/// WATCHDOG=1 must stop (systemd would kill and restart vendd) and resume after the thaw. Needs
/// root for the loop mount and the freeze: CI runs as root.
@Suite(.oneRealProcessTestAtATime) struct WatchdogProcessTests {
    /// A 16 MiB ext4 image loop-mounted at `path`; frozen and thawed with fsfreeze(8).
    final class FreezableFileSystem {
        let path: String
        let image: String

        init(at path: String, image: String) throws {
            guard getuid() == 0 else {
                throw HarnessError(
                    "WatchdogProcessTests loop-mounts an ext4 image and needs root (CI runs as root); run `sudo swift test --filter WatchdogProcessTests`"
                )
            }
            self.path = path
            self.image = image
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            try Self.run("/usr/bin/truncate", "-s", "16M", image)
            try Self.run("/usr/sbin/mkfs.ext4", "-q", image)
            try Self.run("/bin/mount", "-o", "loop", image, path)
            try Self.run("/bin/chmod", "0750", path)
        }

        func freeze() throws { try Self.run("/usr/sbin/fsfreeze", "-f", path) }
        /// Thawing a file system that is not frozen fails; that is fine.
        func thaw() { try? Self.run("/usr/sbin/fsfreeze", "-u", path) }
        func unmount() { try? Self.run("/bin/umount", "-l", path) }

        static func run(_ arguments: String...) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: arguments[0])
            process.arguments = Array(arguments.dropFirst())
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw HarnessError("\(arguments.joined(separator: " ")) failed (\(process.terminationStatus))")
            }
        }
    }

    /// systemd's end of `$NOTIFY_SOCKET`: a datagram socket in the test's directory.
    final class NotifySocket {
        let path: String
        private let descriptor: Int32

        init(path: String) throws {
            self.path = path
            descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
            let bound = try UnixSocketAddress(path: path).withSocketAddress { bind(descriptor, $0, $1) }
            guard bound == 0 else { throw HarnessError("bind \(path): errno \(errno)") }
        }

        deinit { close(descriptor) }

        /// The WATCHDOG=1 pings received within `duration` (READY, STATUS… are left out).
        func pings(within duration: Duration) -> Int {
            let deadline = ContinuousClock.now + duration
            var pings = 0
            var buffer = [UInt8](repeating: 0, count: 4_096)
            while ContinuousClock.now < deadline {
                var descriptors = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
                let left = deadline - ContinuousClock.now
                guard poll(&descriptors, 1, Int32(max(1, left.components.seconds * 1_000 + left.components.attoseconds / 1_000_000_000_000_000))) > 0
                else { continue }
                let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if count > 0, String(decoding: buffer[..<count], as: UTF8.self) == "WATCHDOG=1" { pings += 1 }
            }
            return pings
        }
    }

    @Test func aMachineLaneStuckInAJournalWriteStopsTheWatchdog() throws {
        let harness = try DaemonHarness()
        defer { harness.tearDown() }
        let disk = try FreezableFileSystem(at: harness.stateDirectory, image: harness.directory.path + "/state.img")
        defer { disk.unmount() }
        defer { disk.thaw() }  // first of all: a process in a frozen write cannot even be killed
        let systemd = try NotifySocket(path: harness.directory.path + "/notify.sock")
        // WatchdogSec=2s: a ping every second.
        try harness.start(environment: ["NOTIFY_SOCKET": systemd.path, "WATCHDOG_USEC": "2000000"])
        #expect(systemd.pings(within: .seconds(4)) >= 2, "a working vendd pings every second")

        try disk.freeze()
        // The restock's journal write blocks the machine's lane, and with it this request.
        let answered = DispatchSemaphore(value: 0)
        let restock = Thread {
            _ = try? harness.client().send(.restock(slot: "all", count: nil))
            answered.signal()
        }
        restock.start()
        _ = systemd.pings(within: .seconds(2))  // the lane's last tick grows older than the interval
        let whileFrozen = systemd.pings(within: .seconds(4))
        #expect(whileFrozen == 0, "WATCHDOG=1 sent \(whileFrozen)× in 4 s while the machine's lane was stuck in a journal write")
        #expect(harness.log.contains("the systemd watchdog is no longer fed"))

        disk.thaw()
        #expect(answered.wait(timeout: .now() + 10) == .success, "the restock is answered after the thaw")
        #expect(systemd.pings(within: .seconds(3)) >= 1, "the pings resume with the lane")
        #expect(try harness.status().totalStock > 0)
        #expect(try harness.stop() == 0)
    }
}
