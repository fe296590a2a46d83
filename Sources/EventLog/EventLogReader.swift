/// Reads an ``EventLog`` from a thread other than the writer's.
public protocol EventLogReader: AnyObject {
    /// Records after `position` and at most `through`, up to `limit` records and about `maxBytes` of bodies.
    func read(after position: UInt64, through: UInt64, limit: Int, maxBytes: Int) throws -> [LogRecord]
}
