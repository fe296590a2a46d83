import Runtime

/// A reducer that behaves as `inner` except for the outputs of the input at one position:
/// the "deliberately changed reducer" that verification must catch.
public struct AlteredReducer<Inner: Reducer>: Reducer {
    public let inner: Inner
    public let position: UInt64
    public let alter: @Sendable ([Emitted]) -> [Emitted]

    public init(inner: Inner, at position: UInt64, alter: @escaping @Sendable ([Emitted]) -> [Emitted]) {
        self.inner = inner
        self.position = position
        self.alter = alter
    }

    public var module: String { inner.module }
    public var stateVersion: Int { inner.stateVersion }
    public var initialState: Inner.State { inner.initialState }
    public var inputs: InputDecoder<Inner.Input> { inner.inputs }
    public var outputTypes: [String] { inner.outputTypes }

    public func reduce(state: inout Inner.State, input: Envelope<Inner.Input>) -> [Emitted] {
        let outputs = inner.reduce(state: &state, input: input)
        return input.position == position ? alter(outputs) : outputs
    }
}
