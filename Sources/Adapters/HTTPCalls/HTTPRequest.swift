import Foundation

/// One HTTP request as the adapters make them: a method, a URL (http or https), headers and an
/// optional body.
public struct HTTPRequest: Sendable {
    public var method: String
    public var url: String
    /// Sent in this order; a name may repeat.
    public var headers: [(name: String, value: String)]
    public var body: Data?

    public init(method: String = "GET", url: String, headers: [(name: String, value: String)] = [], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// An answer: its status and its whole body (at most the call's limit).
public struct HTTPResponse: Sendable, Equatable {
    public var status: Int
    public var body: Data

    public init(status: Int, body: Data) {
        self.status = status
        self.body = body
    }
}
