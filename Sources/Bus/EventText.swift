/// Text from outside that goes into an event — a reason a server gave, a source's name — cut
/// to a size an event can always carry, so that the event reporting a problem is never itself
/// refused by the bus for its size.
public enum EventText {
    /// The default limit: room for a sentence and a URL, far below the bus's envelope limit.
    public static let defaultLimit = 2048

    /// `text`, or its first characters and "…" when it is over `limit` bytes of UTF-8.
    public static func bounded(_ text: String, limit: Int = defaultLimit) -> String {
        guard text.utf8.count > limit else { return text }
        var kept = ""
        var bytes = 0
        for character in text {
            let size = character.utf8.count
            guard bytes + size <= max(0, limit - 3) else { break }
            kept.append(character)
            bytes += size
        }
        return kept + "…"
    }
}
