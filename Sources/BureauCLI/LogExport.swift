import ArgumentParser
import BureauSchemas
import Bus
import EventLog
import Foundation
import Logging
import Runtime

struct LogExport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write events as JSON lines, losslessly: a log excerpt for a bug report.",
        discussion: HelpText.prose(
            """
            One JSON object per line: position, id, type, time, producer, causation, correlation, \
            the payload in protobuf's JSON mapping (an unknown type has "unknown": true and \
            "payloadBase64"), and "envelope": the stored record's bytes in base64, so that \
            `bureau log import` reproduces the log byte for byte. Reads the files directly.

            Replay needs every event from position 1: export with the default --from to give \
            someone an excerpt they can import and replay.

            Examples:
              bureau log export --to 1200 > excerpt.jsonl
              bureau log export --from 1100 --to 1200 --data /srv/bureau > around-the-bug.jsonl
            """)
    )

    @OptionGroup var global: GlobalOptions
    @Option(help: "The first position to export.") var from: UInt64 = 1
    @Option(help: "The last position to export (default: the end of the log).") var to: UInt64?

    func validate() throws {
        guard from >= 1 else { throw ValidationError("--from starts at 1") }
        if let to, to < from { throw ValidationError("--to (\(to)) is before --from (\(from))") }
    }

    func run() async throws {
        let progress = Progress(label: "exporting")
        var out = Data()
        try LogFiles.scan(in: global.location, from: from, to: to) { event, record in
            out.append(contentsOf: LogExchange.line(event, envelope: record.body).utf8)
            out.append(UInt8(ascii: "\n"))
            if out.count >= 1 << 20 {
                FileHandle.standardOutput.write(out)
                out.removeAll(keepingCapacity: true)
            }
            progress.update(record.position)
            return true
        }
        FileHandle.standardOutput.write(out)
        progress.finish()
    }
}

struct LogImport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Build a new log from JSON lines that `bureau log export` wrote.",
        discussion: HelpText.prose(
            """
            Reproduces every event as it was committed: position, id, type, payload, producer, \
            causation, correlation and commit time, so that `bureau replay` on the new data \
            directory gives the same states. The "envelope" field is used when present; a line \
            without one (written by hand) is built from its other fields.

            The excerpt must start at position 1 and have no holes: a log always does. The data \
            directory must be new or empty. On bad input it names the line and writes nothing:
            the log is built aside and moved into place only when every line has been read.

            Examples:
              bureau log import excerpt.jsonl --data ./repro
              bureau replay --verify --data ./repro
            """)
    )

    @Argument(help: "The JSON lines file, or - for standard input.") var file: String
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let location = global.location
        let manager = FileManager.default
        let existed = manager.fileExists(atPath: location.dataDirectory)
        if existed {
            let entries = try manager.contentsOfDirectory(atPath: location.dataDirectory)
            guard entries.isEmpty else {
                throw CLIError(
                    "the data directory \(location.dataDirectory) is not empty; import into a new directory")
            }
        }
        let handle: FileHandle
        if file == "-" {
            handle = .standardInput
        } else {
            guard let opened = FileHandle(forReadingAtPath: file) else { throw CLIError("cannot read \(file)") }
            handle = opened
        }
        try manager.createDirectory(atPath: location.dataDirectory, withIntermediateDirectories: true)
        let staging = location.dataDirectory + "/.log-importing"
        do {
            let count = try importLines(from: handle, into: staging)
            try manager.moveItem(atPath: staging, toPath: location.logDirectory)
            print("imported \(count) events into \(location.logDirectory)")
        } catch {
            try? manager.removeItem(atPath: staging)
            if !existed { try? manager.removeItem(atPath: location.dataDirectory) }
            throw error
        }
    }

    /// Appends every line's event to a new log in `directory`; how many.
    private func importLines(from handle: FileHandle, into directory: String) throws -> UInt64 {
        var options = FileEventLog.Options()
        options.durability = .always
        // The log's own messages (opened, recovered) mean nothing for a log being created.
        let quiet = Logger(label: "bureau.import") { _ in SwiftLogNoOpLogHandler() }
        let log = try FileEventLog(directory: directory, options: options, logger: quiet)
        var batch: [LogRecord] = []
        var lineNumber = 0
        var next: UInt64 = 1
        let progress = Progress(label: "importing")
        func flush() throws {
            guard !batch.isEmpty else { return }
            try log.append(batch)
            try log.commit()
            batch.removeAll(keepingCapacity: true)
        }
        do {
            var reader = LineReader(handle)
            while let line = try reader.next() {
                lineNumber += 1
                if line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") }) { continue }
                let record: LogRecord
                do {
                    record = try LogExchange.record(from: line, expecting: next)
                } catch {
                    throw CLIError("\(file) line \(lineNumber): \(error)")
                }
                batch.append(record)
                next += 1
                if batch.count >= 4096 { try flush() }
                progress.update(record.position)
            }
            try flush()
            try log.close()
        } catch {
            try? log.close()
            progress.finish()
            throw error
        }
        progress.finish()
        if next == 1 { throw CLIError("\(file) has no events") }
        return next - 1
    }
}

/// The JSON lines of `log export` and `log import`.
enum LogExchange {
    /// One line: the event as `log show --json` prints it, plus the stored envelope in base64.
    static func line(_ event: StoredEvent, envelope: Data) -> String {
        String(event.jsonLine.dropLast()) + ",\"envelope\":\"\(envelope.base64EncodedString())\"}"
    }

    /// What is wrong with one line.
    struct Problem: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The log record a line describes, which must be at position `expected`.
    static func record(from line: [UInt8], expecting expected: UInt64) throws -> LogRecord {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: Data(line))
        } catch {
            throw Problem("not JSON: \(error)")
        }
        guard case .object = value else { throw Problem("not a JSON object") }
        guard case .number(let positionText)? = value["position"], let position = UInt64(positionText) else {
            throw Problem("no \"position\" (a whole number)")
        }
        guard position == expected else {
            throw Problem(
                expected == 1
                    ? "the first event is at position \(position); an import starts at position 1 (export with --from 1)"
                    : "position \(position) where \(expected) should be: the excerpt has a hole or is out of order")
        }
        let body: Data
        if let envelope = value["envelope"] {
            guard case .string(let text) = envelope, let bytes = Data(base64Encoded: text) else {
                throw Problem("\"envelope\" is not base64")
            }
            body = bytes
        } else {
            body = try envelopeBytes(fromFields: value, position: position)
        }
        let event: StoredEvent
        do {
            event = try StoredEvent(envelopeBytes: body)
        } catch {
            throw Problem("the envelope does not decode: \(error)")
        }
        guard event.position == position else {
            throw Problem("the envelope says position \(event.position) but the line says \(position)")
        }
        if case .string(let text)? = value["id"], EventID(text) != event.id {
            throw Problem("the envelope's id is \(event.id) but the line says \(text)")
        }
        if case .string(let text)? = value["type"], text != event.type {
            throw Problem("the envelope's type is \(event.type) but the line says \(text)")
        }
        return LogRecord(position: position, id: event.id, body: body)
    }

    /// An envelope built from a line's readable fields (a line written or edited by hand).
    private static func envelopeBytes(fromFields value: JSONValue, position: UInt64) throws -> Data {
        func string(_ key: String) throws -> String {
            guard case .string(let text)? = value[key] else { throw Problem("no \"\(key)\" (a string)") }
            return text
        }
        func identifier(_ key: String) throws -> EventID {
            let text = try string(key)
            guard let id = EventID(text) else { throw Problem("\"\(key)\" '\(text)' is not an event id") }
            return id
        }
        let type = try string("type")
        let timeText = try string("time")
        guard let time = CommitTime(timeText) else { throw Problem("\"time\" '\(timeText)' is not an RFC 3339 time") }
        var causation: UInt64 = 0
        if let field = value["causation"] {
            guard case .number(let text) = field, let number = UInt64(text) else {
                throw Problem("\"causation\" is not a whole number")
            }
            causation = number
        }
        var process = ""
        var module = ""
        if case .string(let text)? = value["producer"]?["process"] { process = text }
        if case .string(let text)? = value["producer"]?["module"] { module = text }
        let payload: Data
        if case .string(let base64)? = value["payloadBase64"] {
            guard let bytes = Data(base64Encoded: base64) else { throw Problem("\"payloadBase64\" is not base64") }
            payload = bytes
        } else if let json = value["payload"], json != .null {
            guard let messageType = SchemaRegistry.messageType(named: type) else {
                throw Problem("type \(type) is unknown to this build; give its bytes as \"payloadBase64\"")
            }
            do {
                payload = try messageType.init(jsonString: json.description).serializedData()
            } catch {
                throw Problem("\"payload\" is not a valid \(type): \(error)")
            }
        } else {
            throw Problem("no \"payload\" and no \"payloadBase64\"")
        }
        let event = StoredEvent(
            position: position, id: try identifier("id"), type: type, commitTime: time, producerProcess: process,
            producerModule: module, causation: causation,
            correlation: value["correlation"] == nil ? .zero : try identifier("correlation"), payload: payload)
        do {
            return try event.envelope().serializedData()
        } catch {
            throw Problem("the envelope does not encode: \(error)")
        }
    }
}

/// Reads a file line by line without holding all of it.
struct LineReader {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEnd = false

    init(_ handle: FileHandle) {
        self.handle = handle
    }

    /// The next line without its newline; nil at the end.
    mutating func next() throws -> [UInt8]? {
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[start..<newline])
                start = newline + 1
                return line
            }
            if atEnd {
                guard start < buffer.count else { return nil }
                let line = Array(buffer[start...])
                start = buffer.count
                return line
            }
            buffer.removeFirst(start)
            start = 0
            let chunk = try handle.read(upToCount: 1 << 20) ?? Data()
            if chunk.isEmpty { atEnd = true } else { buffer.append(contentsOf: chunk) }
        }
    }
}

/// The events one intent caused, found in one pass over the log in order.
struct CorrelationChain {
    let intent: EventID
    /// The positions in the chain so far, with their depth under the intent.
    private var depths: [UInt64: Int] = [:]

    init(_ intent: EventID) {
        self.intent = intent
    }

    /// The event's depth in the chain (0 for the intent or a root), or nil if it is not in it.
    ///
    /// An event is in the chain if it is the intent, carries its correlation, or was caused by
    /// an event in the chain (which catches a producer that forgot the correlation).
    mutating func depth(of event: StoredEvent) -> Int? {
        let parent = event.causation == 0 ? nil : depths[event.causation]
        guard event.id == intent || event.correlation == intent || parent != nil else { return nil }
        let depth = parent.map { $0 + 1 } ?? 0
        depths[event.position] = depth
        return depth
    }
}
