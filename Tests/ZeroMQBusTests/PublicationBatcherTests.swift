import Foundation
import TestSupport
import Testing

@testable import Bus
@testable import ZeroMQBus

struct PublicationBatcherTests {
    /// The messages a batcher sends, each as its type and its decoded entries with envelopes.
    struct Sent {
        let type: String
        let events: [(position: UInt64, previous: UInt64, envelope: Data)]
    }

    static func run(
        _ events: [(type: String, position: UInt64, previous: UInt64, body: Data)], maxFrameBytes: Int = 32 << 10,
        maxLiveEnvelopeBytes: Int = 4096
    ) throws -> [Sent] {
        var batcher = PublicationBatcher(maxFrameBytes: maxFrameBytes, maxLiveEnvelopeBytes: maxLiveEnvelopeBytes)
        var sent: [Sent] = []
        var failed = false
        let send: (Data, [UInt8]) -> Void = { type, frame in
            guard let entries = frame.withUnsafeBytes({ PublicationFrame.entries($0) }) else {
                failed = true
                return
            }
            sent.append(
                Sent(
                    type: String(decoding: type, as: UTF8.self),
                    events: entries.map { ($0.position, $0.previousInPackage, Data(frame[$0.envelope])) }))
        }
        for event in events {
            // A type of its own for each event: the batcher groups by topic, not by object.
            let type = Sequencer.KnownType(name: event.type, package: "", topic: Data(event.type.utf8))
            event.body.withUnsafeBytes { body in
                batcher.add(
                    type: type, position: event.position, previousInPackage: event.previous, body: body, send: send)
            }
        }
        batcher.flush(send: send)
        #expect(!failed, "every frame the batcher builds decodes")
        return sent
    }

    @Test func eventsOfOneTypeInARowShareOneMessage() throws {
        // 200 entries of 20 + 100 bytes: 24,000 bytes, within one 32 KiB frame.
        let events = (1...200).map {
            ("bureau.test.Happened", UInt64($0), UInt64($0 - 1), Data(repeating: 7, count: 100))
        }
        let sent = try Self.run(events)
        #expect(sent.count == 1)
        #expect(sent[0].type == "bureau.test.Happened")
        #expect(sent[0].events.map(\.position) == Array(1...200))
        #expect(sent[0].events.map(\.previous) == Array(0...199))
        #expect(sent[0].events.allSatisfy { $0.envelope == Data(repeating: 7, count: 100) })
    }

    @Test func aChangeOfTypeStartsANewMessageSoPositionsStayInOrderAcrossMessages() throws {
        let types = ["bureau.a.X", "bureau.a.X", "bureau.b.Y", "bureau.a.X"]
        let events = types.enumerated().map { ($1, UInt64($0 + 1), UInt64($0), Data([UInt8($0 + 1)])) }
        let sent = try Self.run(events)
        #expect(sent.map(\.type) == ["bureau.a.X", "bureau.b.Y", "bureau.a.X"])
        #expect(sent.flatMap { $0.events.map(\.position) } == [1, 2, 3, 4])
    }

    @Test func aMessageStopsBeforeItsFrameWouldPassTheLimit() throws {
        // Each entry is 20 + 100 bytes: four fit in 500, the fifth starts a new message.
        let events = (1...9).map { ("bureau.test.Happened", UInt64($0), UInt64($0 - 1), Data(count: 100)) }
        let sent = try Self.run(events, maxFrameBytes: 500)
        #expect(sent.map(\.events.count) == [4, 4, 1])
    }

    @Test func anEventOverTheLiveLimitGoesOutAsANoticeWithAnEmptyEnvelope() throws {
        let events = [
            ("bureau.test.Happened", UInt64(1), UInt64(0), Data(count: 10)),
            ("bureau.test.Happened", UInt64(2), UInt64(1), Data(count: 5000)),
            ("bureau.test.Happened", UInt64(3), UInt64(2), Data(count: 10)),
        ]
        let sent = try Self.run(events)
        #expect(sent.count == 1)
        #expect(sent[0].events.map(\.envelope.count) == [10, 0, 10])
    }

    @Test func framesThatAreNotPublicationsAreRecognised() {
        var frame: [UInt8] = []
        PublicationFrame.append(position: 5, previousInPackage: 4, envelope: [1, 2, 3], notice: false, to: &frame)
        #expect(frame.withUnsafeBytes { PublicationFrame.entries($0) }?.first?.envelope == 20..<23)
        #expect(frame.dropLast().withUnsafeBytes { PublicationFrame.entries($0) } == nil, "cut inside an envelope")
        #expect(frame.prefix(19).withUnsafeBytes { PublicationFrame.entries($0) } == nil, "cut inside a header")
        #expect([UInt8]().withUnsafeBytes { PublicationFrame.entries($0) } == nil, "empty")
        var huge = frame
        huge[16...19] = [0xFF, 0xFF, 0xFF, 0xFF]
        #expect(huge.withUnsafeBytes { PublicationFrame.entries($0) } == nil, "a length past the end")
    }

    @Test func aPublishBatchSplitsBackIntoItsEnvelopesAndNamesWhatIsWrong() throws {
        let envelopes = [Data([1, 2, 3]), Data(), Data(repeating: 9, count: 300)]
        let batch = WireProtocol.batch(envelopes)
        #expect(batch.count == 3 * 4 + 303)
        #expect(try WireProtocol.envelopes(inBatch: batch, maxEnvelopes: 10).get() == envelopes)
        // A frame that is a slice of a larger buffer: ranges count from its first byte.
        let inside = (Data([0xAA, 0xBB]) + batch + Data([0xCC]))[2..<(2 + batch.count)]
        let ranges = try WireProtocol.envelopeRanges(inBatch: inside, maxEnvelopes: 10).get()
        #expect(ranges == [4..<7, 11..<11, 15..<315])
        #expect(try WireProtocol.envelopes(inBatch: inside, maxEnvelopes: 10).get() == envelopes)
        #expect(WireProtocol.envelopes(inBatch: batch, maxEnvelopes: 2) == .failure(.tooMany(limit: 2)))
        #expect(
            WireProtocol.BatchProblem.tooMany(limit: 2).description == "a batch carries at most 2 envelopes")
        #expect(
            WireProtocol.envelopes(inBatch: batch.dropLast(), maxEnvelopes: 10)
                == .failure(.cutShort(index: 3, declared: 300, remaining: 299)))
        #expect(
            WireProtocol.envelopes(inBatch: batch.prefix(5), maxEnvelopes: 10)
                == .failure(.cutShort(index: 1, declared: 3, remaining: 1)))
        #expect(
            WireProtocol.envelopes(inBatch: batch.prefix(9), maxEnvelopes: 10)
                == .failure(.lengthCutShort(index: 2, remaining: 2)))
    }

    // Copies 25 MiB of payloads: off the cooperative pool.
    @Test(.ownThreads)
    func eventsAreWrittenIntoPublishBatchesThatFitTheRequestLimitsAndHoldTheirEnvelopesInOrder() throws {
        let megabyte = Data(repeating: 7, count: 1 << 20)
        // Large events that fill batches by bytes, one alone over the limit, then enough
        // small ones to fill a batch by count.
        var events = (0..<12).map { _ in OutgoingEvent(type: "bureau.test.Large", payload: megabyte, module: "m") }
        events.insert(
            OutgoingEvent(type: "bureau.test.Huge", payload: Data(count: BusLimits.maxRequestBytes + 1)), at: 5)
        events += (0..<(BusLimits.maxEnvelopesPerPublish + 10)).map {
            OutgoingEvent(type: "bureau.test.Small", payload: Data("\($0)".utf8), causation: UInt64($0))
        }

        let batches = WireProtocol.publishBatches(events[...], process: "p")

        let split = try batches.map { try WireProtocol.envelopes(inBatch: $0.frame, maxEnvelopes: .max).get() }
        #expect(split.map { $0.count } == batches.map { $0.count })
        #expect(try split.flatMap { $0 } == events.map { try $0.envelopeBytes(process: "p") })
        for (index, batch) in batches.enumerated() {
            #expect(batch.count <= BusLimits.maxEnvelopesPerPublish)
            #expect(batch.frame.count <= BusLimits.maxRequestBytes || batch.count == 1, "batch \(index)")
            // Each batch is as full as the limits allow: the next one's first envelope did not fit.
            if let next = split.dropFirst(index + 1).first?.first {
                #expect(
                    batch.count == BusLimits.maxEnvelopesPerPublish
                        || batch.frame.count + 4 + next.count > BusLimits.maxRequestBytes, "batch \(index)")
            }
        }
        #expect(batches.contains { $0.count == 1 && $0.frame.count > BusLimits.maxRequestBytes })
        #expect(batches.contains { $0.count == BusLimits.maxEnvelopesPerPublish })
        #expect(WireProtocol.publishBatches([OutgoingEvent]()[...], process: "p").isEmpty)
    }
}
