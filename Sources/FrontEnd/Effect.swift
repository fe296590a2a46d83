import Runtime

/// What handling a key asks the outside world to do; the key handler itself does nothing.
public enum Effect: Sendable, Equatable {
    /// Route this command URL and publish the request it becomes.
    case dispatch(String)
    case quit
    /// Subscribe to every event after `position`, once `delay` has passed.
    case subscribe(after: UInt64, delay: Duration)

    /// Dispatches a URL built by a command's typed builder.
    public static func dispatch(_ url: CommandURL) -> Effect { .dispatch(url.text) }
}
