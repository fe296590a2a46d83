/// Reads a log directory for the bus's catch-up server, keeping its place between requests.
public final class FileLogReader: EventLogReader {
    public let directory: String
    private let fileSystem: any FileSystem
    private var cursor: LogCursor?

    public init(directory: String, fileSystem: any FileSystem = PosixFileSystem()) {
        self.directory = directory
        self.fileSystem = fileSystem
    }

    public func read(after position: UInt64, through: UInt64, limit: Int, maxBytes: Int) throws -> [LogRecord] {
        guard position < through else { return [] }
        // Reading on from where the last request ended is the common case: keep that cursor.
        let cursor = try self.cursor ?? LogCursor(directory: directory, after: position, fileSystem: fileSystem)
        self.cursor = cursor
        if cursor.nextPosition != position + 1 {
            try cursor.seek(after: position)
        }
        var records: [LogRecord] = []
        var bytes = 0
        while records.count < limit, bytes < maxBytes, cursor.nextPosition <= through, let record = try cursor.next() {
            records.append(record)
            bytes += record.body.count
        }
        return records
    }
}
