import Foundation
import VenddTestSupport

/// What a suite needs root for — mounting a small file system under vendd's state directory,
/// freezing it. CI runs as root; elsewhere the suite fails saying how to run it.
enum RootTool {
    static func require(_ suite: String, to what: String) throws {
        guard getuid() == 0 else {
            throw HarnessError("\(suite) \(what) and needs root (CI runs as root); run `sudo swift test --filter \(suite)`")
        }
    }

    /// Runs a system tool (`/bin/mount`, `/usr/sbin/fsfreeze`…) to its end; throws with what it
    /// said when it fails.
    static func run(_ arguments: String...) throws {
        let run = try ProcessRun.run(arguments[0], Array(arguments.dropFirst()))
        guard run.status == 0 else {
            throw HarnessError("\(arguments.joined(separator: " ")) failed (\(run.status)): \(run.errors)")
        }
    }
}
