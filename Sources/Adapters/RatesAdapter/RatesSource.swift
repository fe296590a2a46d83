import Foundation
import Guards

/// Where rates documents come from: the seam between the rates adapter and the network.
///
/// ``HTTPRatesSource`` fetches over HTTP; `ScriptedRatesSource`, in the adapter's tests, is its twin; one
/// contract suite runs against both.
public protocol RatesSource: Sendable {
    /// What the adapter names as the source of what it publishes (the URL).
    var name: String { get }
    /// The document's bytes; throws ``FetchError`` when the source cannot deliver one.
    func fetch() async throws(FetchError) -> Data
}
