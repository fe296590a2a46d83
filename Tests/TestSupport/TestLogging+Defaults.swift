import Bus
import EventLog
import Logging
import ZeroMQBus

/// The libraries take a `Logger` and never build one; tests pass the test logger (quiet unless
/// `BUREAU_TEST_LOG` names a level) without saying so at every call.
extension FileEventLog {
    public convenience init(directory: String, options: Options = Options()) throws {
        try self.init(directory: directory, options: options, logger: TestLogging.logger("bureau.log"))
    }
}

extension ZeroMQBusClient {
    public convenience init(endpoints: BusEndpoints, options: Options) throws {
        try self.init(endpoints: endpoints, options: options, logger: TestLogging.logger("bureau.bus.client"))
    }

    public convenience init(location: BusLocation, options: Options) throws {
        try self.init(location: location, options: options, logger: TestLogging.logger("bureau.bus.client"))
    }
}
