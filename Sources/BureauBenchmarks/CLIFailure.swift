import ArgumentParser
import Bus
import EventLog
import Foundation
import Guards
import Logging
import Synchronization
import ZeroMQ
import ZeroMQBus

struct CLIFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
