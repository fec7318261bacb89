import ArgumentParser
import Foundation
import VendControl

@main
struct Vendctl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vendctl",
        abstract: "Operate a running vendd: status, live events, and the simulated hardware.",
        subcommands: [Status.self, Watch.self, Restock.self, Sim.self])

    // Declared here too so that `vendctl --socket PATH status` works as well as `vendctl status --socket PATH`.
    @OptionGroup var connection: Connection
}

/// Options every command shares.
struct Connection: ParsableArguments {
    @Option(help: "The daemon's control socket.")
    var socket: String = "/run/vendd/control.sock"

    @Flag(help: "Print JSON (one object per line) instead of text.")
    var json = false

    func client() throws -> ControlClient {
        do {
            return try ControlClient(path: socket)
        } catch {
            throw Failure(error.description, code: ExitStatus.unavailable)
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
            throw Failure(error.message, code: error.code == .forbidden ? ExitStatus.noPermission : ExitStatus.refused)
        }
        return response
    }
}

/// vendctl's exit statuses (sysexits-style), documented in docs/vendctl.md.
enum ExitStatus {
    static let refused: Int32 = 1
    static let usage: Int32 = 64
    static let unavailable: Int32 = 69
    static let noPermission: Int32 = 77
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
            FileHandle.standardError.write(Data("vendctl: \(failure.description)\n".utf8))
            throw ExitCode(failure.code)
        }
    }
}

func jsonLine<Value: Encodable>(_ value: Value) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return (try? String(decoding: encoder.encode(value), as: UTF8.self)) ?? "{}"
}
