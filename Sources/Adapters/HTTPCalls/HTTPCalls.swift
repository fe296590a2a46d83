import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#endif

/// What every adapter's HTTP calls share: the client they make them with, and how a refused
/// connection is told from other failures.
public enum HTTPCalls {
    /// AsyncHTTPClient's shared configuration, except that a connection that cannot be made fails
    /// the request at once. By default AsyncHTTPClient tries again, with backoff, until the
    /// request's deadline, so that a refused connection would come out as a timeout once the
    /// whole timeout has passed; each adapter's own backoff decides when to call again.
    ///
    /// Lives as long as the process, as `HTTPClient.shared` does: never shut down.
    public static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// `host:port` when `error`, from a call to `url`, says the connection was refused at every
    /// address tried (ECONNREFUSED): nothing listens there, and the request was never sent.
    public static func refusedAddress(_ error: any Error, url: String) -> String? {
        if let failure = error as? NIOConnectionError, !failure.connectionErrors.isEmpty,
            failure.connectionErrors.allSatisfy({ isRefusal($0.error) })
        {
            return "\(failure.host):\(failure.port)"
        }
        guard isRefusal(error) else { return nil }
        let parsed = URL(string: url)
        let port = parsed?.port ?? (parsed?.scheme == "https" ? 443 : 80)
        return "\(parsed?.host ?? url):\(port)"
    }

    private static func isRefusal(_ error: any Error) -> Bool {
        (error as? IOError)?.errnoCode == ECONNREFUSED
    }
}
