/// A count with its noun, singular or plural as English wants: "1 process", "3 processes",
/// "1 time", "2 times" — for messages a person reads.
public func counted(_ count: Int, _ singular: String, _ plural: String? = nil) -> String {
    "\(count) \(count == 1 ? singular : plural ?? singular + "s")"
}
