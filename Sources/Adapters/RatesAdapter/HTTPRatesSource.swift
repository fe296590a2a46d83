import AsyncHTTPClient
import Foundation
import Guards
import HTTPCalls
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOPosix

/// Fetches a URL with AsyncHTTPClient, with a timeout and a body size limit.
///
/// A connection that fails fails the fetch at once (`HTTPCalls.client`): a refused one is
/// ``FetchError/refused(_:)``, told at once rather than as a timeout once the whole timeout
/// has passed; the adapter's backoff decides when to try again.
public struct HTTPRatesSource: RatesSource {
    public let url: String
    public let timeout: Duration
    public let bodyLimit: Int
    private let client: HTTPClient

    public init(
        url: String, timeout: Duration = .seconds(5), bodyLimit: Int = ECBRatesParser.defaultLimit,
        client: HTTPClient = HTTPCalls.client
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
            if let address = HTTPCalls.refusedAddress(error, url: url) { throw .refused(address) }
            throw .unreachable("\(error)")
        }
    }
}
