/// A value handed to code on another thread that alone uses it from then on: a socket moved to
/// the thread that owns it, a loop to the thread that runs it, a file to the thread that syncs it.
///
/// `@unchecked`: Swift cannot see that no two threads touch the value at once; whoever boxes it
/// promises so, and says why where it does. The one such box (CONTRIBUTING.md, "One of each").
public final class UncheckedBox<Value: ~Copyable>: @unchecked Sendable {
    public let value: Value

    public init(_ value: consuming Value) {
        self.value = value
    }
}
