import Guards

/// The adapters' and the trace exporter's HTTP client: libcurl (Debian's libcurl4-openssl-dev;
/// http and https, TLS by the system's OpenSSL and its certificates, the proxy variables curl
/// reads), one call per connection, each on a thread of its own so that a slow server never holds
/// a thread of Swift's cooperative pool.
///
/// A call's failure says whether its request could have reached the server
/// (``HTTPCallError/requestWasSent``): a refused connection is told at once as
/// ``HTTPCallError/refused(address:)``, and each adapter's own backoff decides when to call again.
public enum HTTPCalls {
    /// Sends `request` and returns the whole answer, whatever its status: within `timeout` from
    /// the start of connecting to the last byte, and at most `bodyLimit` bytes of body. GET
    /// requests follow up to 5 redirects (http and https only); others follow none.
    ///
    /// Cancelling the calling task stops the call at once (``HTTPCallError/cancelled``).
    public static func perform(
        _ request: HTTPRequest, timeout: Duration, bodyLimit: Int
    ) async throws(HTTPCallError) -> HTTPResponse {
        let transfer = CurlTransfer(request: request, timeout: timeout, bodyLimit: bodyLimit)
        let result: Result<HTTPResponse, HTTPCallError>
        do {
            result = try await withTaskCancellationHandler {
                try await OwnThread.run(name: "http-call") { transfer.run() }
            } onCancel: {
                transfer.cancel()
            }
        } catch {
            throw .cannotStart("\(error)")
        }
        return try result.get()
    }
}
