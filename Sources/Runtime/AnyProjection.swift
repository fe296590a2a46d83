import Bus

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A projection with its type erased, so a registry can hold several.
public struct AnyProjection: Sendable {
    public let name: String
    public let inputTypes: [String]
    @usableFromInline let makeFold: @Sendable () -> ProjectionFold

    /// Inlinable, so that the folds it makes are compiled for `P` where it is called.
    @inlinable
    public init<P: Projection>(_ projection: P) {
        name = projection.name
        inputTypes = projection.inputTypes
        makeFold = { ProjectionFold(projection) }
    }

    /// A fresh fold, starting from the projection's initial value.
    public func fold() -> ProjectionFold { makeFold() }
}
