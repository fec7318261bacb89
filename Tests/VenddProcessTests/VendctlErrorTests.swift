import Foundation
import Testing
import VenddTestSupport

/// What a technician sees when something is wrong: the message and the exit status.
@Suite(.oneRealProcessTestAtATime) struct VendctlErrorTests {
    @Test func aDaemonThatIsNotRunningExits69() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let run = try DaemonHarness.vendctl(["--socket", directory.path + "/none.sock", "status"])
        #expect(run.status == 69)
        #expect(
            run.errors
                == "vendctl: vendd is not running: nothing listens at \(directory.path)/none.sock (start it with `systemctl start vendd`, or pass --socket)\n"
        )
        #expect(run.output == "")
    }

    @Test func anUnknownSlotExits64AndListsTheSlots() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        let slots = "A1, A2, A3, A4, A5, B1, B2, B3, B4, B5"
        let restock = try daemon.vendctl("restock", "Z9")
        #expect(restock.status == 64)
        #expect(restock.errors == "vendctl: no slot Z9 (slots: \(slots), or all)\n")
        for arguments in [["price", "Z9", "100"], ["sim", "press", "Z9"], ["sim", "drop", "Z9", "ok"]] {
            let run = try DaemonHarness.vendctl(["--socket", daemon.socketPath] + arguments)
            #expect(run.status == 64, "\(arguments)")
            #expect(run.errors == "vendctl: no slot Z9 (slots: \(slots))\n", "\(arguments)")
        }
        #expect(try daemon.status().totalStock == 0)
    }

    @Test(arguments: [
        ["expired", "--at", "2025-02-30"], ["history", "--since", "yesterday"],
        ["report", "--since", "01/03/2025"], ["restock", "A1", "--loaded", "2025-03-01T9:00"],
    ])
    func aBadDateExits64AndNamesTheAcceptedForms(_ arguments: [String]) throws {
        let run = try DaemonHarness.vendctl(["--socket", "/nonexistent.sock"] + arguments)
        #expect(run.status == 64)
        #expect(
            run.errors.contains("is not a date; use YYYY-MM-DD, YYYY-MM-DDTHH:MM or YYYY-MM-DD HH:MM[:SS], local time unless followed by Z or ±HH:MM")
        )
    }

    @Test func otherWrongArgumentsExit64() throws {
        for arguments in [
            ["service", "maybe"], ["history", "--limit", "0"], ["audit", "--dex", "/tmp/x.dex", "--comm-id", "VDD1"],
            ["frobnicate"], ["sim", "drop", "A1", "perhaps"],
        ] {
            let run = try DaemonHarness.vendctl(["--socket", "/nonexistent.sock"] + arguments)
            #expect(run.status == 64, "\(arguments): \(run.errors)")
        }
    }

    @Test func anUnwritableOutputFileExits73() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        let run = try daemon.vendctl("report", "--svg", daemon.directory.path + "/no/such/dir/sales.svg")
        #expect(run.status == 73)
        #expect(run.errors.hasPrefix("vendctl: cannot write \(daemon.directory.path)/no/such/dir/sales.svg: "))
    }

    @Test func inServiceModeCoinsAreRefusedWithExit1() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        try daemon.requireSuccess(daemon.vendctl("restock", "all"))
        try daemon.requireSuccess(daemon.vendctl("service", "on"))
        let coin = try daemon.vendctl("sim", "coin", "500")
        #expect(coin.status == 1)
        #expect(coin.errors.hasPrefix("vendctl: coin returned: "))
        #expect(try daemon.status().credit == "0")
    }

    @Test func everyCommandHasHelp() throws {
        let commands = [
            "status", "stock", "purchasable", "expired", "hot", "products", "restock", "price", "service",
            "history", "coins", "cash", "cash fill", "cash payout-test", "report", "watch", "audit", "sim", "sim press",
            "sim coin", "sim drop", "sim coin-return",
        ]
        // Groups of subcommands list them; `cash` alone shows its position.
        let groups: Set = ["sim", "cash"]
        for command in commands {
            let run = try DaemonHarness.vendctl(command.split(separator: " ").map(String.init) + ["--help"])
            #expect(run.status == 0, "\(command)")
            #expect(run.output.hasPrefix("OVERVIEW: "), "\(command)")
            #expect(groups.contains(command) || run.output.contains("--socket <socket>"), "\(command)")
        }
        let documentation = try String(contentsOf: repositoryRoot.appendingPathComponent("docs/vendctl.md"), encoding: .utf8)
        for command in commands where !command.hasPrefix("sim") {
            #expect(documentation.contains("\n### \(command)"), "docs/vendctl.md documents \(command)")
        }
    }

    /// The socket's directory refuses a user outside its group: the message names the group.
    @Test(.enabled(if: getuid() == 0, "needs root to act as another user (CI runs as root)"))
    func aSocketTheUserMayNotReachExits77NamingTheGroup() throws {
        let daemon = try DaemonHarness()
        defer { daemon.tearDown() }
        try daemon.start()
        let group = try #require(getgrgid(1)).pointee
        let groupName = String(cString: group.gr_name)
        #expect(chown(daemon.directory.path, 0, 1) == 0)
        #expect(chmod(daemon.directory.path, 0o750) == 0)
        let run = try PermissionTests.vendctl(asNobody: ["--socket", daemon.socketPath, "status"])
        #expect(run.status == 77)
        #expect(
            run.errors
                == "vendctl: permission denied: \(daemon.directory.path) is open only to its owner and the '\(groupName)' group (ask an administrator: usermod -aG \(groupName) $USER, then log in again)\n"
        )
    }
}
