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
            try RootTool.require("WatchdogProcessTests", to: "loop-mounts an ext4 image")
            self.path = path
            self.image = image
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            try RootTool.run("/usr/bin/truncate", "-s", "16M", image)
            try RootTool.run("/usr/sbin/mkfs.ext4", "-q", image)
            try RootTool.run("/bin/mount", "-o", "loop", image, path)
            try RootTool.run("/bin/chmod", "0750", path)
        }

        func freeze() throws { try RootTool.run("/usr/sbin/fsfreeze", "-f", path) }
        /// Thawing a file system that is not frozen fails; that is fine.
        func thaw() { try? RootTool.run("/usr/sbin/fsfreeze", "-u", path) }
        func unmount() { try? RootTool.run("/bin/umount", "-l", path) }
    }

    @Test func aMachineLaneStuckInAJournalWriteStopsTheWatchdog() throws {
        let harness = try DaemonHarness()
        defer { harness.tearDown() }
        let disk = try FreezableFileSystem(at: harness.stateDirectory, image: harness.directory.path + "/state.img")
        defer { disk.unmount() }
        defer { disk.thaw() }  // first of all: a process in a frozen write cannot even be killed
        let systemd = try DatagramReceiver(in: harness.directory, name: "notify.sock")
        // WatchdogSec=2s: a ping every second.
        try harness.start(environment: ["NOTIFY_SOCKET": systemd.path, "WATCHDOG_USEC": "2000000"])
        #expect(systemd.count("WATCHDOG=1", within: .seconds(4)) >= 2, "a working vendd pings every second")

        try disk.freeze()
        // The restock's journal write blocks the machine's lane, and with it this request.
        let answered = DispatchSemaphore(value: 0)
        let restock = Thread {
            _ = try? harness.client().send(.restock(slot: "all", count: nil))
            answered.signal()
        }
        restock.start()
        _ = systemd.count("WATCHDOG=1", within: .seconds(2))  // the lane's last tick grows older than the interval
        let whileFrozen = systemd.count("WATCHDOG=1", within: .seconds(4))
        #expect(whileFrozen == 0, "WATCHDOG=1 sent \(whileFrozen)× in 4 s while the machine's lane was stuck in a journal write")
        #expect(harness.log.contains("the systemd watchdog is no longer fed"))

        disk.thaw()
        #expect(answered.wait(timeout: .now() + 10) == .success, "the restock is answered after the thaw")
        #expect(systemd.count("WATCHDOG=1", within: .seconds(3)) >= 1, "the pings resume with the lane")
        #expect(try harness.status().totalStock > 0)
        #expect(try harness.stop() == 0)
    }
}
