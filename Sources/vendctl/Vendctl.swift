import ArgumentParser
import FoundationEssentials
import VendControl
import VendPOSIX

#if canImport(Glibc)
    import Glibc
#endif

@main
struct Vendctl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vendctl",
        abstract: "Operate a running vendd: look at the machine, restock, set prices, read the books.",
        discussion:
            "Queries are open to anyone who can reach the socket; changes need root or the control group (vendtech). Exit status: 0 done, 1 refused by vendd, 64 wrong argument, 69 vendd not reachable, 73 an output file cannot be written, 77 not permitted. See docs/vendctl.md.",
        version: venddVersion,
        subcommands: [
            Status.self, Stock.self, Purchasable.self, Expired.self, Hot.self, Products.self,
            Restock.self, Unload.self, Price.self, Service.self, SlotCommand.self, History.self, Coins.self, Cash.self, Report.self,
            Watch.self, Audit.self, DEXCommand.self, Select.self, CoinReturn.self, Zone.self, Temps.self, Sim.self,
        ])

    // Declared here too so that `vendctl --socket PATH status` works as well as `vendctl status --socket PATH`.
    @OptionGroup var connection: Connection

    /// A misspelt command gets the nearest one suggested (exit 64); the rest is the parser's.
    static func main() {
        if let message = CommandSuggestion.message(for: Array(CommandLine.arguments.dropFirst())) {
            StandardError.write("vendctl: \(message)\n")
            Glibc.exit(ExitStatus.usage)
        }
        main(nil)
    }
}

/// Options every command shares.
struct Connection: ParsableArguments {
    @Option(help: "The daemon's control socket.")
    var socket: String = "/run/vendd/control.sock"

    @Flag(help: "Print the daemon's answer as one JSON line (documented in docs/vendctl.md) instead of text.")
    var json = false

    @Option(help: ArgumentHelp("Seconds to wait for vendd's answer (watch waits for events without limit).", valueName: "seconds"))
    var timeout: Int = 10

    func validate() throws {
        guard timeout > 0 else { throw ValidationError("--timeout must be at least 1 second") }
    }

    func client() throws -> ControlClient {
        do {
            return try ControlClient(path: socket, timeout: .seconds(timeout))
        } catch {
            throw Failure(error.description, code: error.kind == .permissionDenied ? ExitStatus.noPermission : ExitStatus.unavailable)
        }
    }

    /// Sends a command; prints the failure and exits non-zero if the daemon refused it.
    func send(_ command: ControlCommand) throws -> ControlResponse {
        let response: ControlResponse
        do {
            response = try client().send(command)
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure("\(error)", code: ExitStatus.unavailable)
        }
        if json { print(jsonLine(response)) }
        guard response.ok else {
            let error = response.error ?? ControlError(.internal, "vendd refused without a reason")
            throw Failure(error.message, code: ExitStatus.of(error.code))
        }
        return response
    }

    /// Sends a query and prints its text rendering unless `--json` printed the answer already.
    func show<Answer>(_ command: ControlCommand, _ answer: (ControlResponse) -> Answer?, render: (Answer) throws -> String) throws {
        let response = try send(command)
        guard !json else { return }
        guard let value = answer(response) else {
            throw Failure("vendd's answer to \(command.op) lacks its result; is vendd older than this vendctl?", code: ExitStatus.unavailable)
        }
        print(try render(value))
    }
}

/// vendctl's exit statuses (sysexits-style), documented in docs/vendctl.md.
enum ExitStatus {
    static let refused: Int32 = 1
    static let usage: Int32 = 64
    static let unavailable: Int32 = 69
    static let cannotCreate: Int32 = 73
    static let temporaryFailure: Int32 = 75
    static let noPermission: Int32 = 77

    static func of(_ code: ControlError.Code) -> Int32 {
        switch code {
        case .forbidden: noPermission
        case .badRequest: usage
        case .unsupportedVersion: unavailable
        case .rejected, .notSimulated, .internal: refused
        case .busy: temporaryFailure
        }
    }
}

/// A message for stderr and an exit status.
struct Failure: Error, CustomStringConvertible {
    let description: String
    let code: Int32
    init(_ description: String, code: Int32) {
        self.description = description
        self.code = code
    }
}

extension ParsableCommand {
    /// Runs `body`, turning a `Failure` into "vendctl: message" on stderr and its exit status.
    func reporting(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let failure as Failure {
            StandardError.write("vendctl: \(failure.description)\n")
            throw ExitCode(failure.code)
        }
    }
}

func jsonLine<Value: Encodable>(_ value: Value) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return (try? String(decoding: encoder.encode(value), as: UTF8.self)) ?? "{}"
}
