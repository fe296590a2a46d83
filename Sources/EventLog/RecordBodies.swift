#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The bodies of many records read together, one after another in memory of their own, handed
/// over at the end as one `Data` without a copy (``data()``).
///
/// For readers that take many records at a time (the tools' read-ahead): one allocation for
/// many bodies, freed together when the last slice of them goes. Appending to a `Data` instead
/// cost each record an exclusivity check, a uniqueness check and a representation switch, a
/// seventh of the reading thread's time.
public struct RecordBodies: ~Copyable {
    private var memory: UnsafeMutableRawBufferPointer
    /// How many bytes the bodies take so far.
    public private(set) var count = 0

    /// Room for `capacity` bytes; it grows if more come.
    public init(capacity: Int) {
        memory = .allocate(byteCount: max(capacity, 64), alignment: 16)
    }

    deinit { memory.deallocate() }

    /// Appends `bytes`; where they lie among the bodies.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) -> Range<Int> {
        if count + bytes.count > memory.count {
            let grown = UnsafeMutableRawBufferPointer.allocate(
                byteCount: max(memory.count * 2, count + bytes.count), alignment: 16)
            grown.copyMemory(from: UnsafeRawBufferPointer(rebasing: memory[..<count]))
            memory.deallocate()
            memory = grown
        }
        let range = count..<count + bytes.count
        UnsafeMutableRawBufferPointer(rebasing: memory[range]).copyMemory(from: bytes)
        count = range.upperBound
        return range
    }

    /// The bodies as one `Data` (indices from 0), which frees the memory when it and every
    /// slice of it are gone.
    public consuming func data() -> Data {
        let memory = self.memory
        let count = self.count
        discard self
        guard let base = memory.baseAddress else { return Data() }
        return Data(bytesNoCopy: base, count: count, deallocator: .custom { pointer, _ in pointer.deallocate() })
    }
}
