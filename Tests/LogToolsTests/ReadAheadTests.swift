import Foundation
import Synchronization
import Testing

@testable import LogTools

/// The tools' read-ahead: a source read on a thread of its own, handed over in order, bounded.
struct ReadAheadTests {
    struct Broken: Error, Equatable {}

    /// A source of the numbers 0..<`count` that throws at `failAt`, counting its calls.
    final class Numbers: @unchecked Sendable {
        let count: Int
        let failAt: Int?
        let produced = Atomic<Int>(0)
        let taken = Atomic<Int>(0)
        /// The most items the source was ever ahead of the caller.
        let furthestAhead = Atomic<Int>(0)

        init(count: Int, failAt: Int? = nil) {
            self.count = count
            self.failAt = failAt
        }

        func next() throws -> Int? {
            let next = produced.load(ordering: .sequentiallyConsistent)
            guard next < count else { return nil }
            if next == failAt { throw Broken() }
            produced.add(1, ordering: .sequentiallyConsistent)
            let ahead = next + 1 - taken.load(ordering: .sequentiallyConsistent)
            furthestAhead.max(ahead, ordering: .sequentiallyConsistent)
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

    @Test func theSourceIsNeverMoreThanAFewChunksAheadOfASlowCaller() throws {
        let numbers = Numbers(count: ReadAhead<Int>.chunkItems * 40)
        let fill = { () -> ReadAhead<Int>.Chunk in
            // A whole chunk at a time, as the log's reader fills them.
            var chunk = ReadAhead<Int>.Chunk()
            while chunk.items.count < ReadAhead<Int>.chunkItems {
                guard let number = try? numbers.next() else {
                    chunk.isLast = true
                    break
                }
                chunk.items.append(number)
            }
            return chunk
        }
        var count = 0
        try ReadAhead<Int>.forEach(depth: 3, fill: fill) { _ in
            if count == 0 {
                // A caller slow to take its first item: the source fills until it must wait
                // (five chunks), and would run on to the end if nothing held it.
                let deadline = ContinuousClock.now + .seconds(10)
                while numbers.produced.load(ordering: .sequentiallyConsistent) < ReadAhead<Int>.chunkItems * 5,
                    ContinuousClock.now < deadline
                {
                    usleep(200)
                }
            }
            count += 1
            numbers.taken.add(1, ordering: .sequentiallyConsistent)
            return true
        }

        #expect(count == ReadAhead<Int>.chunkItems * 40)
        #expect(numbers.furthestAhead.load(ordering: .sequentiallyConsistent) >= ReadAhead<Int>.chunkItems * 5)
        // Three waiting, one being read by the caller, one being filled.
        #expect(numbers.furthestAhead.load(ordering: .sequentiallyConsistent) <= ReadAhead<Int>.chunkItems * 5)
    }
}
