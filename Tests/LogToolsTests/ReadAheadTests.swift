import Foundation
import Guards
import Synchronization
import Testing

@testable import LogTools

/// The tools' read-ahead: a source read on a thread of its own, handed over in order, bounded.
@Suite(.timeLimit(.minutes(1)), .ownThreads)
struct ReadAheadTests {
    struct Broken: Error, Equatable {}

    /// What a thread waits for the others to bring about: told of each change, it looks again.
    final class Changes: Sendable {
        private let condition = NSCondition()

        /// Something the waiter looks at has changed.
        func changed() {
            condition.lock()
            condition.broadcast()
            condition.unlock()
        }

        /// Blocks until `holds` is true or `deadline` passes; whether it holds.
        func wait(until deadline: Date, for holds: () -> Bool) -> Bool {
            condition.lock()
            defer { condition.unlock() }
            while !holds() {
                if !condition.wait(until: deadline) { return holds() }
            }
            return true
        }
    }

    /// A source of the numbers 0..<`count` that throws at `failAt`, counting its calls.
    final class Numbers: Sendable {
        let count: Int
        let failAt: Int?
        let produced = Atomic<Int>(0)
        let taken = Atomic<Int>(0)
        /// The most items the source was ever ahead of the caller.
        let furthestAhead = Atomic<Int>(0)
        /// Told of each item produced.
        let changes: Changes?

        init(count: Int, failAt: Int? = nil, changes: Changes? = nil) {
            self.count = count
            self.failAt = failAt
            self.changes = changes
        }

        func next() throws -> Int? {
            let next = produced.load(ordering: .sequentiallyConsistent)
            guard next < count else { return nil }
            if next == failAt { throw Broken() }
            produced.add(1, ordering: .sequentiallyConsistent)
            let ahead = next + 1 - taken.load(ordering: .sequentiallyConsistent)
            furthestAhead.max(ahead, ordering: .sequentiallyConsistent)
            changes?.changed()
            return next
        }

        func read(stoppingAt stop: Int? = nil) throws -> [Int] {
            var seen: [Int] = []
            try ReadAhead<Int>.forEach(weight: { _ in 8 }, next: next) { number in
                seen.append(number)
                taken.add(1, ordering: .sequentiallyConsistent)
                return seen.count != stop
            }
            return seen
        }
    }

    @Test func everyItemComesOnceInOrderAcrossManyChunks() throws {
        let count = ReadAhead<Int>.chunkItems * 5 + 17
        #expect(try Numbers(count: count).read() == Array(0..<count))
    }

    @Test func anEmptySourceGivesNothing() throws {
        #expect(try Numbers(count: 0).read() == [])
    }

    @Test func theSourcesErrorComesAfterEveryItemBeforeIt() {
        let failAt = ReadAhead<Int>.chunkItems * 2 + 5
        let numbers = Numbers(count: failAt * 2, failAt: failAt)
        var seen: [Int] = []
        #expect(throws: Broken.self) {
            try ReadAhead<Int>.forEach(weight: { _ in 8 }, next: numbers.next) { number in
                seen.append(number)
                return true
            }
        }
        #expect(seen == Array(0..<failAt))
    }

    @Test func stoppingEarlyLeavesTheSourceAloneOnceForEachReturns() throws {
        let numbers = Numbers(count: 1_000_000)
        let seen = try numbers.read(stoppingAt: 10)
        let producedWhenReturned = numbers.produced.load(ordering: .sequentiallyConsistent)

        #expect(seen == Array(0..<10))
        // The reading thread had ended: nothing more is read from the source after the return.
        #expect(numbers.produced.load(ordering: .sequentiallyConsistent) == producedWhenReturned)
        #expect(producedWhenReturned < 1_000_000)
    }

    @Test func anErrorFromTheCallerStopsTheReadingAndIsRethrown() {
        let numbers = Numbers(count: 1_000_000)
        #expect(throws: Broken.self) {
            try ReadAhead<Int>.forEach(weight: { _ in 8 }, next: numbers.next) { number in
                if number == 3 { throw Broken() }
                return true
            }
        }
        #expect(numbers.produced.load(ordering: .sequentiallyConsistent) < 1_000_000)
    }

    /// Who made each part's chunk: the reading thread or the caller's. Told apart by the
    /// caller's thread, which the test names as it starts: there are only the two.
    final class Makers: Sendable {
        private let made = Mutex<[Int: Bool]>([:])
        private let caller = Mutex<pthread_t?>(nil)
        /// Told of each chunk made.
        private let changes: Changes?

        init(changes: Changes? = nil) { self.changes = changes }

        /// Call first thing on the caller's thread.
        func callerStarted() { caller.withLock { $0 = pthread_self() } }
        func record(_ part: Int) {
            let isCaller = caller.withLock { caller in caller.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
            made.withLock { $0[part] = !isCaller }
            changes?.changed()
        }
        func byReader(_ part: Int) -> Bool? { made.withLock { $0[part] } }
    }

    /// A source that reads whole chunks of `numbers` at a time, as the log's reader does, and
    /// leaves making each chunk to whichever thread comes to it, recording which did.
    static func parts(
        of numbers: Numbers, makers: Makers, beforeReading: @escaping (Int) -> Void = { _ in }
    ) -> () -> ReadAhead<Int>.Part {
        var index = 0
        return {
            beforeReading(index)
            var items: [Int] = []
            var isLast = false
            while items.count < ReadAhead<Int>.chunkItems {
                guard let number = try? numbers.next() else {
                    isLast = true
                    break
                }
                items.append(number)
            }
            let part = index
            index += 1
            let (read, last) = (items, isLast)
            return ReadAhead<Int>.Part(
                finish: {
                    makers.record(part)
                    return ReadAhead<Int>.Chunk(items: read, isLast: last)
                }, isLast: last)
        }
    }

    @Test func theSourceIsNeverMoreThanAFewChunksAheadOfASlowCallerAndMakesTheirChunksMeanwhile() async throws {
        let changes = Changes()
        let numbers = Numbers(count: ReadAhead<Int>.chunkItems * 40, changes: changes)
        let makers = Makers(changes: changes)
        // The caller's loop blocks (it is a slow caller on purpose): on a thread of its own, not
        // on the cooperative pool.
        let (count, waited) = try await OwnThread.run(name: "test-caller") { () throws -> (Int, String) in
            makers.callerStarted()
            var count = 0
            var waited = ""
            try ReadAhead<Int>.forEach(depth: 3, read: Self.parts(of: numbers, makers: makers)) { _ in
                if count == 0 {
                    // A caller slow to take its first item: the source reads until it must wait
                    // (five chunks), and would run on to the end if nothing held it; waiting for
                    // room, it makes the three waiting parts' chunks. Alone this takes milliseconds.
                    // (Runs of the whole suite on two cores once found parts made "by the caller"
                    // here: the makers were told apart by Foundation's thread name, which under load
                    // did not always reach the reading thread. They are told apart by thread now.)
                    let reached = changes.wait(until: Date(timeIntervalSinceNow: 30)) {
                        numbers.produced.load(ordering: .sequentiallyConsistent) >= ReadAhead<Int>.chunkItems * 5
                            && makers.byReader(3) != nil
                    }
                    waited =
                        "produced \(numbers.produced.load(ordering: .sequentiallyConsistent)) items, "
                        + "part 3 made by the reader: \(String(describing: makers.byReader(3))), "
                        + "within the bound: \(reached)"
                }
                count += 1
                numbers.taken.add(1, ordering: .sequentiallyConsistent)
                return true
            }
            return (count, waited)
        }

        #expect(count == ReadAhead<Int>.chunkItems * 40)
        #expect(numbers.furthestAhead.load(ordering: .sequentiallyConsistent) >= ReadAhead<Int>.chunkItems * 5)
        // Three waiting, one being read by the caller, one being read.
        #expect(numbers.furthestAhead.load(ordering: .sequentiallyConsistent) <= ReadAhead<Int>.chunkItems * 5)
        // While it waited for room, the reading thread made the waiting parts' chunks.
        #expect(
            makers.byReader(1) == true && makers.byReader(2) == true && makers.byReader(3) == true,
            "after the first item's wait: \(waited)")
    }

    @Test func aCallerThatHasCaughtUpMakesTheChunkItselfRatherThanWait() async throws {
        let numbers = Numbers(count: ReadAhead<Int>.chunkItems * 3)
        let makers = Makers()
        let firstTaken = DispatchSemaphore(value: 0)
        // The reading thread stops before its second chunk until the caller has the first: only
        // the caller can make the first one.
        // The reading thread waits on a semaphore: the caller's loop runs on a thread of its own.
        let seen = try await OwnThread.run(name: "test-caller") { () throws -> [Int] in
            makers.callerStarted()
            let read = Self.parts(of: numbers, makers: makers) { part in
                if part == 1 { firstTaken.wait() }
            }
            var seen: [Int] = []
            try ReadAhead<Int>.forEach(depth: 3, read: read) { number in
                if seen.isEmpty { firstTaken.signal() }
                seen.append(number)
                return true
            }
            return seen
        }

        #expect(seen == Array(0..<ReadAhead<Int>.chunkItems * 3))
        #expect(makers.byReader(0) == false)
    }
}
