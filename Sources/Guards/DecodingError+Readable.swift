extension DecodingError {
    /// The field of the JSON (or other coded input) that was wrong, if one was.
    public var field: String? {
        switch self {
        case .keyNotFound(let key, _): key.stringValue
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            context.codingPath.last?.stringValue
        @unknown default: nil
        }
    }

    /// What was wrong, in a line a user reads ("the field 'amount' is missing"), where the
    /// error's own description is a dump of coding keys and contexts.
    public var readable: String {
        switch self {
        case .keyNotFound(let key, _): "the field '\(key.stringValue)' is missing"
        case .typeMismatch(_, let context):
            "the field '\(context.codingPath.last?.stringValue ?? "?")' has the wrong type"
        case .valueNotFound(_, let context): "the field '\(context.codingPath.last?.stringValue ?? "?")' is null"
        case .dataCorrupted(let context):
            context.codingPath.isEmpty
                ? "the body is not JSON" : "the field '\(context.codingPath.last?.stringValue ?? "?")' is malformed"
        @unknown default: "the body is not what was expected"
        }
    }
}
