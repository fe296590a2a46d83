import ArgumentParser
import Bus
import EventLog
import Foundation
import Guards
import Logging
import Synchronization
import ZeroMQ
import ZeroMQBus

final class Box<Value: ~Copyable>: @unchecked Sendable {
    let value: Value
    init(_ value: consuming Value) { self.value = value }
}
