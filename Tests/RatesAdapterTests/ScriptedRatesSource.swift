import AsyncHTTPClient
import Foundation
import Guards
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

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
