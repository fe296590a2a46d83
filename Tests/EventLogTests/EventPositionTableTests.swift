import EventLog
import Foundation
import Testing

struct EventPositionTableTests {
    /// Ids whose halves differ in few bits, as a producer counting ids would make them.
    static func sequentialID(_ number: UInt64) -> EventID {
        EventID(high: 0x4000, low: number)
    }

    @Test func answersWhatADictionaryAnswersThroughInsertsRemovalsAndGrowth() {
        var table = EventPositionTable(minimumCapacity: 8)
        var model: [EventID: UInt64] = [:]
        var generator = SystemRandomNumberGenerator()
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
}
