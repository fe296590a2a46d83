import AsyncHTTPClient
import Foundation
import Guards
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOPosix

/// Fetches a URL with AsyncHTTPClient, with a timeout and a body size limit.
///
/// A connection that fails fails the fetch at once (``defaultClient``): a refused one is
/// ``FetchError/refused(_:)``, told at once rather than as a timeout once the whole timeout
/// has passed; the adapter's backoff decides when to try again.
public struct HTTPRatesSource: RatesSource {
    public let url: String
    public let timeout: Duration
    public let bodyLimit: Int
    private let client: HTTPClient

    public init(
        url: String, timeout: Duration = .seconds(5), bodyLimit: Int = ECBRatesParser.defaultLimit,
        client: HTTPClient = HTTPRatesSource.defaultClient
    ) {
        self.url = url
        self.timeout = timeout
        self.bodyLimit = bodyLimit
        self.client = client
    }

    public var name: String { url }

    public func fetch() async throws(FetchError) -> Data {
        let milliseconds = Int(timeout.inMilliseconds)
        do {
            var request = HTTPClientRequest(url: url)
            request.headers.add(name: "Accept", value: "text/xml")
            let response = try await client.execute(request, timeout: .milliseconds(Int64(milliseconds)))
            guard response.status == .ok else {
                throw FetchError.status(Int(response.status.code))
            }
            if let length = response.headers.first(name: "Content-Length").flatMap(Int.init), length > bodyLimit {
                throw FetchError.tooLarge(limit: bodyLimit)
            }
            var body = try await response.body.collect(upTo: bodyLimit)
            return body.readData(length: body.readableBytes) ?? Data()
        } catch let error as FetchError {
            throw error
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            throw .timedOut(milliseconds: milliseconds)
        } catch let error as NIOTooManyBytesError {
            _ = error
            throw .tooLarge(limit: bodyLimit)
        } catch is CancellationError {
            throw .cancelled
        } catch let error as HTTPClientError where error == .cancelled {
            throw .cancelled
        } catch {
            if let address = refusedAddress(error) { throw .refused(address) }
            throw .unreachable("\(error)")
        }
    }

    /// The client every source uses unless given another: AsyncHTTPClient's shared
    /// configuration, except that a connection that cannot be made fails the request at once.
    /// By default AsyncHTTPClient tries again, with backoff, until the request's deadline, so
    /// that a refused connection would come out as a timeout after the whole timeout.
    public static let defaultClient: HTTPClient = {
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.connectionPool.retryConnectionEstablishment = false
        // Lives as long as the process, as HTTPClient.shared does: never shut down.
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// `host:port` when `error` says the connection was refused at every address tried
    /// (ECONNREFUSED): nothing listens there.
    func refusedAddress(_ error: any Error) -> String? {
        if let failure = error as? NIOConnectionError, !failure.connectionErrors.isEmpty,
            failure.connectionErrors.allSatisfy({ Self.isRefusal($0.error) })
        {
            return "\(failure.host):\(failure.port)"
        }
        guard Self.isRefusal(error) else { return nil }
        let parsed = URL(string: url)
        let port = parsed?.port ?? (parsed?.scheme == "https" ? 443 : 80)
        return "\(parsed?.host ?? url):\(port)"
    }

    private static func isRefusal(_ error: any Error) -> Bool {
        (error as? IOError)?.errnoCode == ECONNREFUSED
    }
}
