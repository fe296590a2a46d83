import Guards
import Logging
import Synchronization

/// The log handler of every `bureau` process: lines to standard error as swift-log's
/// `StreamLogHandler` writes them, with every control character of the message and of each
/// metadata value escaped (``TerminalText``). A daemon logs what peers sent it (a verb, a
/// version, a type name, a reason), and whoever reads its log in a terminal must not run the
/// escape sequences a peer put there, nor see a line a peer forged with a newline.
struct TerminalSafeLogHandler: LogHandler {
    private var stream: StreamLogHandler

    init(label: String, level: Logger.Level) {
        stream = StreamLogHandler.standardError(label: label)
        stream.logLevel = level
    }

    /// The level a logger made from now on starts at: `--log-level`, once the command has read it.
    private static let processLevel = Mutex(Logger.Level.info)

    var logLevel: Logger.Level {
        get { stream.logLevel }
        set { stream.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { stream.metadata }
        set { stream.metadata = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { stream.metadataProvider }
        set { stream.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { stream[metadataKey: key] }
        set { stream[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        event.message = Logger.Message(stringLiteral: TerminalText.escaped(event.message.description))
        event.metadata = event.metadata?.mapValues(Self.escaped)
        stream.log(event: event)
    }

    private static func escaped(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        switch value {
        case .string(let text): .string(TerminalText.escaped(text))
        case .stringConvertible(let value): .string(TerminalText.escaped(value.description))
        case .array(let values): .array(values.map(escaped))
        case .dictionary(let values): .dictionary(values.mapValues(escaped))
        }
    }

    /// Makes it the handler of every logger of this process. Called once, by ``Bureau/main()``
    /// before any command runs, so that no command logs through another handler: every command
    /// may log what a peer, a file or a payload said (a daemon's refusal, a store's error).
    static func bootstrap() {
        LoggingSystem.bootstrap { label in
            TerminalSafeLogHandler(label: label, level: processLevel.withLock { $0 })
        }
    }

    /// The level of every logger made from now on (`--log-level`); the command sets it as it starts.
    static func setLevel(_ level: Logger.Level) {
        processLevel.withLock { $0 = level }
    }
}
