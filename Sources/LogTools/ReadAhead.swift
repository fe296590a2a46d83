import Foundation

/// Runs a source of items (records read from a log and decoded) on a thread of its own, a few
/// chunks ahead of the caller, so that reading, checksums and decoding overlap with what the
/// caller does with each item: a replay or a projection rebuild then takes about as long as
/// the slower of the two instead of their sum.
///
/// The source fills one ``Chunk`` at a time; items reach the caller in order and on the
/// caller's thread, and an error from the source reaches it after every item produced before
/// the error, as if read inline. Memory is bounded: at most ``depth`` chunks wait, besides the
/// one being filled and the one being read, and the source bounds each (``chunkItems``,
/// ``chunkBytes``). The source is used only by the reading thread, and not any more once
/// ``forEach(_:)`` returns or throws, so the caller may then look at it (a cursor's end) again.
final class ReadAhead<Item: Sendable>: @unchecked Sendable {
    /// What the source gives at a time.
    struct Chunk: Sendable {
        var items: [Item] = []
        /// Set on the last chunk when the source threw.
        var failure: (any Error)?
        /// No chunk follows this one.
        var isLast = false
    }

    /// How many items a source should put in a chunk, and about how many bytes: big enough
    /// that handing a chunk over (a wake-up of the other thread) costs little per item, small
    /// enough that the chunks in flight stay in the processor's cache. Measured with
    /// `bureau-bench replay`: chunks of 512 items, or of 16,384 items and 4 MiB, did worse.
    static var chunkItems: Int { 2048 }
    static var chunkBytes: Int { 512 << 10 }

    let depth: Int

    // Everything below is guarded by `condition`.
    private let condition = NSCondition()
    private var ready: [Chunk] = []
    /// Chunks the caller is done with, for the reading thread to free.
    private var returned: [[Item]] = []
    /// The reading thread has put its last chunk.
    private var sourceEnded = false
    /// The reading thread has returned: the source is no longer touched.
    private var threadEnded = false
    /// The caller wants no more items: the reading thread stops at its next chunk.
    private var stopRequested = false

    private struct Source: @unchecked Sendable {
        let fill: () -> Chunk
    }

    /// Reads `fill`'s chunks ahead and calls `body` with every item, as ``forEach(_:)`` says:
    /// `fill` gives the next chunk each time it is called, until one is last, on the reading
    /// thread only. Starting and reading are one call, so that no reading thread is left
    /// waiting for a caller that never came.
    static func forEach(depth: Int = 3, fill: @escaping () -> Chunk, _ body: (Item) throws -> Bool) throws {
        try ReadAhead(depth: depth, fill: fill).forEach(body)
    }

    /// The same for a source of one item at a time: `next` gives the next item, nil at the
    /// end; `weight` is an item's size in bytes, for the chunks' byte budget.
    static func forEach(
        weight: @escaping (Item) -> Int, next: @escaping () throws -> Item?, _ body: (Item) throws -> Bool
    ) throws {
        try ReadAhead(weight: weight, next: next).forEach(body)
    }

    private init(depth: Int = 3, fill: @escaping () -> Chunk) {
        self.depth = max(depth, 1)
        // The source (a cursor) is not Sendable, and need not be: from here on only the reading
        // thread calls it, and the caller gets it back only after that thread has returned.
        let source = Source(fill: fill)
        let thread = Thread { [self] in
            // Named for `top -H` and `perf report --sort comm` (15 characters at most).
            Thread.current.name = "bureau-readahea"
            produce(source.fill)
        }
        thread.start()
    }

    private convenience init(weight: @escaping (Item) -> Int, next: @escaping () throws -> Item?) {
        self.init { () -> Chunk in
            var chunk = Chunk()
            chunk.items.reserveCapacity(Self.chunkItems)
            var bytes = 0
            do {
                while chunk.items.count < Self.chunkItems && bytes < Self.chunkBytes {
                    guard let item = try next() else {
                        chunk.isLast = true
                        return chunk
                    }
                    bytes += weight(item)
                    chunk.items.append(item)
                }
            } catch {
                chunk.failure = error
                chunk.isLast = true
            }
            return chunk
        }
    }

    /// Calls `body` with every item in order until the source ends, `body` returns false or
    /// throws, or the source throws (rethrown here after the items before it).
    private func forEach(_ body: (Item) throws -> Bool) throws {
        defer { stopAndWait() }
        var spent: [Item] = []
        while let chunk = take(returning: &spent) {
            // Lent to `body`, not copied: a copy would retain what the item shares with its
            // chunk (the bodies' buffer, a type name) on this thread while the reading thread
            // retains the same objects for the next chunk, each retain a cache line passed
            // between the cores.
            let goOn = try chunk.items.withUnsafeBufferPointer { items in
                for index in items.indices {
                    guard try body(items[index]) else { return false }
                }
                return true
            }
            guard goOn else { return }
            if let failure = chunk.failure { throw failure }
            spent = chunk.items
        }
    }

    /// The next chunk, waiting for the reading thread; nil once the source has ended and every
    /// chunk was taken. Hands `spent`, the chunk the caller is done with, back to the reading
    /// thread: its items were allocated there and are freed there, since glibc frees memory of
    /// another thread's arena under that arena's lock, in contention with the reading thread's
    /// allocations (`bureau-bench replay` ran 15 % slower with the chunks freed by the caller).
    private func take(returning spent: inout [Item]) -> Chunk? {
        condition.lock()
        defer { condition.unlock() }
        if !spent.isEmpty {
            returned.append(spent)
            spent = []
        }
        while ready.isEmpty && !sourceEnded { condition.wait() }
        guard !ready.isEmpty else { return nil }
        let chunk = ready.removeFirst()
        condition.broadcast()
        return chunk
    }

    /// Tells the reading thread to stop and waits until it no longer touches the source.
    private func stopAndWait() {
        condition.lock()
        stopRequested = true
        ready.removeAll()
        condition.broadcast()
        while !threadEnded { condition.wait() }
        condition.unlock()
    }

    /// The reading thread's loop.
    private func produce(_ fill: () -> Chunk) {
        while true {
            let chunk = fill()
            guard put(chunk), !chunk.isLast else { break }
        }
        condition.lock()
        sourceEnded = true
        threadEnded = true
        condition.broadcast()
        condition.unlock()
    }

    /// Queues `chunk`, waiting while ``depth`` chunks wait already; false when the caller
    /// stopped reading.
    private func put(_ chunk: Chunk) -> Bool {
        condition.lock()
        while ready.count >= depth && !stopRequested { condition.wait() }
        guard !stopRequested else {
            condition.unlock()
            return false
        }
        ready.append(chunk)
        if chunk.isLast { sourceEnded = true }
        var spent: [[Item]] = []
        swap(&spent, &returned)
        condition.broadcast()
        condition.unlock()
        // Freed here, outside the lock.
        spent.removeAll()
        return true
    }
}
