#if canImport(Glibc)
    import Glibc
#endif

/// A failed system call's `errno`.
public struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
    public let code: Int32

    public init(_ code: Int32) {
        self.code = code
    }

    /// The `errno` the last system call left.
    public static var last: SystemError { SystemError(errno) }

    public var description: String { "\(String(cString: strerror(code))) (errno \(code))" }

    /// The disk or the user's quota is full: a refusal to store more, not damage.
    public var isNoSpace: Bool { code == ENOSPC || code == EDQUOT || code == EFBIG }
}
