import Foundation
import Guards
import ZeroMQ

extension ZMQSocket {
    /// The next message, or nil if none came within the socket's receive timeout, waited for on
    /// a thread of its own: a blocking receive on a thread of Swift's cooperative pool (two on
    /// two cores) would stall every other test's tasks while it waits.
    ///
    /// The socket must not be used by anyone else until this returns, as with any ZeroMQ socket.
    public func nextMessage() async throws -> [Data]? {
        let socket = UncheckedBox(self)
        return try await OwnThread.run(name: "test-receive") { try socket.value.receiveMessage() }
    }
}
