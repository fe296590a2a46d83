import Foundation
import Guards
import HTTPCalls

/// Fetches a URL over HTTP (``HTTPCalls``), with a timeout and a body size limit.
///
/// A connection that fails fails the fetch at once: a refused one is ``FetchError/refused(_:)``,
/// told at once rather than as a timeout once the whole timeout has passed; the adapter's backoff
/// decides when to try again.
public struct HTTPRatesSource: RatesSource {
    public let url: String
    public let timeout: Duration
    public let bodyLimit: Int

    public init(url: String, timeout: Duration = .seconds(5), bodyLimit: Int = ECBRatesParser.defaultLimit) {
        self.url = url
        self.timeout = timeout
        self.bodyLimit = bodyLimit
    }

    public var name: String { url }

    public func fetch() async throws(FetchError) -> Data {
        let request = HTTPRequest(url: url, headers: [("Accept", "text/xml")])
        let response: HTTPResponse
        do {
            response = try await HTTPCalls.perform(request, timeout: timeout, bodyLimit: bodyLimit)
        } catch {
            switch error {
            case .refused(let address): throw .refused(address)
            case .timedOut(let milliseconds): throw .timedOut(milliseconds: Int(milliseconds))
            case .tooLarge: throw .tooLarge(limit: bodyLimit)
            case .cancelled: throw .cancelled
            case .notConnected(let reason), .interrupted(let reason), .invalidURL(let reason), .cannotStart(let reason):
                throw .unreachable(reason)
            }
        }
        guard response.status == 200 else { throw .status(response.status) }
        return response.body
    }
}
