import BureauSchemas
import Bus
import EventLog
import FeatureTestSupport
import Foundation
import SwiftProtobuf
import Testing

/// Upcasters as one set: chains compose, a set with a gap, a cycle or two upcasters for one shape
/// is refused naming them, a failing upcaster leaves a mark that reading the event reports.
struct EventUpcastingTests {
    typealias V1 = TestUpcasters.V1
    typealias V2 = TestUpcasters.V2
    typealias V3 = TestUpcasters.V3
    typealias OneToTwo = TestUpcasters.OneToTwo
    typealias TwoToThree = TestUpcasters.TwoToThree

    struct ThreeToOne: Upcaster {
        var change: String { "round" }
        func upcast(_ old: V3, of event: StoredEvent) throws -> V1 { V1() }
    }

    struct AnotherOneToThree: Upcaster {
        var change: String { "a second reading of v1" }
        func upcast(_ old: V1, of event: StoredEvent) throws -> V3 { V3() }
    }

    struct Refusing: Upcaster {
        struct Unreadable: Error, CustomStringConvertible { var description: String { "no base" } }
        var change: String { "refuses an empty base" }
        func upcast(_ old: V1, of event: StoredEvent) throws -> V2 {
            guard !old.base.isEmpty else { throw Unreadable() }
            return V2()
        }
    }

    static func stored(_ message: some SwiftProtobuf.Message, at position: UInt64 = 7) throws -> StoredEvent {
        StoredEvent(
            position: position, id: .random(), type: type(of: message).protoMessageName, commitTime: .zero,
            payload: try message.serializedData())
    }

    @Test func aChainOfUpcastersReadsTheOldestShapeAsTodaysAndSaysSo() throws {
        let upcasting = try EventUpcasting([TwoToThree(), OneToTwo()], readTypes: [V3.protoMessageName])
        var old = V1()
        old.base = "eur"
        let event = try Self.stored(old)
        let read = upcasting.upcast(event)
        #expect(read.type == V3.protoMessageName)
        #expect(read.upcast == .upcast(storedType: V1.protoMessageName, steps: 2))
        let today = try #require(try read.payload(as: V3.self))
        #expect(today.base == "EUR" && today.quote == "P7")
        #expect(event.payload == (try old.serializedData()), "the stored bytes never change")
        #expect(read.line.hasSuffix("(upcast from bureau.watchlist.PairAddRequested in 2 steps)"))
        #expect(read.jsonLine.contains("\"upcastFrom\":\"bureau.watchlist.PairAddRequested\""))
        // Today's shape, and any other type, read as stored.
        let current = try Self.stored(V3())
        #expect(upcasting.upcast(current) == current)
        #expect(EventUpcasting.none.upcast(event) == event)
    }

    @Test func aSubscriptionForTodaysTypeAsksForTheOlderShapesToo() throws {
        let upcasting = try EventUpcasting([OneToTwo(), TwoToThree()], readTypes: [V3.protoMessageName])
        #expect(
            Set(upcasting.widening(EventFilter(prefixes: [V3.protoMessageName])).prefixes)
                == [V3.protoMessageName, V1.protoMessageName, V2.protoMessageName])
        #expect(upcasting.widening(.all) == .all)
        let other = EventFilter(prefixes: ["bureau.alerts."])
        #expect(upcasting.widening(other) == other)
    }

    @Test func twoUpcastersForOneShapeAreRefusedNamingBoth() {
        #expect {
            _ = try EventUpcasting(
                [OneToTwo(), AnotherOneToThree(), TwoToThree()], readTypes: [V3.protoMessageName])
        } throws: { error in
            "\(error)".contains("two upcasters read bureau.watchlist.PairAddRequested: OneToTwo and AnotherOneToThree")
        }
    }

    @Test func aCycleIsRefusedNamingItsTypes() {
        #expect {
            _ = try EventUpcasting([OneToTwo(), TwoToThree(), ThreeToOne()], readTypes: [])
        } throws: { error in
            "\(error)".contains(
                "the upcasters go round: bureau.watchlist.PairAddRequested → bureau.watchlist.PairAdded → "
                    + "bureau.watchlist.PairRemoveRequested → bureau.watchlist.PairAddRequested")
        }
    }

    @Test func aChainThatEndsAtATypeNothingReadsIsAGap() {
        // v1 → v2 is there, v2 → v3 is missing, and the build reads v3.
        #expect {
            _ = try EventUpcasting([OneToTwo()], readTypes: [V3.protoMessageName])
        } throws: { error in
            "\(error)".contains(
                "bureau.watchlist.PairAdded, which OneToTwo makes of bureau.watchlist.PairAddRequested, is read by "
                    + "nothing in this build")
        }
    }

    @Test func aFailingUpcasterLeavesTheStoredPayloadAndMakesReadingItThrowNamingTheUpcaster() throws {
        let upcasting = try EventUpcasting([Refusing()], readTypes: [V2.protoMessageName])
        let event = try Self.stored(V1(), at: 42)
        let read = upcasting.upcast(event)
        #expect(read.type == V2.protoMessageName)
        #expect(read.payload == event.payload)
        #expect(read.upcast == .failed(storedType: V1.protoMessageName, upcaster: "Refusing", reason: "no base"))
        #expect(throws: UpcastFailure.self) { _ = try read.payload(as: V2.self) }
        let failure = try #require(read.upcastFailure)
        #expect("\(failure)".contains("position 42"))
        #expect("\(failure)".contains("Refusing failed: no base"))
        #expect(read.line.contains("Refusing could not read it as bureau.watchlist.PairAdded: no base"))
    }

    /// An upcaster returns a typed message, which always encodes; what can fail to decode is the
    /// stored payload, read as the upcaster's old shape: that is its failure too, named the same way.
    @Test func storedBytesThatDoNotDecodeAsTheOldShapeFailTheUpcastNamingTheUpcaster() throws {
        let upcasting = try EventUpcasting([OneToTwo()], readTypes: [V2.protoMessageName])
        var event = try Self.stored(V1(), at: 9)
        event.payload = Data([0x0A, 0xFF, 0xFF])  // field 1, a length running past the end
        let read = upcasting.upcast(event)
        #expect(read.type == V2.protoMessageName)
        #expect(read.payload == event.payload, "the stored bytes are kept")
        guard case .failed(let storedType, let upcaster, _)? = read.upcast else {
            Issue.record("not marked failed: \(String(describing: read.upcast))")
            return
        }
        #expect(storedType == V1.protoMessageName && upcaster == "OneToTwo")
        #expect(throws: UpcastFailure.self) { _ = try read.payload(as: V2.self) }
        let failure = try #require(read.upcastFailure)
        #expect("\(failure)".contains("position 9") && "\(failure)".contains("OneToTwo failed"), "\(failure)")
    }

    @Test func aRenamedTypeReadsAsItsNewNameWithTheSameBytes() throws {
        // Given events once stored as "bureau.old.PairWanted", a name no schema has any more
        let upcasting = try EventUpcasting(
            [RenamedEvent(from: "bureau.old.PairWanted", to: V1.self)], readTypes: [V1.protoMessageName])
        var wanted = V1()
        wanted.base = "EUR"
        wanted.quote = "GBP"
        var event = try Self.stored(wanted)
        event.type = "bureau.old.PairWanted"
        // When one is read
        let read = upcasting.reading(event) { $0 }
        // Then it is today's type, payload unchanged, and says what it was stored as
        #expect(read.type == V1.protoMessageName)
        #expect(try read.payload(as: V1.self) == wanted)
        #expect(read.upcast == .upcast(storedType: "bureau.old.PairWanted", steps: 1))
        #expect(upcasting.readAs.map(\.change) == ["bureau.old.PairWanted is now called \(V1.protoMessageName)"])
        // And an event of any other type is handed on as it is
        #expect(upcasting.upcasts("bureau.old.PairWanted") && !upcasting.upcasts(V1.protoMessageName))
        let current = try Self.stored(wanted)
        #expect(upcasting.reading(current) { $0 } == current)
    }

    @Test func aTypeAsLongAsAnUpcastOneReadsAsStored() throws {
        // Given an upcaster for "bureau.old.PairWanted", 21 bytes long
        let upcasting = try EventUpcasting(
            [RenamedEvent(from: "bureau.old.PairWanted", to: V1.self)], readTypes: [V1.protoMessageName])
        // Then a type of the same length, or 64 bytes longer, is not upcast (the reader's first
        // test is by length), and the upcaster's own type is
        #expect(!upcasting.upcasts("bureau.old.PairWasted"))
        #expect(!upcasting.upcasts("bureau.old.PairWanted" + String(repeating: "x", count: 64)))
        #expect(upcasting.upcasts("bureau.old.PairWanted"))
        var event = try Self.stored(V1())
        event.type = "bureau.old.PairWasted"
        #expect(upcasting.reading(event) { $0 } == event)
    }
}
