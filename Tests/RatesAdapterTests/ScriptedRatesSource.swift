import Foundation
import RatesAdapter
import Runtime

/// A rates source that answers from a script: documents, failures, delays: the twin of
/// `HTTPRatesSource` in the adapter's tests (a test target: fault injection is not shipped).
actor ScriptedRatesSource: RatesSource {
    enum Step: Sendable {
        case document(Data)
        case failure(FetchError)
        /// Answers `Data` after a delay (so a poll can outlive its timeout).
        case slow(Data, Duration)
    }

    nonisolated let name: String
    private var steps: [Step]
    private let repeatLast: Bool
    private(set) var fetches = 0
    /// How many fetches were cancelled, for a test to read or await: a timed-out poll is
    /// cancelled after the adapter has gone on (it does not wait for the fetch it gave up on).
    nonisolated let cancellations = Watermark()

    init(name: String = "scripted", steps: [Step], repeatLast: Bool = true) {
        self.name = name
        self.steps = steps
        self.repeatLast = repeatLast
    }

    func fetch() async throws(FetchError) -> Data {
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
                cancellations.add(1)
                throw .cancelled
            }
            return data
        }
    }
}
