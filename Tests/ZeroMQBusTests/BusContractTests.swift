import BureauSchemas
import Bus
import BusTesting
import EventLog
import FeatureTestSupport
import Foundation
import InMemoryBus
import Metrics
import TestSupport
import Testing
import ZeroMQBus

/// The promises every ``EventBus`` keeps (its doc comment), run against the bus over ZeroMQ
/// (a daemon in the process and a client) and its in-memory twin.
@Suite(.timeLimit(.minutes(2)))
struct BusContractTests {
    /// A bus of the given tier and connections to it, with what keeps them alive.
    final class Subject: @unchecked Sendable {
        private let daemon: TestBus?
        private let memory: InMemoryBus?
        private var opened: [any EventBus] = []

        init(_ tier: BusTier) async throws {
            switch tier {
            case .live:
                daemon = try await TestBus()
                memory = nil
            case .inMemory:
                daemon = nil
                memory = InMemoryBus(process: "contract")
            }
        }

        /// A new connection, as another process would make, whose subscriptions read events
        /// through `upcasting`.
        func connect(_ process: String = "contract", upcasting: EventUpcasting = .none) throws -> any EventBus {
            let bus: any EventBus
            if let daemon {
                bus = try daemon.client(process) {
                    $0.publishTimeout = .seconds(20)
                    $0.upcasting = upcasting
                }
            } else if let memory {
                bus = memory.connection(process: process, upcasting: upcasting)
            } else {
                throw TestSupportError("no bus")
            }
            opened.append(bus)
            return bus
        }

        deinit {
            for bus in opened { bus.close() }
        }
    }

    static func event(_ index: Int, type: String = "bureau.contract.Happened", size: Int = 16) -> OutgoingEvent {
        var payload = Data("event \(index) ".utf8)
        payload.append(Data(repeating: 0x2E, count: max(0, size - payload.count)))
        return OutgoingEvent(type: type, payload: payload, module: "contract")
    }

    /// The next `count` events `collector` keeps (at most 30 s), then stops it.
    static func take(_ count: Int, from collector: EventCollector) async throws -> [StoredEvent] {
        defer { collector.stop() }
        let events = try await collector.wait(until: .now + .seconds(30)) { $0.count >= count }
        try #require(events.count >= count, "\(events.count) of \(count) events within 30 s")
        return Array(events.prefix(count))
    }

    /// A consumer reports how far it has got; the bus keeps its lag growing once it stops.
    @Test(arguments: BusTier.allCases)
    func aConsumerThatStopsReportingIsSeenFallingBehindAndOneLeavingIsForgotten(tier: BusTier) async throws {
        let subject = try await Subject(tier)
        let bus = try subject.connect("host")
        let producer = try subject.connect("producer")
        #expect(try await bus.statistics(timeout: .seconds(5)).consumers.isEmpty, "nobody reported: nothing shown")
        _ = try await producer.publish((1...3).map { Self.event($0) })
        let subscription = bus.subscribe(EventFilter(prefixes: ["bureau.contract."]), after: 0)
        let metrics = ConsumerMetrics(consumer: "contract-host", process: "host", factory: NOOPMetricsHandler.instance)
        #expect(metrics.flush() == nil, "following no subscription, its progress is unknown")
        metrics.follow(subscription)
        var iterator = subscription.makeAsyncIterator()
        var handed = 0
        while handed < 3 {
            guard case .event = try await iterator.next() else { continue }
            handed += 1
            metrics.inputApplied()
        }
        // The third is handed out, not finished: the consumer has handled through the second.
        let progress = try #require(metrics.flush())
        #expect(progress.position == 2)
        #expect(progress.inputsApplied == 3)
        bus.report([progress])
        let first = try #require(try await bus.statistics(timeout: .seconds(5)).consumers.first)
        #expect(first.consumer == "contract-host" && first.process == "host")
        #expect(first.lagEvents == 1)
        #expect(first.lagTimeKnown)

        // It reports nothing more while the head moves on.
        _ = try await producer.publish((4...8).map { Self.event($0) })
        let later = try #require(try await bus.statistics(timeout: .seconds(5)).consumers.first)
        #expect(later.lagEvents == 6)
        #expect(later.lagMs >= first.lagMs)
        #expect(later.progressAgeMs >= first.progressAgeMs)

        bus.report([metrics.leaving()])
        #expect(try await bus.statistics(timeout: .seconds(5)).consumers.isEmpty)
        subscription.cancel()
    }

    @Test(arguments: BusTier.allCases)
    func publishedEventsAreCommittedInOrderAtContiguousPositions(tier: BusTier) async throws {
        let subject = try await Subject(tier)
        let bus = try subject.connect()
        #expect(try await bus.publish((1...5).map { Self.event($0) }) == (1...5).map { .committed(UInt64($0)) })
        #expect(try await bus.publish(Self.event(6)) == .committed(6))
        #expect(try await bus.ping().head == 6)
    }

    @Test(arguments: BusTier.allCases)
    func aPublishOfMoreEventsThanOneRequestHoldsKeepsTheirOrderAndReportsEach(tier: BusTier) async throws {
        let subject = try await Subject(tier)
        let bus = try subject.connect()
        _ = try await bus.publish(Self.event(0))
        // Three requests' worth and a bit, the last few already in the log.
        let count = 3 * BusLimits.maxEnvelopesPerPublish + 5
        var events = (1...count).map { Self.event($0, size: 40) }
        let already = try await bus.publish(Array(events.suffix(2)))
        events[events.count - 2].payload = Data("changed, same id".utf8)

        let outcomes = try await bus.publish(events)

        #expect(outcomes.count == count)
        #expect(Array(outcomes.prefix(count - 2)) == (0..<(count - 2)).map { .committed(UInt64(4 + $0)) })
        #expect(Array(outcomes.suffix(2)) == already.compactMap(\.position).map { .duplicate($0) })
        let stored = try await bus.ping().head
        #expect(stored == UInt64(3 + count - 2))
    }

    @Test(arguments: BusTier.allCases)
    func theLogIsReadThroughTheBusInOrderWithTheBytesItHolds(tier: BusTier) async throws {
        let subject = try await Subject(tier)
        let bus = try subject.connect()
        let published = (1...10).map { Self.event($0) }
        _ = try await bus.publish(published)
        let reader = try subject.connect("reader")

        var excerpt: [UInt64] = []
        let head = try await reader.readLog(from: 3, to: 7) { event, envelope in
            excerpt.append(event.position)
            let decoded: StoredEvent = try StoredEvent(envelopeBytes: envelope)
            #expect(decoded == event)
            let sent: OutgoingEvent = published[Int(event.position) - 1]
            #expect(event.id == sent.id)
            return true
        }
        #expect(excerpt == Array(3...7))
        #expect(head == 10)

        var all: [UInt64] = []
        // Past the head: up to the head at the time of the call, not waiting for more.
        try await reader.readLog(to: 99) { event, _ in
            all.append(event.position)
            return true
        }
        #expect(all == Array(1...10))

        var stoppedAt: [UInt64] = []
        try await reader.readLog { event, _ in
            stoppedAt.append(event.position)
            return event.position < 4
        }
        #expect(stoppedAt == [1, 2, 3, 4])

        var beyond = 0
        #expect(
            try await reader.readLog(from: 11) { _, _ in
                beyond += 1
                return true
            } == 10)
        #expect(beyond == 0)
    }

    @Test(arguments: BusTier.allCases)
    func aSubscriberAheadOfTheLogIsToldSoAndEndsInsteadOfDroppingWhatComes(tier: BusTier) async throws {
        let subject = try await Subject(tier)
        let bus = try subject.connect()
        _ = try await bus.publish((1...3).map { Self.event($0) })
        // A subscriber that has read through 8, as of another log (or a copy restored from before 4…8).
        let subscription = try subject.connect("ahead").subscribe(.all, after: 8)
        var seen: [SubscriptionEvent] = []
        var failure: (any Error)?
        do {
            for try await item in subscription {
                if case .connection = item { continue }
                seen.append(item)
            }
        } catch {
            failure = error
        }
        #expect(seen.isEmpty, "nothing is delivered, and it is never told it caught up: \(seen)")
        let error = try #require(failure as? BusError)
        guard case .aheadOfLog(let position, let head, let epoch) = error else {
            Issue.record("expected aheadOfLog, got \(error)")
            return
        }
        #expect(position == 8)
        #expect(head == 3)
        #expect(epoch == (try await bus.ping().epoch))
        #expect("\(error)".contains("ends at position 3"))
        // At the head exactly it is simply caught up.
        let current = try subject.connect("current").subscribe(.all, after: 3)
        for try await item in current {
            if case .caughtUp(let head) = item {
                #expect(head == 3)
                break
            }
        }
    }

    @Test(arguments: BusTier.allCases)
    func aSubscriberReadsOlderShapesAsTodaysThroughItsUpcastersAndTheLogKeepsThemAsStored(tier: BusTier) async throws {
        let subject = try await Subject(tier)
        let bus = try subject.connect()
        var old = TestUpcasters.V1()
        old.base = "eur"
        _ = try await bus.publish([try OutgoingEvent(old), try OutgoingEvent(TestUpcasters.V3())])
        let upcasting = try EventUpcasting(
            [TestUpcasters.OneToTwo(), TestUpcasters.TwoToThree()],
            readTypes: [TestUpcasters.V3.protoMessageName])
        let reader = try subject.connect("reader", upcasting: upcasting)
        // Asked for today's type only, it is given the old event too, read as today's.
        let events = try await Self.take(
            2, from: EventCollector(reader, EventFilter(prefixes: [TestUpcasters.V3.protoMessageName])))
        #expect(
            events.map(\.type) == [TestUpcasters.V3.protoMessageName, TestUpcasters.V3.protoMessageName])
        #expect(events[0].upcast == .upcast(storedType: TestUpcasters.V1.protoMessageName, steps: 2))
        #expect(try events[0].payload(as: TestUpcasters.V3.self)?.base == "EUR")
        #expect(events[1].upcast == nil)
        // A connection without upcasters reads it as stored.
        let raw = try await Self.take(1, from: EventCollector(bus))
        #expect(raw.first?.type == TestUpcasters.V1.protoMessageName)
        #expect(raw.first?.payload == (try old.serializedData()))
    }

    @Test(arguments: BusTier.allCases)
    func anEventSentAgainIsADuplicateAtItsFirstPositionFromAnyConnection(tier: BusTier) async throws {
        let subject = try await Subject(tier)
        let first = try subject.connect("one")
        let second = try subject.connect("two")
        let event = Self.event(1)
        #expect(try await first.publish(event) == .committed(1))
        #expect(try await second.publish([Self.event(2), event]) == [.committed(2), .duplicate(1)])
        #expect(try await first.publish([event, event]) == [.duplicate(1), .duplicate(1)])
    }

    @Test(arguments: BusTier.allCases)
    func invalidEnvelopesAreRejectedWithAReasonAndNotStored(tier: BusTier) async throws {
        let subject = try await Subject(tier)
        let bus = try subject.connect()
        var positioned = Bureau_Envelope()
        positioned.id = Data(EventID.random().bytes)
        positioned.type = "bureau.contract.Happened"
        positioned.position = 9
        var untyped = Bureau_Envelope()
        untyped.id = Data(EventID.random().bytes)
        let valid = try Self.event(1).envelopeBytes(process: "contract")
        let ack = try await bus.publish(
            envelopes: [Data([0xFF, 0xFF]), try positioned.serializedData(), try untyped.serializedData(), valid])
        #expect(ack.results.map(\.status) == [.rejected, .rejected, .rejected, .committed])
        #expect(ack.results[0].reason.contains("malformed envelope"))
        #expect(ack.results[1].reason.contains("the bus assigns positions"))
        #expect(ack.results[2].reason.contains("no type name"))
        #expect(ack.results[3].position == 1)
        #expect(ack.head == 1)
    }

    @Test(arguments: BusTier.allCases)
    func anEmptyOrOversizedRequestIsRefusedWhole(tier: BusTier) async throws {
        let subject = try await Subject(tier)
        let bus = try subject.connect()
        await #expect {
            _ = try await bus.publish(envelopes: [])
        } throws: { error in
            guard case BusError.refused(let code, _) = error else { return false }
            return code == .malformedRequest
        }
        let envelopes = try (0...BusLimits.maxEnvelopesPerPublish).map {
            try Self.event($0).envelopeBytes(process: "c")
        }
        await #expect {
            _ = try await bus.publish(envelopes: envelopes)
        } throws: { error in
            guard case BusError.refused(let code, _) = error else { return false }
            return code == .tooLarge
        }
        // More bytes than a request holds is not even sent.
        let megabyte = try OutgoingEvent(type: "bureau.contract.Large", payload: Data(count: (1 << 20) - 100))
            .envelopeBytes(process: "c")
        await #expect {
            _ = try await bus.publish(envelopes: Array(repeating: megabyte, count: 9))
        } throws: { error in
            guard case BusError.requestTooLarge(let bytes, let limit) = error else { return false }
            return bytes > limit && limit == BusLimits.maxRequestBytes
        }
        // Through the typed API the same events are split into requests that fit.
        let outcomes = try await bus.publish((0...BusLimits.maxEnvelopesPerPublish).map { Self.event($0) })
        #expect(outcomes.compactMap(\.position) == Array(1...UInt64(BusLimits.maxEnvelopesPerPublish + 1)))
    }

    @Test(arguments: BusTier.allCases)
    func aSubscriberGetsTheLogThenLiveEventsInOrderOnceAndHearsWhenItCaughtUp(tier: BusTier) async throws {
        let subject = try await Subject(tier)
        let producer = try subject.connect("producer")
        let consumer = try subject.connect("consumer")
        _ = try await producer.publish((1...30).map { Self.event($0) })
        let collector = EventCollector(
            consumer, .all, after: 10,
            onCaughtUp: { catchUp in
                guard catchUp.isFirst else { return false }
                // Told once the log is read up to the head, after exactly the events it held…
                #expect(catchUp.head == 30)
                #expect(catchUp.events.map(\.position) == Array(11...30))
                // …and what is published from then on comes live.
                _ = try await producer.publish((31...40).map { Self.event($0) })
                return false
            })
        let events = try await Self.take(30, from: collector)
        #expect(events.map(\.position) == Array(11...40))
        #expect(events.map(\.producerProcess).allSatisfy { $0 == "producer" })
    }

    @Test(arguments: BusTier.allCases)
    func aFilteredSubscriptionGetsOnlyTheTypesItAskedForInOrder(tier: BusTier) async throws {
        let subject = try await Subject(tier)
        let bus = try subject.connect()
        let collector = EventCollector(bus, EventFilter(prefixes: ["bureau.a.", "bureau.c.Wanted"]))
        var expected: [UInt64] = []
        for index in 1...60 {
            let type = ["bureau.a.One", "bureau.b.Other", "bureau.c.Wanted", "bureau.c.Unwanted"][index % 4]
            let position = try await bus.publish(Self.event(index, type: type)).position ?? 0
            if type == "bureau.a.One" || type == "bureau.c.Wanted" { expected.append(position) }
        }
        let events = try await Self.take(expected.count, from: collector)
        #expect(events.map(\.position) == expected)
    }

    @Test(arguments: BusTier.allCases)
    func aConsumerWithLittleRoomMissesNothing(tier: BusTier) async throws {
        let subject = try await Subject(tier)
        let producer = try subject.connect("producer")
        let consumer = try subject.connect("consumer")
        let subscription = consumer.subscribe(EventFilter.all, after: 0, bufferCapacity: 4)
        let publishing = Task {
            var positions: [UInt64] = []
            for batch in 0..<20 {
                positions += try await producer.publish((0..<100).map { Self.event(batch * 100 + $0) })
                    .compactMap(\.position)
            }
            return positions
        }
        var received: [UInt64] = []
        for try await event in subscription.events {
            received.append(event.position)
            // A slow consumer: it reads one event at a time and lets the producer run ahead.
            if received.count % 100 == 0 { await Task.yield() }
            if received.count == 2000 { break }
        }
        #expect(received == (try await publishing.value))
    }

    @Test(arguments: BusTier.allCases)
    func eventsTooLargeForTheLiveStreamAreDeliveredToo(tier: BusTier) async throws {
        let subject = try await Subject(tier)
        let bus = try subject.connect()
        let collector = EventCollector(bus)
        let sizes = [100, 10_000, 100, BusLimits.maxLiveEnvelopeBytes + 1, 500_000, 100]
        for (index, size) in sizes.enumerated() { _ = try await bus.publish(Self.event(index, size: size)) }
        let events = try await Self.take(sizes.count, from: collector)
        #expect(events.map(\.payload.count) == sizes)
        #expect(events.map(\.position) == Array(1...6))
    }

    @Test(arguments: BusTier.allCases)
    func aClosedConnectionRefusesAndEndsItsSubscriptions(tier: BusTier) async throws {
        let subject = try await Subject(tier)
        let bus = try subject.connect()
        _ = try await bus.publish(Self.event(1))
        var subscription = bus.subscribe(.all, after: 0).makeAsyncIterator()
        // Its first event: the subscription is running when the connection closes.
        var delivered = false
        while !delivered, let item = try await subscription.next() {
            if case .event = item { delivered = true }
        }
        try #require(delivered, "the subscription delivered the event before the connection closed")
        bus.close()
        await #expect(throws: BusError.closed) { _ = try await bus.publish(Self.event(2)) }
        var after = 0
        while let item = try await subscription.next() {
            if case .event = item { after += 1 }
        }
        #expect(after == 0, "the subscription ended")
    }
}
