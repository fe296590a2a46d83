import CZeroMQ

/// A CURVE key pair, both keys as 40-character Z85 text.
public struct CurveKeyPair: Sendable, Equatable, Codable {
    public let publicKey: String
    public let secretKey: String

    public init(publicKey: String, secretKey: String) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// A new random key pair.
    public static func generate() throws -> CurveKeyPair {
        var publicKey = [CChar](repeating: 0, count: 41)
        var secretKey = [CChar](repeating: 0, count: 41)
        guard zmq_curve_keypair(&publicKey, &secretKey) == 0 else {
            throw ZMQError.last("zmq_curve_keypair")
        }
        return CurveKeyPair(publicKey: string(publicKey), secretKey: string(secretKey))
    }

    /// The key pair whose secret key is given; throws if it is not 40 characters of Z85.
    public init(secretKey: String) throws {
        guard CurveKeyPair.isValidKey(secretKey) else {
            throw ZMQError(call: "zmq_curve_public(secret key of \(secretKey.utf8.count) characters)", code: EINVAL)
        }
        var publicKey = [CChar](repeating: 0, count: 41)
        guard zmq_curve_public(&publicKey, secretKey) == 0 else {
            throw ZMQError.last("zmq_curve_public")
        }
        self.init(publicKey: CurveKeyPair.string(publicKey), secretKey: secretKey)
    }

    /// Whether `key` is 40 characters of the Z85 alphabet.
    public static func isValidKey(_ key: String) -> Bool {
        let alphabet = Set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#")
        return key.count == 40 && key.allSatisfy { alphabet.contains($0) }
    }

    /// Decodes a Z85 key to its 32 raw bytes, as ZAP reports client keys.
    public static func rawBytes(ofKey key: String) -> [UInt8]? {
        guard isValidKey(key) else { return nil }
        var bytes = [UInt8](repeating: 0, count: 32)
        guard zmq_z85_decode(&bytes, key) != nil else { return nil }
        return bytes
    }

    /// Encodes 32 raw key bytes as Z85.
    public static func text(ofRawKey bytes: [UInt8]) -> String? {
        guard bytes.count == 32 else { return nil }
        var text = [CChar](repeating: 0, count: 41)
        guard zmq_z85_encode(&text, bytes, 32) != nil else { return nil }
        return string(text)
    }

    private static func string(_ chars: [CChar]) -> String {
        String(decoding: chars.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
