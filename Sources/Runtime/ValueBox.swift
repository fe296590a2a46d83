/// A value on the heap that closures share and change in place: a replay's reducer state, a
/// projection's value, changed for every event folded.
///
/// The value lives behind a pointer rather than in a stored `var`: a class's `var` costs a
/// run-time exclusivity check at each access (`swift_beginAccess`, a thread-local lookup), a
/// few percent of replay's folding thread. What the check guards against cannot happen here:
/// a fold runs on one thread, and nothing it calls can reach the box while it changes the value.
@usableFromInline
final class ValueBox<Value>: @unchecked Sendable {
    @usableFromInline let pointer: UnsafeMutablePointer<Value>

    @inlinable init(_ value: Value) {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: value)
    }

    deinit {
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }

    @inlinable var value: Value {
        unsafeAddress { UnsafePointer(pointer) }
        unsafeMutableAddress { pointer }
    }
}
