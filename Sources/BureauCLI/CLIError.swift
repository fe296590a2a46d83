/// A command failed for a reason the person running it can act on; printed as is.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
