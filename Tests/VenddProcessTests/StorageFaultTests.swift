import Foundation
import Testing
import VendControl
import VenddTestSupport

/// The state directory on a file system that fills up under vendd (ENOSPC). vendd stops selling
/// and takes no coins, keeps every coin it credited, says so in `vendctl status`, and resumes by
/// itself once a write succeeds. Needs root to mount a small tmpfs: CI runs as root.
/// (EROFS and EIO take the same path — any failed journal or snapshot write — but cannot be
/// caused here: a remount read-only is refused while vendd holds the journal open for writing,
/// and this kernel has no device-mapper to inject I/O errors.)
@Suite(.oneRealProcessTestAtATime) struct StorageFaultTests {
    /// A 2 MiB tmpfs at `<directory>/state`, unmounted at the end.
    final class SmallFileSystem {
        let path: String
        init(at path: String) throws {
            try RootTool.require("StorageFaultTests", to: "mounts a small tmpfs")
            self.path = path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            try RootTool.run("/bin/mount", "-t", "tmpfs", "-o", "size=2m,mode=0750", "tmpfs", path)
        }
        func fill() throws {
            // A filler file that takes every free block: the next journal write gets ENOSPC.
            guard FileManager.default.createFile(atPath: path + "/filler", contents: nil),
                let filler = FileHandle(forWritingAtPath: path + "/filler")
            else {
                throw HarnessError("cannot create \(path)/filler")
            }
            let block = Data(repeating: 0, count: 64 * 1024)
            while (try? filler.write(contentsOf: block)) != nil {}
            try? filler.close()
        }
        func emptyFiller() throws { try FileManager.default.removeItem(atPath: path + "/filler") }
        func unmount() { try? RootTool.run("/bin/umount", "-l", path) }
    }

    @Test func aFullDiskStopsSalesAndTheMachineResumesByItselfWhenThereIsRoomAgain() throws {
        let harness = try DaemonHarness()
        defer { harness.tearDown() }
        let disk = try SmallFileSystem(at: harness.stateDirectory)
        defer { disk.unmount() }
        try harness.start()
        try harness.send(.restock(slot: "all", count: nil))
        try harness.send(.sim(.coin(amount: "500")))

        // Twice: the second fault must be noticed and end like the first.
        for (fault, cause, mend) in [
            ("full", { try disk.fill() }, { try disk.emptyFiller() }),
            ("full again", { try disk.fill() }, { try disk.emptyFiller() }),
        ] as [(String, () throws -> Void, () throws -> Void)] {
            let before = try harness.status()
            try cause()
            // Coins until a journal write fails: on a full tmpfs an append still fits while the
            // journal's last page has room. A coin already in the cash box is credited all the same.
            var credited = 0
            var broken = before
            while broken.state == "in-service", credited < 60 * 50 {
                try harness.send(.sim(.coin(amount: "50")))
                credited += 50
                broken = try harness.status()
            }
            #expect(broken.state == "out-of-order", "\(fault)")
            #expect(broken.stateReason?.contains("cannot be written") == true, "\(fault): \(broken.stateReason ?? "")")
            #expect(broken.stateReason?.contains("resumes by itself") == true, "\(fault)")
            #expect(!broken.acceptingCoins, "\(fault)")
            #expect(broken.books.coinsIn == String(Int(before.books.coinsIn)! + credited), "\(fault)")
            // No sale while the state cannot be written: the selection is refused, no relay moves.
            let refused = try harness.client().send(.sim(.press(slot: "A3")))
            #expect(refused.ok)  // the press happens; the machine refuses it
            let coin = try harness.client().send(.sim(.coin(amount: "50")))
            #expect(!coin.ok, "\(fault): coins are inhibited")

            try mend()
            let back = try harness.waitUntil("back in service after the \(fault) disk was mended", timeout: 5) { $0.state == "in-service" }
            #expect(back.acceptingCoins)
            #expect(back.books.itemsSold == before.books.itemsSold, "\(fault): nothing sold while out of order")
        }

        // Everything credited, also while the disk failed, survives a restart.
        let final = try harness.status()
        #expect(try harness.stop() == 0)
        try harness.start()
        let restored = try harness.status()
        #expect(restored.books.coinsIn == final.books.coinsIn)
        #expect(restored.credit == final.credit)
        #expect(harness.allLogs.contains("the state can be written again"))
        #expect(try harness.stop() == 0)
    }
}
