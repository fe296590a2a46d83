import Guards
import NIOSSL
import PostgresNIO

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

    /// The certificates of ``rootCertificateFile``; nil when there is none.
    func rootCertificates() throws(TLSProblem) -> [NIOSSLCertificate]? {
        guard let file = rootCertificateFile else { return nil }
        let bytes: [UInt8]
        do {
            bytes = Array(try BoundedFile.read(file, limit: Self.maxRootCertificateBytes))
        } catch {
            throw TLSProblem(reason: "sslrootcert: \(error)")
        }
        let certificates: [NIOSSLCertificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMBytes(bytes)
        } catch {
            throw TLSProblem(reason: "sslrootcert: \(file) is not a PEM file of certificates (\(error))")
        }
        guard !certificates.isEmpty else {
            throw TLSProblem(reason: "sslrootcert: \(file) holds no certificate (PEM, -----BEGIN CERTIFICATE-----)")
        }
        return certificates
    }

    /// postgres-nio's TLS setting for a connection. The context is made afresh (the CA file
    /// read again), so that a connection made after the file was replaced trusts the new CAs.
    func tlsSetting() throws(TLSProblem) -> PostgresConnection.Configuration.TLS {
        guard tls != .disable else { return .disable }
        var configuration = TLSConfiguration.makeClientConfiguration()
        let certificates = try rootCertificates()
        if let certificates { configuration.trustRoots = .certificates(certificates) }
        switch tls {
        case .disable: return .disable
        case .require:
            configuration.certificateVerification = certificates == nil ? .none : .noHostnameVerification
        case .verifyCA:
            configuration.certificateVerification = .noHostnameVerification
        case .verifyFull:
            configuration.certificateVerification = .fullVerification
        }
        do {
            return .require(try NIOSSLContext(configuration: configuration))
        } catch {
            throw TLSProblem(reason: "cannot set up TLS (sslmode=\(tls)): \(error)")
        }
    }

    /// postgres-nio's TLS setting for this URL, for code that makes connections of its own (the
    /// benchmarks), so that they honour `sslmode` as the store does.
    public func connectionTLS() throws(PostgresStoreError) -> PostgresConnection.Configuration.TLS {
        do throws(TLSProblem) {
            return try tlsSetting()
        } catch {
            throw .tls("\(self)", reason: error.reason)
        }
    }

    /// What a failed connection attempt says about TLS, if it failed there: the server offers no
    /// TLS, or its certificate was not accepted. Nil for any other failure.
    func tlsFailure(_ error: any Error, host: Host) -> String? {
        guard tls != .disable, let error = error as? PSQLError else { return nil }
        if error.code == .sslUnsupported {
            return "\(host) does not offer TLS (sslmode=\(tls) needs it): set ssl = on in its postgresql.conf"
        }
        let authority = rootCertificateFile.map { "a CA of sslrootcert=\($0)" } ?? "a CA this system trusts"
        switch error.underlying {
        case let failure as NIOSSLExtraError where failure == .failedToValidateHostname:
            return "the certificate of \(host) does not name \(host.name) (sslmode=\(tls) checks the name connected to)"
        case let failure as NIOSSLError:
            guard case .handshakeFailed(let reason) = failure else { return nil }
            return
                "\(host) is not trusted: its certificate was refused (sslmode=\(tls): it must be signed by "
                + "\(authority)): \(reason)"
        default:
            return nil
        }
    }
}
