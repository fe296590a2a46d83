import ArgumentParser
import Foundation
import Guards
import ZeroMQ
import ZeroMQBus

struct KeygenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Make a CURVE key pair for TCP between machines.",
        discussion: HelpText.prose(
            """
            Writes NAME.key (the secret key, mode 0600 whatever the umask) and NAME.pub (the public
            key), each with a first line saying which it is. Give the daemon its .key with
            --curve-secret-file and the clients' .pub files, concatenated, with --allow-keys.
            """)
    )

    @Argument(help: "The file name stem, e.g. bus or client-1.")
    var name: String

    func run() throws {
        let pair = try CurveKeyPair.generate()
        let (secret, `public`) = try KeyFiles.write(pair, stem: name)
        print("wrote \(secret) (secret, owner-only) and \(`public`) (public: \(pair.publicKey))")
    }
}
