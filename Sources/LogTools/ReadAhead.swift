import Foundation
import Guards

/// Runs a source of items (records read from a log and decoded) on a thread of its own, a few
/// chunks ahead of the caller, so that reading, checksums and decoding overlap with what the
/// caller does with each item: a replay or a projection rebuild then takes about as long as
/// the slower of the two instead of their sum.
///
/// The source gives one ``Part`` at a time: what the reading thread read (records and their
/// checksums: the source is the reading thread's alone), and the work left to make it a
/// ``Chunk`` (decoding), which whichever thread comes to it first does. The reading thread
/// does it while it has read enough ahead; a caller that has caught up does it itself rather
/// than wait. So the two threads share the decoding as their loads require: a caller with
/// much to do per item (a replay's reducers) leaves it all to the reading thread, one with
/// little (a projection rebuild) takes its share, and neither core waits for the other.
///
/// Items reach the caller in order and on the caller's thread, and an error from the source
/// reaches it after every item produced before the error, as if read inline. Memory is
/// bounded: at most ``depth`` parts wait, besides the one being read and the one the caller
/// holds, and the source bounds each (``chunkItems``, ``chunkBytes``); chunks the caller is
/// done with wait for the reading thread to free them at its next part (at most ``depth`` + 1
/// of them, each with its bodies), so about twice that in all. The source is not used
/// any more once ``forEach(depth:read:_:)`` returns or throws, so the caller may then look at
/// it (a cursor's end) again.
final class ReadAhead<Item: Sendable>: @unchecked Sendable {
    /// Items made from what the source read.
    struct Chunk: Sendable {
        var items: [Item] = []
        /// Set on the last chunk when the source threw.
        var failure: (any Error)?
        /// No chunk follows this one.
        var isLast = false
    }

    /// What the source read, and the work left to make it a chunk.
    struct Part: Sendable {
        /// Makes the chunk; called once, on either thread.
        var finish: @Sendable () -> Chunk
        /// Nothing is read after this part.
        var isLast: Bool
        /// The chunk, when the reading thread made it whole (nothing is left to share).
        var made: Chunk?

        init(finish: @escaping @Sendable () -> Chunk, isLast: Bool) {
            self.finish = finish
            self.isLast = isLast
        }

        /// A part the reading thread made whole.
        static func made(_ chunk: Chunk) -> Part {
            var part = Part(finish: { chunk }, isLast: chunk.isLast)
            part.made = chunk
            return part
        }
    }

    /// How many items a source should put in a chunk, and about how many bytes: big enough
    /// that handing a chunk over (a wake-up of the other thread) costs little per item, small
    /// enough that the chunks in flight stay in the processor's cache. Measured with
    /// `bureau-bench replay`: chunks of 512 items, or of 16,384 items and 4 MiB, did worse.
    static var chunkItems: Int { 2048 }
    static var chunkBytes: Int { 512 << 10 }

    let depth: Int

    /// A part in the queue: waiting for a thread to finish it, being finished, or finished.
    private final class Entry: @unchecked Sendable {
        /// The work, until a thread takes it.
        var part: Part?
        /// The chunk, once made.
        var chunk: Chunk?
        /// The reading thread made the chunk (and frees its items).
        var madeByReader = false

        init(_ part: Part) {
            if let made = part.made {
                chunk = made
                madeByReader = true
            } else {
                self.part = part
            }
        }
    }

    // Everything below is guarded by `condition`.
    private let condition = NSCondition()
    private var ready: [Entry] = []
    /// Chunks the caller is done with, made by the reading thread, for it to free.
    private var returned: [[Item]] = []
    /// The reading thread has put its last part.
    private var sourceEnded = false
    /// The reading thread has returned: the source is no longer touched.
    private var threadEnded = false
    /// The caller wants no more items: the reading thread stops at its next part.
    private var stopRequested = false

    /// Reads `read`'s parts ahead and calls `body` with every item, as ``forEach(_:)`` says:
    /// `read` reads the next part each time it is called, until one is last, on the reading
    /// thread only. Starting and reading are one call, so that no reading thread is left
    /// waiting for a caller that never came.
    static func forEach(depth: Int = 3, read: @escaping () -> Part, _ body: (Item) throws -> Bool) throws {
        try ReadAhead(depth: depth, read: read).forEach(body)
    }

    /// The same for a source of one item at a time: `next` gives the next item, nil at the
    /// end; `weight` is an item's size in bytes, for the chunks' byte budget. The reading
    /// thread makes each item whole.
    static func forEach(
        weight: @escaping (Item) -> Int, next: @escaping () throws -> Item?, _ body: (Item) throws -> Bool
    ) throws {
        try ReadAhead(weight: weight, next: next).forEach(body)
    }

    private init(depth: Int = 3, read: @escaping () -> Part) throws {
        self.depth = max(depth, 1)
        // The source (a cursor) is not Sendable, and need not be: from here on only the reading
        // thread calls it, and the caller gets it back only after that thread has returned.
        let source = UncheckedBox(read)
        // Named for `top -H` and `perf report --sort comm` (15 characters at most). The thread
        // names itself before it reads (Foundation's `Thread.name`, set from inside, did not
        // always reach the system under load).
        try OwnThread.detached(name: "bureau-readahead") { [self] in produce(source.value) }
    }

    private convenience init(weight: @escaping (Item) -> Int, next: @escaping () throws -> Item?) throws {
        try self.init { () -> Part in
            var chunk = Chunk()
            chunk.items.reserveCapacity(Self.chunkItems)
            var bytes = 0
            do {
                while chunk.items.count < Self.chunkItems && bytes < Self.chunkBytes {
                    guard let item = try next() else {
                        chunk.isLast = true
                        break
                    }
                    bytes += weight(item)
                    chunk.items.append(item)
                }
            } catch {
                chunk.failure = error
                chunk.isLast = true
            }
            return Part.made(chunk)
        }
    }

    /// Calls `body` with every item in order until the source ends, `body` returns false or
    /// throws, or the source throws (rethrown here after the items before it).
    private func forEach(_ body: (Item) throws -> Bool) throws {
        defer { stopAndWait() }
        var spent: [Item] = []
        while let (chunk, madeByReader) = take(returning: &spent) {
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
            // A chunk goes back to the thread that made it, to be freed there: glibc frees memory
            // of another thread's arena under that arena's lock, in contention with that thread's
            // allocations (`bureau-bench replay` ran 15 % slower with the chunks freed here).
            if madeByReader { spent = chunk.items }
        }
    }

    /// The next chunk, and whether the reading thread made it; nil once the source has ended
    /// and every chunk was taken. Makes the chunk here when its part is still waiting for a
    /// thread, and waits only while the reading thread is making it. Hands `spent`, items the
    /// caller is done with, back to the reading thread to free.
    private func take(returning spent: inout [Item]) -> (Chunk, Bool)? {
        condition.lock()
        if !spent.isEmpty {
            returned.append(spent)
            spent = []
        }
        while true {
            while ready.isEmpty && !sourceEnded { condition.wait() }
            guard let entry = ready.first else {
                condition.unlock()
                return nil
            }
            if let chunk = entry.chunk {
                ready.removeFirst()
                condition.broadcast()
                condition.unlock()
                return (chunk, entry.madeByReader)
            }
            if let part = entry.part {
                entry.part = nil
                ready.removeFirst()
                condition.broadcast()
                condition.unlock()
                return (part.finish(), false)
            }
            // The reading thread is making it.
            condition.wait()
        }
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
    private func produce(_ read: () -> Part) {
        while true {
            let part = read()
            guard put(Entry(part), isLast: part.isLast), !part.isLast else { break }
        }
        condition.lock()
        sourceEnded = true
        threadEnded = true
        condition.broadcast()
        condition.unlock()
    }

    /// Queues `entry`, the last if `isLast`; false when the caller stopped reading. While ``depth`` parts wait
    /// already, makes the oldest waiting one a chunk rather than sit idle, and waits only when
    /// none is left to make.
    private func put(_ entry: Entry, isLast: Bool) -> Bool {
        condition.lock()
        while ready.count >= depth && !stopRequested {
            guard let waiting = ready.first(where: { $0.part != nil }), let part = waiting.part else {
                condition.wait()
                continue
            }
            waiting.part = nil
            condition.unlock()
            let chunk = part.finish()
            condition.lock()
            waiting.chunk = chunk
            waiting.madeByReader = true
            condition.broadcast()
        }
        guard !stopRequested else {
            condition.unlock()
            return false
        }
        ready.append(entry)
        if isLast { sourceEnded = true }
        var spent: [[Item]] = []
        swap(&spent, &returned)
        condition.broadcast()
        condition.unlock()
        // Freed here, outside the lock.
        spent.removeAll()
        return true
    }
}
