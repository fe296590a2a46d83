import ArgumentParser
import Foundation
import ZeroMQ

struct KeygenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Make a CURVE key pair for TCP between machines.",
        discussion: HelpText.prose(
            """
            Writes NAME.key (the secret key, mode 0600) and NAME.pub (the public key). Give the
            daemon its .key with --curve-secret-file and the clients' .pub lines with --allow-keys.
            """)
    )

    @Argument(help: "The file name stem, e.g. bus or client-1.")
    var name: String

    func run() throws {
        let pair = try CurveKeyPair.generate()
        let secret = name + ".key"
        let public_ = name + ".pub"
        guard
            FileManager.default.createFile(
                atPath: secret, contents: Data((pair.secretKey + "\n").utf8), attributes: [.posixPermissions: 0o600])
        else { throw CLIError("cannot write \(secret)") }
        guard FileManager.default.createFile(atPath: public_, contents: Data((pair.publicKey + "\n").utf8)) else {
            throw CLIError("cannot write \(public_)")
        }
        print("wrote \(secret) (secret) and \(public_) (public: \(pair.publicKey))")
    }
}
