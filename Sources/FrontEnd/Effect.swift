import Bus
import Runtime

/// What handling a key asks the outside world to do; the key handler itself does nothing.
public enum Effect: Sendable, Equatable {
    /// Route this command URL and publish the request it becomes: the session picks the
    /// request's id (its trace's, when traced) and hands both back as
    /// ``SessionInput/dispatched(_:id:)``, which records the request and says what to publish.
    case dispatch(String)
    /// Publish this request (recorded as pending under its id).
    case publish(OutgoingEvent)
    case quit
    /// Subscribe to every event after `position`, once `delay` has passed.
    case subscribe(after: UInt64, delay: Duration)

    /// Dispatches a URL built by a command's typed builder.
    public static func dispatch(_ url: CommandURL) -> Effect { .dispatch(url.text) }
}
