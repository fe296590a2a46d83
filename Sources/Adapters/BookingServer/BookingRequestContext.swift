import Hummingbird
import NIOCore

/// Hummingbird's request context, with the connection the request came on, so that the
/// simulation can cut it (see ``BookingServer/Configuration/cutRate``).
struct BookingRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}
