import Guards

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension PostgresStoreURL {
    /// Whether a connection is encrypted and which server certificate it accepts: libpq's
    /// `sslmode`, for the modes that do not fall back to plain text.
    public enum TLSMode: String, Sendable, CaseIterable, CustomStringConvertible {
        /// Plain TCP, as before TLS was supported: for a trusted network only.
        case disable
        /// Encrypted, the server's certificate not checked; unless `sslrootcert` is given, in
        /// which case it must be signed by one of its CAs (libpq does the same).
        case require
        /// Encrypted, the certificate signed by a trusted CA, whatever name it holds.
        case verifyCA = "verify-ca"
        /// Encrypted, the certificate signed by a trusted CA and naming the host connected to
        /// (a DNS name, or an IP address in its subject alternative names).
        case verifyFull = "verify-full"

        public var description: String { rawValue }
    }

    /// Why the TLS settings of a URL cannot be used.
    struct TLSProblem: Error {
        var reason: String
    }

    /// The largest CA file read.
    static let maxRootCertificateBytes = 1 << 20

    /// The CAs this system trusts (Debian's ca-certificates), for `verify-ca` and `verify-full`
    /// without `sslrootcert`: libpq would otherwise look only in ~/.postgresql/root.crt.
    static let systemRootCertificates = "/etc/ssl/certs/ca-certificates.crt"

    /// Checks that ``rootCertificateFile`` can be read and holds PEM certificates, so that a
    /// wrong file is said when the URL is parsed rather than at the first connection; libpq
    /// reads it again at each connection (a replaced file is trusted from the next one on).
    func checkRootCertificates() throws(TLSProblem) {
        guard let file = rootCertificateFile else { return }
        let bytes: Data
        do {
            bytes = try BoundedFile.read(file, limit: Self.maxRootCertificateBytes)
        } catch {
            throw TLSProblem(reason: "sslrootcert: \(error)")
        }
        let text = String(decoding: bytes, as: UTF8.self)
        let begin = "-----BEGIN CERTIFICATE-----"
        let end = "-----END CERTIFICATE-----"
        let blocks = text.split(separator: begin, omittingEmptySubsequences: false).dropFirst()
        guard !blocks.isEmpty else {
            throw TLSProblem(reason: "sslrootcert: \(file) holds no certificate (PEM, \(begin))")
        }
        // Each certificate is base64 of DER, which begins with a SEQUENCE (0x30): what libpq
        // would refuse at the first connection is refused here, naming the file.
        for (index, block) in blocks.enumerated() {
            guard let body = block.split(separator: end, omittingEmptySubsequences: false).first,
                block.contains(end),
                let der = Data(base64Encoded: String(body.filter { !$0.isWhitespace })),
                der.first == 0x30
            else {
                throw TLSProblem(
                    reason:
                        "sslrootcert: \(file) is not a PEM file of certificates (certificate \(index + 1) does not decode)"
                )
            }
        }
    }

    /// libpq's TLS parameters for a connection to this URL.
    func connectionParameters() throws(PostgresStoreError) -> [(String, String)] {
        do throws(TLSProblem) {
            try checkRootCertificates()
        } catch {
            throw .tls("\(self)", reason: error.reason)
        }
        var parameters = [("sslmode", tls.rawValue)]
        switch (tls, rootCertificateFile) {
        case (.disable, _): break
        case (_, let file?): parameters.append(("sslrootcert", file))
        case (.verifyCA, nil), (.verifyFull, nil): parameters.append(("sslrootcert", Self.systemRootCertificates))
        case (.require, nil):
            // No CA to check against: libpq checks none (unless ~/.postgresql/root.crt exists).
            break
        }
        return parameters
    }

    /// What a failed connection attempt says about TLS, if it failed there: the server offers no
    /// TLS, or its certificate was not accepted. Nil for any other failure.
    func tlsFailure(_ message: String, host: Host) -> String? {
        guard tls != .disable else { return nil }
        if message.contains("server does not support SSL") {
            return "\(host) does not offer TLS (sslmode=\(tls) needs it): set ssl = on in its postgresql.conf"
        }
        if message.contains("does not match host name") {
            return
                "the certificate of \(host) does not name \(host.name) (sslmode=\(tls) checks the name connected to): "
                + message
        }
        let authority = rootCertificateFile.map { "a CA of sslrootcert=\($0)" } ?? "a CA this system trusts"
        if message.contains("certificate verify failed") || message.contains("root certificate") {
            return
                "\(host) is not trusted: its certificate was refused (sslmode=\(tls): it must be signed by "
                + "\(authority)): \(message)"
        }
        return nil
    }
}
