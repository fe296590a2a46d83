import BusTesting

/// The kit's temporary directory, under the name the tests have always used.
public typealias TemporaryDirectory = BusTesting.TemporaryDirectory

/// Something a test helper could not do.
public struct TestSupportError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
