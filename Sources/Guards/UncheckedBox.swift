/// The one unchecked-Sendable box: a value on the heap behind a pointer, for the two uses Swift's
/// checker cannot follow.
///
/// - A value handed to code on another thread that alone uses it from then on: a socket moved to
///   the thread that owns it, a loop to the thread that runs it, a file to the thread that syncs it.
/// - A value that closures share and change in place, on one thread: a replay's reducer state, a
///   projection's value, changed for every event folded. The value lives behind a pointer rather
///   than in a stored `var` because a class's `var` costs a run-time exclusivity check at each
///   access (`swift_beginAccess`, a thread-local lookup), a few percent of replay's folding thread.
///
/// `@unchecked`: Swift cannot see that no two threads touch the value at once; whoever boxes it
/// promises so, and says why where it does (CONTRIBUTING.md, "One of each").
public final class UncheckedBox<Value: ~Copyable>: @unchecked Sendable {
    @usableFromInline let pointer: UnsafeMutablePointer<Value>

    @inlinable public init(_ value: consuming Value) {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: value)
    }

    deinit {
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }

    /// The value, read and changed in place.
    @inlinable public var value: Value {
        unsafeAddress { UnsafePointer(pointer) }
        unsafeMutableAddress { pointer }
    }
}
