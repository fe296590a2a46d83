import EventLog
import Foundation
import Guards
import ZeroMQ

/// CURVE key files: what `bureau keygen` writes and `bureau bus --curve-secret-file` and
/// `--allow-keys` read.
///
/// A file `bureau keygen` writes says what it holds on its first line — `# bureau CURVE
/// secret key` or `# bureau CURVE public key` — then holds the 40-character Z85 key. Other
/// lines starting with `#` are comments, and blank lines are allowed; but a line that is a
/// whole Z85 key is a key even if it starts with `#` (`#` is a Z85 character: one key in 85
/// does). Errors name the file and the line, counted as an editor counts them.
///
/// Files written before the first line said what they hold are still read. Their kind cannot
/// be told from a bare key (a secret and a public key are both 40 Z85 characters), so it is
/// told from the name keygen gave them: a `.pub` file is not taken as a secret key, and a `.key`
/// file is not taken into an allow-list; any other name is taken as the option says.
///
/// A secret key file must be owner-only (keygen writes it 0600): one that the group or others
/// may read or write is refused.
public enum KeyFiles {
    static let secretHeader = "# bureau CURVE secret key"
    static let publicHeader = "# bureau CURVE public key"
    /// The largest key file read; an allow-list of a thousand keys is about 42 KB.
    static let maximumBytes = 256 << 10

    /// What a file says it holds.
    enum Kind { case secret, `public` }

    /// The file's keys, each with its line number, and what its header lines say it holds.
    struct Contents {
        var keys: [(key: String, line: Int)] = []
        var declared: Set<Kind> = []
    }

    static func contents(of path: String) throws -> Contents {
        let text: String
        do {
            text = try BoundedFile.text(path, limit: maximumBytes)
        } catch {
            throw KeyFileError("cannot read the key file: \(error)")
        }
        var contents = Contents()
        // Not omitting empty lines: blank lines count, as they do in an editor.
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let content = line.trimmingCharacters(in: .whitespacesAndNewlines)
            if content == secretHeader {
                contents.declared.insert(.secret)
            } else if content == publicHeader {
                contents.declared.insert(.public)
            } else if CurveKeyPair.isValidKey(content) {
                contents.keys.append((content, index + 1))
            } else if !content.isEmpty && !content.hasPrefix("#") {
                throw KeyFileError("\(path):\(index + 1): not a 40-character Z85 CURVE key")
            }
        }
        return contents
    }

    /// The secret key in `path`, for `option` (`--curve-secret-file`, `--client-key`).
    public static func readSecretKey(_ path: String, option: String = "--curve-secret-file") throws -> String {
        let contents = try contents(of: path)
        if contents.declared.contains(.public) || (contents.declared.isEmpty && path.hasSuffix(".pub")) {
            throw KeyFileError(
                "\(path) holds a public key; \(option) takes the secret key (NAME.key from `bureau keygen`)")
        }
        let key = try onlyKey(in: contents, path: path)
        if let mode = OwnerOnly.mode(of: path), mode & 0o077 != 0 {
            throw KeyFileError(
                "\(path) is a secret key that others may read (mode \(String(mode, radix: 8))); "
                    + "make it owner-only: chmod 600 \(path)")
        }
        return key
    }

    /// The public key in `path`, for `option` (`--server-key`: the daemon's .pub).
    public static func readPublicKey(_ path: String, option: String) throws -> String {
        let contents = try contents(of: path)
        if contents.declared.contains(.secret) || (contents.declared.isEmpty && path.hasSuffix(".key")) {
            throw KeyFileError(
                "\(path) holds a secret key; \(option) takes the daemon's public key (its .pub), "
                    + "and a secret key must not leave its owner")
        }
        return try onlyKey(in: contents, path: path)
    }

    private static func onlyKey(in contents: Contents, path: String) throws -> String {
        guard contents.keys.count == 1, let key = contents.keys.first?.key else {
            throw KeyFileError("\(path) should hold exactly one key, not \(contents.keys.count)")
        }
        return key
    }

    /// The public keys in `path`, for `--allow-keys`: at least one.
    public static func readAllowList(_ path: String) throws -> Set<String> {
        let contents = try contents(of: path)
        if contents.declared.contains(.secret) || (contents.declared.isEmpty && path.hasSuffix(".key")) {
            throw KeyFileError(
                "\(path) holds a secret key; --allow-keys takes the clients' public keys (their .pub files), "
                    + "and a secret key must not leave its owner")
        }
        guard !contents.keys.isEmpty else {
            throw KeyFileError(
                "\(path) lists no keys, so no client could connect; add the clients' public keys "
                    + "(from `bureau keygen`), one per line")
        }
        return Set(contents.keys.map(\.key))
    }

    /// Writes `pair` as `stem.key` (secret, 0600 whatever the umask) and `stem.pub` (public),
    /// each with its header line; returns the two paths.
    public static func write(_ pair: CurveKeyPair, stem: String) throws -> (secret: String, public: String) {
        let secret = stem + ".key"
        let `public` = stem + ".pub"
        do {
            try OwnerOnly.write(Array("\(secretHeader)\n\(pair.secretKey)\n".utf8), to: secret)
        } catch {
            throw KeyFileError("\(error)")
        }
        guard
            FileManager.default.createFile(
                atPath: `public`, contents: Data("\(publicHeader)\n\(pair.publicKey)\n".utf8))
        else { throw KeyFileError("cannot write \(`public`)") }
        return (secret, `public`)
    }
}

/// A key file that cannot be used, and why: the message names the file (and the line).
public struct KeyFileError: Error, CustomStringConvertible, Equatable {
    public let description: String
    init(_ description: String) { self.description = description }
}
