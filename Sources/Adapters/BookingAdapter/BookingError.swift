import AsyncHTTPClient
import Foundation
import Guards
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// Why a booking call failed.
public enum BookingError: Error, Equatable, CustomStringConvertible {
    /// Worth retrying: a 5xx, a timeout, no connection.
    case transient(String)
    /// Not worth retrying: the service refused the request (a 4xx), with its reason.
    case refused(String)

    public var description: String {
        switch self {
        case .transient(let reason): reason
        case .refused(let reason): reason
        }
    }
}
