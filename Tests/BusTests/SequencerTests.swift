import BureauSchemas
import EventLog
import FeatureTestSupport
import Foundation
import InMemoryStores
import Testing

@testable import Bus

struct SequencerTests {
    static func sequencer() -> Sequencer {
        Sequencer(maxEnvelopeBytes: 1024, epochStart: 0, lastCommitTime: (0, 0))
    }

    @Test func eachValidEnvelopeGetsTheNextPositionAndTheBusFields() throws {
        var sequencer = Self.sequencer()
        let log = InMemoryEventLog()
        let batch = sequencer.sequence(
            [[TestEnvelope.bytes(), TestEnvelope.bytes()], [TestEnvelope.bytes()]], log: log, now: (100, 5))
        #expect(batch.results.map { $0.map(\.position) } == [[1, 2], [3]])
        #expect(batch.records.entries.map(\.position) == [1, 2, 3])
        let stored = try Bureau_Envelope(serializedBytes: batch.records.records[1].body)
        #expect(stored.position == 2)
        #expect(stored.commitTime.seconds == 100 && stored.commitTime.nanos == 5)
        #expect(stored.payload == Data("x".utf8))
    }

    @Test func aRetryIsADuplicateOfTheCommittedEventInTheSameBatchOrALaterOne() throws {
        var sequencer = Self.sequencer()
        let log = InMemoryEventLog()
        let id = EventID.random()
        let first = sequencer.sequence(
            [[TestEnvelope.bytes(id: id), TestEnvelope.bytes(id: id)]], log: log, now: (1, 0))
        #expect(first.results[0].map(\.status) == [.committed, .duplicate])
        #expect(first.results[0].map(\.position) == [1, 1])
        try log.append(first.records)
        let second = sequencer.sequence([[TestEnvelope.bytes(id: id)]], log: log, now: (2, 0))
        #expect(second.results[0][0].status == .duplicate)
        #expect(second.results[0][0].position == 1)
        #expect(second.records.isEmpty)
    }

    @Test(arguments: [
        (Data([0xFF, 0xFF, 0xFF]), "malformed envelope"),
        (TestEnvelope.bytes(id: nil), "id must be 16 bytes, not 0"),
        (TestEnvelope.bytes(id: .zero), "all zeros"),
        (TestEnvelope.bytes(type: nil), "has no type name"),
        (TestEnvelope.bytes(type: "NoPackage"), "has no package"),
        (TestEnvelope.bytes(type: "_heartbeat.X"), "reserved"),
        (TestEnvelope.bytes(type: "bureau.bad name"), "has a character"),
        (TestEnvelope.bytes { $0.position = 7 }, "the bus assigns positions"),
        (TestEnvelope.bytes { $0.commitTime.seconds = 7 }, "the bus assigns commit times"),
        (TestEnvelope.bytes { $0.payload = Data(count: 2000) }, "over the limit of 1024"),
    ])
    func anInvalidEnvelopeIsRejectedWithItsReasonAndTheRestGoOn(envelope: Data, reason: String) {
        var sequencer = Self.sequencer()
        let batch = sequencer.sequence([[envelope, TestEnvelope.bytes()]], log: InMemoryEventLog(), now: (1, 0))
        #expect(batch.results[0][0].status == .rejected)
        #expect(batch.results[0][0].reason.contains(reason), "\(batch.results[0][0].reason)")
        #expect(batch.results[0][1].status == .committed && batch.results[0][1].position == 1)
    }

    @Test func commitTimesNeverGoBackwards() throws {
        var sequencer = Sequencer(maxEnvelopeBytes: 1024, epochStart: 0, lastCommitTime: (500, 0))
        let batch = sequencer.sequence([[TestEnvelope.bytes()]], log: InMemoryEventLog(), now: (400, 0))
        #expect(try Bureau_Envelope(serializedBytes: batch.records.records[0].body).commitTime.seconds == 500)
    }

    @Test func eachPublicationNamesThePreviousEventOfItsPackage() {
        var sequencer = Sequencer(maxEnvelopeBytes: 1024, epochStart: 10, lastCommitTime: (0, 0))
        let log = InMemoryEventLog()
        let batch = sequencer.sequence(
            [
                [
                    TestEnvelope.bytes(type: "bureau.a.X"), TestEnvelope.bytes(type: "bureau.b.Y"),
                    TestEnvelope.bytes(type: "bureau.a.Z"),
                ]
            ], log: log, now: (1, 0))
        // Positions 1, 2, 3; the first of each package points at the epoch's start.
        #expect(batch.publications.map(\.previousInPackage) == [10, 10, 1])
        #expect(sequencer.packageHeads == ["bureau.a": 3, "bureau.b": 2])
    }

    @Test func eventsOfManyTypesInTurnEachKeepTheirOwnTypeAndPackage() {
        var sequencer = Self.sequencer()
        // More types than the sequencer keeps at hand, in turn and in runs, and a bad name among them.
        let types = (0..<12).map { "bureau.m\($0 % 3).T\($0)" }
        var sent: [String] = []
        for round in 0..<40 { sent += Array(repeating: types[(round * 7) % types.count], count: round % 3 + 1) }
        sent.insert("no-package", at: 17)
        let batch = sequencer.sequence(
            [sent.map { TestEnvelope.bytes(type: $0) }], log: InMemoryEventLog(), now: (1, 0))
        #expect(batch.publications.map(\.type.name) == sent.filter { $0 != "no-package" })
        let packages: [String] = sent.filter { $0 != "no-package" }.map { String($0.prefix(9)) }
        #expect(batch.publications.map(\.type.package) == packages)
        #expect(batch.results[0][17].status == .rejected)
    }

    @Test func onlyCommittedEventsPutTheirPackageInTheHeartbeat() {
        var sequencer = Self.sequencer()
        let log = InMemoryEventLog()
        let id = EventID.random()
        let batch = sequencer.sequence(
            [
                [
                    TestEnvelope.bytes(type: "bureau.a.X") { $0.position = 7 },
                    TestEnvelope.bytes(id: id, type: "bureau.b.Y"),
                    TestEnvelope.bytes(id: id, type: "bureau.c.Y"), TestEnvelope.bytes(type: "bureau.b.Z"),
                ]
            ], log: log, now: (1, 0))
        #expect(batch.results[0].map(\.status) == [.rejected, .committed, .duplicate, .committed])
        #expect(sequencer.packageHeads == ["bureau.b": 2])
    }

    @Test func aRequestAsOneBufferOfEnvelopesIsSequencedAsTheSameEnvelopesOneByOne() throws {
        let envelopes = [TestEnvelope.bytes(), Data([0xFF]), TestEnvelope.bytes(), TestEnvelope.bytes()]
        let id = EventID.random()
        let repeated = [TestEnvelope.bytes(id: id), TestEnvelope.bytes(id: id)]
        var framed = Self.sequencer()
        var oneByOne = Self.sequencer()

        // The buffer is a slice, offset in its storage, as a received frame may be.
        let joined = EnvelopeBatch(envelopes)
        let padded = Data([0, 0, 0]) + joined.bytes
        let slice = EnvelopeBatch(bytes: padded[3...], envelopes: joined.envelopes)
        let fromBuffers = framed.sequence(
            [slice, EnvelopeBatch(repeated)], log: InMemoryEventLog(), now: (7, 0))
        let fromData = oneByOne.sequence([envelopes, repeated], log: InMemoryEventLog(), now: (7, 0))

        #expect(fromBuffers.results == fromData.results)
        #expect(
            fromBuffers.results.map { $0.map(\.status) } == [
                [.committed, .rejected, .committed, .committed], [.committed, .duplicate],
            ])
        #expect(fromBuffers.records.entries.map(\.position) == fromData.records.entries.map(\.position))
        #expect(fromBuffers.records.records.map(\.body) == fromData.records.records.map(\.body))
    }
}

extension SequencerTests {
    @Test(arguments: [
        (Data([0xFF, 0xFF, 0xFF]), PublishRejectionCode.malformed),
        (TestEnvelope.bytes(id: nil), .badID),
        (TestEnvelope.bytes(id: .zero), .badID),
        (TestEnvelope.bytes { $0.correlation = Data([1, 2, 3]) }, .badCorrelation),
        (TestEnvelope.bytes(type: nil), .badType),
        (TestEnvelope.bytes(type: "NoPackage"), .badType),
        (TestEnvelope.bytes(type: String(repeating: "a.", count: 200) + "X"), .badType),
        (TestEnvelope.bytes { $0.position = 7 }, .busField),
        (TestEnvelope.bytes { $0.commitTime.seconds = 7 }, .busField),
        (TestEnvelope.bytes { $0.payload = Data(count: 2000) }, .tooLarge),
    ])
    func eachRejectionCarriesTheCodeOfItsReason(envelope: Data, code: PublishRejectionCode) {
        // Given a request with a valid envelope on either side of an invalid one
        var sequencer = Self.sequencer()
        let batch = sequencer.sequence(
            [[TestEnvelope.bytes(), envelope, TestEnvelope.bytes()]], log: InMemoryEventLog(), now: (1, 0))
        // Then the one rejection is said in words to the producer and carries its code for the daemon
        #expect(batch.results[0].map(\.status) == [.committed, .rejected, .committed])
        #expect(batch.rejections == [code], "\(batch.results[0][1].reason)")
    }

    @Test func aBatchWithoutRejectionsCarriesNoCodes() {
        var sequencer = Self.sequencer()
        let id = EventID.random()
        let batch = sequencer.sequence(
            [[TestEnvelope.bytes(id: id)], [TestEnvelope.bytes(id: id)]], log: InMemoryEventLog(), now: (1, 0))
        #expect(batch.results.map { $0.map(\.status) } == [[.committed], [.duplicate]])
        #expect(batch.rejections.isEmpty)
    }
}
