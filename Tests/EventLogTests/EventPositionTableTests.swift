import EventLog
import Foundation
import TestSupport
import Testing

struct EventPositionTableTests {
    /// Ids whose halves differ in few bits, as a producer counting ids would make them.
    static func sequentialID(_ number: UInt64) -> EventID {
        EventID(high: 0x4000, low: number)
    }

    // Off the pool: 200,000 steps are a third of a second of a debug build's work.
    @Test(.ownThreads) func answersWhatADictionaryAnswersThroughInsertsRemovalsAndGrowth() {
        var table = EventPositionTable(minimumCapacity: 8)
        var model: [EventID: UInt64] = [:]
        var generator = TestSeed.generator(for: "position table: the steps")
        var known: [EventID] = []
        for step in 1...200_000 {
            let roll = generator.next() % 10
            if roll < 6 || known.isEmpty {
                let id =
                    roll == 0
                    ? Self.sequentialID(generator.next() % 5_000)
                    : EventID(high: generator.next(), low: generator.next())
                let position = UInt64(step)
                table.set(id, to: position)
                model[id] = position
                known.append(id)
            } else if roll < 9 {
                let id = known[Int(generator.next() % UInt64(known.count))]
                table.remove(id)
                model[id] = nil
            } else {
                let id = known[Int(generator.next() % UInt64(known.count))]
                #expect(table[id] == model[id], "step \(step)")
            }
        }
        #expect(table.count == model.count)
        for id in known {
            #expect(table[id] == model[id])
        }
    }

    @Test func removingFromTheMiddleOfAProbeRunKeepsTheEntriesAfterItFindable() {
        // A table far too small, so that runs wrap around its end.
        var table = EventPositionTable(minimumCapacity: 4)
        let ids = (1...8).map { Self.sequentialID($0) }
        for (index, id) in ids.enumerated() { table.set(id, to: UInt64(index + 1)) }
        for id in ids.prefix(4) { table.remove(id) }
        for (index, id) in ids.enumerated().dropFirst(4) {
            #expect(table[id] == UInt64(index + 1))
        }
        for id in ids.prefix(4) { #expect(table[id] == nil) }
        #expect(table.count == 4)
    }

    @Test func aConditionalRemovalLeavesAnIDStoredAtAnotherPosition() {
        var table = EventPositionTable(minimumCapacity: 4)
        let id = Self.sequentialID(9)
        table.set(id, to: 5)
        table.remove(id, ifAt: 4)
        #expect(table[id] == 5)
        table.remove(id, ifAt: 5)
        #expect(table[id] == nil)
        #expect(table.count == 0)
    }

    @Test func settingPositionZeroRemovesTheID() {
        var table = EventPositionTable(minimumCapacity: 4)
        let id = Self.sequentialID(7)
        table.set(id, to: 3)
        table.set(id, to: 0)
        #expect(table[id] == nil)
        #expect(table.count == 0)
    }

    @Test func aWindowForgetsTheOldestBeyondItsCapacityAndNothingElse() {
        var window = DeduplicationWindow(capacity: 1000)
        let ids = (1...5000).map { _ in EventID.random() }
        for (index, id) in ids.enumerated() { window.insert(id, at: UInt64(index + 1)) }
        #expect(window.count == 1000)
        #expect(ids.prefix(4000).allSatisfy { window.position(of: $0) == nil })
        #expect(ids.enumerated().dropFirst(4000).allSatisfy { window.position(of: $1) == UInt64($0 + 1) })
    }

    @Test func aWindowLargerThanItsFirstTableGrowsAndStillForgetsOnlyTheOldest() {
        // Given a window three times what its table first holds,
        let capacity = 3 * DeduplicationWindow.initialTableCapacity
        var window = DeduplicationWindow(capacity: capacity)
        // when five times that many ids come,
        let ids = (1...(5 * DeduplicationWindow.initialTableCapacity)).map { _ in EventID.random() }
        for (index, id) in ids.enumerated() { window.insert(id, at: UInt64(index + 1)) }
        // then the last `capacity` are remembered at their positions, and only they.
        let forgotten = ids.count - capacity
        #expect(window.count == capacity)
        #expect(ids.prefix(forgotten).allSatisfy { window.position(of: $0) == nil })
        #expect(ids.enumerated().dropFirst(forgotten).allSatisfy { window.position(of: $1) == UInt64($0 + 1) })
    }

    @Test func anIDThatCameAgainIsRememberedUntilItsNewerPositionLeavesTheWindow() {
        var window = DeduplicationWindow(capacity: 10)
        let repeated = EventID.random()
        window.insert(repeated, at: 1)
        for position in 2...5 { window.insert(.random(), at: UInt64(position)) }
        window.insert(repeated, at: 6)
        // Position 1 leaves the window at position 11, position 6 at position 16.
        for position in 7...15 { window.insert(.random(), at: UInt64(position)) }
        #expect(window.position(of: repeated) == 6)
        window.insert(.random(), at: 16)
        #expect(window.position(of: repeated) == nil)
    }

    @Test func lookingUpManyIDsAtOnceAnswersWhatOneLookupAfterAnotherDoes() {
        // Small, so that probe runs are long and wrap around the end of the table.
        var table = EventPositionTable(minimumCapacity: 64)
        let stored = (1...64).map { Self.sequentialID($0 * 7) }
        for (index, id) in stored.enumerated() { table.set(id, to: UInt64(index + 1)) }
        for id in stored.prefix(10) { table.remove(id) }
        let asked = stored + (1...40).map { Self.sequentialID($0 * 7 + 3) } + stored.reversed()

        let together = table.positions(of: asked)

        #expect(together == asked.map { table[$0] })
        #expect(together.compactMap { $0 }.count == 2 * 54)
        #expect(table.positions(of: []).isEmpty)
    }

    @Test func aWindowFedInBatchesThatWrapItsRingForgetsWhatOneByOneWould() {
        var batched = DeduplicationWindow(capacity: 1000)
        var single = DeduplicationWindow(capacity: 1000)
        let ids = (1...5000).map { _ in EventID.random() }
        var position: UInt64 = 0
        // Batches of 333 and 777 wrap the ring at different points.
        for (batch, size) in zip(0..., [333, 777, 333, 777, 1500, 1280]) {
            let start = [0, 333, 1110, 1443, 2220, 3720][batch]
            let records = ids[start..<start + size].map { id in
                position += 1
                return LogRecord(position: position, id: id, body: Data())
            }
            batched.insert(records)
            for record in records { single.insert(record.id, at: record.position) }
        }

        #expect(batched.count == 1000)
        #expect(batched.positions(of: ids) == single.positions(of: ids))
        #expect(batched.positions(of: ids) == ids.map { single.position(of: $0) })
        #expect(ids.suffix(1000).allSatisfy { batched.position(of: $0) != nil })
    }

    @Test func claimingAnswersWhatALookupAnswersAndNumbersTheNewIDsRepeatsIncluded() {
        var table = EventPositionTable(minimumCapacity: 64)
        let stored = (1...20).map { Self.sequentialID($0) }
        for (index, id) in stored.enumerated() { table.set(id, to: UInt64(index + 1)) }
        let new = (100...110).map { Self.sequentialID($0) }
        let ids = [stored[3], new[0], new[1], stored[3], new[0]] + new.dropFirst(2) + [new[1]]

        let claimed = table.claim(ids, from: 21)

        #expect(
            claimed
                == EventPositionTable.claims(ids, known: ids.map { stored.contains($0) ? table[$0] : nil }, from: 21))
        let expected: [UInt64?] = [4, nil, nil, 4, 21] + Array(repeating: nil, count: 9) + [22]
        #expect(claimed == expected)
        #expect(new.enumerated().allSatisfy { table[$1] == 21 + UInt64($0) }, "each new id stored at its number")
        #expect(table.count == 31)
    }

    @Test func claimsTakeTheirPlacesInTheWindowWhenExactlyTheirRecordsAreAppended() {
        var claimedWindow = DeduplicationWindow(capacity: 100)
        var plainWindow = DeduplicationWindow(capacity: 100)
        let ids = (1...350).map { _ in EventID.random() }
        var position: UInt64 = 1
        // Batches that wrap the ring, one of them with an id repeated.
        for range in [0..<80, 80..<200, 200..<350] {
            var batchIDs = Array(ids[range])
            if range.lowerBound == 80 { batchIDs.insert(ids[85], at: 10) }
            let claimed = claimedWindow.claim(batchIDs, from: position)
            #expect(claimed.filter { $0 != nil }.count == (range.lowerBound == 80 ? 1 : 0))
            var entries: [RecordBatch.Entry] = []
            var batch = RecordBatch()
            for (id, found) in zip(batchIDs, claimed) where found == nil {
                batch.append(position: position, id: id, body: Data([1]))
                position += 1
            }
            entries = batch.entries
            claimedWindow.insert(entries)
            plainWindow.insert(entries)
        }

        #expect(claimedWindow.count == 100)
        #expect(claimedWindow.positions(of: ids) == plainWindow.positions(of: ids))
        #expect(ids.suffix(100).allSatisfy { claimedWindow.position(of: $0) != nil })
    }

    @Test func claimsNotAppendedAreForgotten() {
        var window = DeduplicationWindow(capacity: 100)
        let kept = (1...10).map { _ in EventID.random() }
        _ = window.claim(kept, from: 1)
        var batch = RecordBatch()
        for (index, id) in kept.enumerated() { batch.append(position: UInt64(index + 1), id: id, body: Data([1])) }
        window.insert(batch.entries)
        let refused = (1...5).map { _ in EventID.random() }

        // Refused: cancelled.
        #expect(window.claim(refused, from: 11) == Array(repeating: nil, count: 5))
        window.cancelClaims()
        #expect(refused.allSatisfy { window.position(of: $0) == nil })
        // Claimed again (a batch sequenced again): the earlier claims give way.
        #expect(window.claim(refused, from: 11) == Array(repeating: nil, count: 5))
        #expect(window.claim(refused, from: 11) == Array(repeating: nil, count: 5))
        // Other records appended than those claimed: the claims give way to them.
        let other = EventID.random()
        var different = RecordBatch()
        different.append(position: 11, id: other, body: Data([1]))
        window.insert(different.entries)
        #expect(refused.allSatisfy { window.position(of: $0) == nil })
        #expect(window.position(of: other) == 11)
        #expect(kept.enumerated().allSatisfy { window.position(of: $1) == UInt64($0 + 1) })
        #expect(window.count == 11)
    }
}
