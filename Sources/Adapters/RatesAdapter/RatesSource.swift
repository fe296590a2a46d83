import AsyncHTTPClient
import Foundation
import Guards
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// Where rates documents come from: the seam between the rates adapter and the network.
///
/// ``HTTPRatesSource`` fetches over HTTP; ``ScriptedRatesSource`` is its twin for tests; one
/// contract suite runs against both.
public protocol RatesSource: Sendable {
    /// What the adapter names as the source of what it publishes (the URL).
    var name: String { get }
    /// The document's bytes; throws ``FetchError`` when the source cannot deliver one.
    func fetch() async throws(FetchError) -> Data
}

/// Why a fetch failed, for `RatesFetchFailed.reason`.
public enum FetchError: Error, Equatable, CustomStringConvertible {
    /// The server answered with a status other than 200.
    case status(Int)
    case timedOut(milliseconds: Int)
    /// The connection failed (refused, reset, DNS…).
    case unreachable(String)
    /// The body was larger than the limit.
    case tooLarge(limit: Int)
    /// The fetch was cancelled: its poll's timeout passed, or the adapter is stopping.
    case cancelled

    public var description: String {
        switch self {
        case .status(let code): "HTTP \(code)"
        case .timedOut(let milliseconds): "timed out after \(milliseconds) ms"
        case .unreachable(let reason): "unreachable: \(reason)"
        case .tooLarge(let limit): "the body is over the limit of \(limit) bytes"
        case .cancelled: "cancelled"
        }
    }

    public var httpStatus: Int {
        if case .status(let code) = self { return code }
        return 0
    }
}

/// Fetches a URL with AsyncHTTPClient, with a timeout and a body size limit.
public struct HTTPRatesSource: RatesSource {
    public let url: String
    public let timeout: Duration
    public let bodyLimit: Int
    private let client: HTTPClient

    public init(
        url: String, timeout: Duration = .seconds(5), bodyLimit: Int = ECBRatesParser.defaultLimit,
        client: HTTPClient = .shared
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
            throw .unreachable("\(error)")
        }
    }
}

/// A rates source that answers from a script: documents, failures, delays. For tests.
public actor ScriptedRatesSource: RatesSource {
    public enum Step: Sendable {
        case document(Data)
        case failure(FetchError)
        /// Answers `Data` after a delay (so a poll can outlive its timeout).
        case slow(Data, Duration)
    }

    public nonisolated let name: String
    private var steps: [Step]
    private let repeatLast: Bool
    public private(set) var fetches = 0
    public private(set) var cancelled = 0

    public init(name: String = "scripted", steps: [Step], repeatLast: Bool = true) {
        self.name = name
        self.steps = steps
        self.repeatLast = repeatLast
    }

    public func fetch() async throws(FetchError) -> Data {
        fetches += 1
        guard let step = steps.first else { throw .unreachable("the script has no more steps") }
        if steps.count > 1 || !repeatLast { steps.removeFirst() }
        switch step {
        case .document(let data): return data
        case .failure(let error): throw error
        case .slow(let data, let delay):
            do {
                try await Task.sleep(for: delay)
            } catch {
                cancelled += 1
                throw .cancelled
            }
            return data
        }
    }
}
