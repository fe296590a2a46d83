import EventLog
import Foundation
import Guards
import TestSupport
import Testing
import ZeroMQ

@testable import ZeroMQBus

/// CURVE key files: a public key given as a secret, a secret key in an allow-list, an empty
/// allow-list and a malformed line are refused naming the file (and the right line); a secret
/// key others may read is refused.
struct KeyFilesTests {
    /// Writes `text` to `name` in `directory` with `mode`; returns the path.
    static func file(
        _ directory: TemporaryDirectory, _ name: String, _ text: String, mode: mode_t = 0o600
    ) throws
        -> String
    {
        let path = directory.file(name)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, mode)
        return path
    }

    /// The message of the error `body` throws, or nil.
    static func refusal(_ body: () throws -> Any) -> String? {
        do {
            _ = try body()
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test func whatKeygenWritesReadsBackAndSaysWhatItIs() throws {
        let directory = try TemporaryDirectory("keys")
        let pair = try CurveKeyPair.generate()
        let (secret, `public`) = try KeyFiles.write(pair, stem: directory.file("bus"))
        #expect(try String(contentsOfFile: secret, encoding: .utf8) == "# bureau CURVE secret key\n\(pair.secretKey)\n")
        #expect(
            try String(contentsOfFile: `public`, encoding: .utf8) == "# bureau CURVE public key\n\(pair.publicKey)\n")
        #expect(OwnerOnly.mode(of: secret) == 0o600)
        #expect(try KeyFiles.readSecretKey(secret) == pair.secretKey)
        #expect(try KeyFiles.readAllowList(`public`) == [pair.publicKey])
    }

    @Test func aPublicKeyGivenAsTheSecretKeyIsRefusedNamingTheFile() throws {
        let directory = try TemporaryDirectory("keys")
        let pair = try CurveKeyPair.generate()
        let (_, `public`) = try KeyFiles.write(pair, stem: directory.file("bus"))
        chmod(`public`, 0o600)
        #expect(
            Self.refusal { try KeyFiles.readSecretKey(`public`) }
                == "\(`public`) holds a public key; --curve-secret-file takes the secret key (NAME.key from `bureau keygen`)"
        )
        // A bare key, as keygen wrote before its files said what they hold: told by the name.
        let bare = try Self.file(directory, "old.pub", pair.publicKey + "\n")
        #expect(Self.refusal { try KeyFiles.readSecretKey(bare) }?.hasPrefix("\(bare) holds a public key") == true)
        let bareSecret = try Self.file(directory, "old.key", pair.secretKey + "\n")
        #expect(try KeyFiles.readSecretKey(bareSecret) == pair.secretKey)
    }

    @Test func aSecretKeyInAnAllowListIsRefused() throws {
        let directory = try TemporaryDirectory("keys")
        let (secret, _) = try KeyFiles.write(try CurveKeyPair.generate(), stem: directory.file("client"))
        #expect(Self.refusal { try KeyFiles.readAllowList(secret) }?.hasPrefix("\(secret) holds a secret key") == true)
    }

    @Test func anEmptyAllowListIsRefusedNamingTheFile() throws {
        let directory = try TemporaryDirectory("keys")
        for text in ["", "\n\n", "# bureau CURVE public key\n# nobody yet\n"] {
            let path = try Self.file(directory, "allowed", text)
            #expect(
                Self.refusal { try KeyFiles.readAllowList(path) }
                    == "\(path) lists no keys, so no client could connect; add the clients' public keys "
                    + "(from `bureau keygen`), one per line")
        }
    }

    @Test func aMalformedLineIsNamedWithTheLineAnEditorShows() throws {
        let directory = try TemporaryDirectory("keys")
        let first = try CurveKeyPair.generate().publicKey
        // Line 1 a header, 2 blank, 3 a key, 4 blank, 5 a comment, 6 blank, 7 the mistake.
        let path = try Self.file(
            directory, "allowed", "# bureau CURVE public key\n\n\(first)\n\n# the laptop\n\nnot-a-key\n")
        #expect(Self.refusal { try KeyFiles.readAllowList(path) } == "\(path):7: not a 40-character Z85 CURVE key")
        let truncated = try Self.file(directory, "bus.key", "# bureau CURVE secret key\n\n\(first.dropLast())\n")
        #expect(
            Self.refusal { try KeyFiles.readSecretKey(truncated) } == "\(truncated):3: not a 40-character Z85 CURVE key"
        )
    }

    @Test func aKeyThatStartsWithAHashIsAKeyNotAComment() throws {
        let directory = try TemporaryDirectory("keys")
        let key = "#" + String(repeating: "a", count: 39)
        let path = try Self.file(directory, "allowed", "# bureau CURVE public key\n\(key)\n")
        #expect(try KeyFiles.readAllowList(path) == [key])
    }

    @Test func aSecretKeyOthersMayReadIsRefused() throws {
        let directory = try TemporaryDirectory("keys")
        let (secret, _) = try KeyFiles.write(try CurveKeyPair.generate(), stem: directory.file("bus"))
        for mode: mode_t in [0o640, 0o604, 0o644, 0o660] {
            chmod(secret, mode)
            #expect(
                Self.refusal { try KeyFiles.readSecretKey(secret) }
                    == "\(secret) is a secret key that others may read (mode \(String(mode, radix: 8))); "
                    + "make it owner-only: chmod 600 \(secret)")
        }
    }

    @Test func anOversizedKeyFileIsRefused() throws {
        let directory = try TemporaryDirectory("keys")
        let path = try Self.file(directory, "allowed", String(repeating: "# filler\n", count: 40_000))
        #expect(
            Self.refusal { try KeyFiles.readAllowList(path) }
                == "cannot read the key file: \(path) is larger than 256 KiB, the limit")
    }
}
