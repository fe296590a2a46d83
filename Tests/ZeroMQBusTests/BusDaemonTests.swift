import BureauSchemas
import Bus
import BusTesting
import EventLog
import FaultInjection
import FeatureTestSupport
import Foundation
import Guards
import Synchronization
import TestSupport
import Testing
import ZeroMQ
import ZeroMQBus

@Suite(.timeLimit(.minutes(2)))
struct BusDaemonTests {
    static func event(_ index: Int, type: String = "bureau.test.Happened") -> OutgoingEvent {
        OutgoingEvent(type: type, payload: Data("payload \(index)".utf8), module: "test")
    }

    @Test func publishedEventsAreAcknowledgedWithContiguousPositions() async throws {
        let bus = try await TestBus()
        let client = try bus.client()
        let outcomes = try await client.publish((1...10).map { Self.event($0) })
        let committed: [PublishOutcome] = (1...10).map { .committed(UInt64($0)) }
        #expect(outcomes == committed)
        let more = try await client.publish(Self.event(11))
        #expect(more == .committed(11))
    }

    @Test func aReadOfTheLogWhoseBusStopsThrowsInsteadOfEndingQuietly() async throws {
        let bus = try await TestBus()
        let client = try bus.client()
        let count = 30_000
        _ = try await client.publish((1...count).map { Self.event($0) })
        let reader = try bus.client("reader")
        var last: UInt64 = 0
        await #expect {
            try await reader.readLog(idleTimeout: .seconds(1)) { event, _ in
                // The reader holds at most a buffer's worth when the bus goes (told to stop at
                // once; the test's end joins its threads, off the cooperative pool).
                if event.position == 1 { bus.daemon?.requestStop() }
                last = event.position
                return true
            }
        } throws: { error in
            guard case .readStalled(let after, let seconds) = error as? BusError else { return false }
            return after == last && seconds == 1
        }
        #expect(last >= 1 && last < UInt64(count))
        reader.close()
        client.close()
    }

    @Test func aRetriedEventIsRecognisedAsADuplicate() async throws {
        let bus = try await TestBus()
        let client = try bus.client()
        let event = Self.event(1)
        #expect(try await client.publish(event) == .committed(1))
        #expect(try await client.publish([Self.event(2), event]) == [.committed(2), .duplicate(1)])
        // The daemon remembers ids across restarts.
        await bus.stop()
        try await bus.start()
        let again = try bus.client()
        #expect(try await again.publish(event) == .duplicate(1))
    }

    @Test func aLiveSubscriberWhoseDaemonComesBackWithAnOlderLogStopsAndSaysSo() async throws {
        let bus = try await TestBus()
        let client = try bus.client()
        _ = try await client.publish((1...5).map { Self.event($0) })
        // A copy of the log at 5, as a backup would be.
        await bus.stop()
        let backup = try TemporaryDirectory("backup")
        try FileManager.default.copyItem(atPath: bus.location.logDirectory, toPath: backup.file("log"))
        try await bus.start()
        _ = try await client.publish((6...9).map { Self.event($0) })

        let subscriber = try bus.client("subscriber")
        let subscription = subscriber.subscribe()
        var delivered: [UInt64] = []
        var iterator = subscription.makeAsyncIterator()
        // Read by hand, not collected: the same subscription goes on past the restore below.
        while let item = try await iterator.next() {
            if case .event(let event) = item { delivered.append(event.position) }
            if case .caughtUp = item { break }
        }
        #expect(delivered == Array(1...9))

        // The log is restored from the backup and the daemon started on it: its head is 5.
        await bus.stop()
        try FileManager.default.removeItem(atPath: bus.location.logDirectory)
        try FileManager.default.copyItem(atPath: backup.file("log"), toPath: bus.location.logDirectory)
        try await bus.start()
        // The events it takes next (6, 7 again) must not be dropped as already delivered.
        _ = try await client.publish((10...11).map { Self.event($0) })
        var failure: BusError?
        do {
            while let item = try await iterator.next() {
                if case .event(let event) = item { Issue.record("delivered \(event.position) from the older log") }
            }
        } catch {
            failure = error as? BusError
        }
        guard case .aheadOfLog(let position, let head, let epoch) = failure else {
            Issue.record("expected the subscription to end with aheadOfLog, got \(String(describing: failure))")
            return
        }
        #expect(position == 9)
        // 5 if it noticed before the two new events were published, 7 after.
        #expect(head == 5 || head == 7, "head \(head)")
        #expect(epoch == (try await client.ping().epoch))
        subscriber.close()
        client.close()
    }

    @Test func aSubscriberReceivesTheLogThenLiveEvents() async throws {
        let bus = try await TestBus()
        let client = try bus.client()
        _ = try await client.publish((1...50).map { Self.event($0) })
        let events = try await client.collect(
            until: .now + .seconds(60),
            onCaughtUp: { catchUp in
                if catchUp.isFirst { _ = try await client.publish((51...60).map { Self.event($0) }) }
                return false
            }
        ) { $0.count >= 60 }
        #expect(events.map(\.position) == Array(1...60))
        for event in events {
            #expect(String(decoding: event.payload, as: UTF8.self) == "payload \(event.position)")
        }
    }
}

extension BusDaemonTests {
    /// Publishes `count` events in batches, returns the last position.
    static func publish(
        _ count: Int, with client: ZeroMQBusClient, batch: Int = 4096, type: String = "bureau.test.Happened"
    )
        async throws
    {
        var sent = 0
        while sent < count {
            let size = min(batch, count - sent)
            let outcomes = try await client.publish((0..<size).map { Self.event(sent + $0, type: type) })
            #expect(outcomes.allSatisfy { $0.position != nil })
            sent += size
        }
    }

    /// Waits, on a thread of its own rather than the test's, until `disk` holds an fdatasync
    /// (at most 60 s: the whole suite on two cores can keep a task from running for long).
    static func syncHeld(_ disk: FaultInjectingFileSystem) async -> Bool {
        (try? await OwnThread.run(name: "sync-held") { disk.waitUntilSyncsHeld(timeout: .seconds(60)) }) ?? false
    }

    /// What a test has seen so far, from several tasks.
    final class Seen: Sendable {
        let positions = Mutex<[UInt64]>([])
        let answers = Atomic<Int>(0)
    }

    @Test func nothingIsPublishedOrAcknowledgedBeforeTheFdatasyncThatCoversItHasFinished() async throws {
        let disk = FaultInjectingFileSystem(plan: nil)
        let bus = try await TestBus { $0.fileSystem = disk }
        let producer = try bus.client("producer")
        let consumer = try bus.client("consumer")
        let seen = Seen()
        let (arrivals, arrived) = AsyncStream.makeStream(of: UInt64.self)
        let subscription = consumer.subscribe()
        let receiving = Task {
            for try await item in subscription {
                guard case .event(let event) = item else { continue }
                seen.positions.withLock { $0.append(event.position) }
                arrived.yield(event.position)
            }
        }
        defer { receiving.cancel() }
        var waiting = arrivals.makeAsyncIterator()
        #expect(try await producer.publish(Self.event(1)) == .committed(1))
        #expect(await waiting.next() == 1)

        disk.holdSyncs()
        // Released however the test ends: the bus's stop waits for a held fdatasync.
        defer { disk.releaseSyncs() }
        let first = Task {
            defer { seen.answers.add(1, ordering: .relaxed) }
            return try await producer.publish([Self.event(2), Self.event(3)])
        }
        #expect(await Self.syncHeld(disk), "the first request's fdatasync is under way")
        let second = Task {
            defer { seen.answers.add(1, ordering: .relaxed) }
            return try await producer.publish(Self.event(4))
        }
        // The daemon takes the second request in and writes it meanwhile (nothing to await
        // but the file: looked at every 10 ms for at most 10 s).
        var written: UInt64 = 0
        for _ in 0..<1000 where written < 4 {
            let cursor = try LogCursor(directory: bus.location.logDirectory, after: 0)
            while let record = try cursor.next() { written = record.position }
            if written < 4 { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(written == 4, "the second request is written while the first one's fdatasync is held")
        #expect(try await producer.ping().head == 1, "the daemon says it has published 1")
        #expect(seen.answers.load(ordering: .relaxed) == 0, "neither request is answered")
        #expect(seen.positions.withLock { $0 } == [1], "nothing after 1 is published")

        disk.releaseSyncs()
        #expect(try await first.value == [.committed(2), .committed(3)])
        #expect(try await second.value == .committed(4))
        for expected in UInt64(2)...4 { #expect(await waiting.next() == expected) }
        #expect(seen.positions.withLock { $0 } == [1, 2, 3, 4])
    }

    @Test func anIDRepeatedInARequestRefusedForAFullDiskIsRefusedBothTimes() async throws {
        let disk = FaultInjectingFileSystem(plan: nil)
        let bus = try await TestBus { $0.fileSystem = disk }
        let client = try bus.client()
        #expect(try await client.publish(Self.event(1)) == .committed(1))
        disk.fillDisk()
        let repeated = Self.event(2)
        let refused = try await client.publish([repeated, Self.event(3), repeated])
        // Not DUPLICATE of the position the first one would have had: nothing is there.
        #expect(refused.allSatisfy { $0.position == nil }, "\(refused)")
        disk.freeSpace()
        let stored = try await client.publish([repeated, repeated])
        let position = try #require(stored.first?.position)
        #expect(stored == [.committed(position), .duplicate(position)])
    }

    @Test func aSubscriberStartedAfter100000EventsReceivesThemAllThenTheLiveOnesInOrderOnce() async throws {
        let bus = try await TestBus()
        let producer = try bus.client("producer")
        try await Self.publish(100_000, with: producer)
        let consumer = try bus.client("consumer")
        // The live ones are published once the subscriber has read the log.
        let positions = try await consumer.collect(
            until: .now + .seconds(90),
            onCaughtUp: { catchUp in
                if catchUp.isFirst { try await Self.publish(1000, with: producer, batch: 100) }
                return false
            }
        ) { $0.count >= 101_000 }.map(\.position)
        #expect(positions.count == 101_000)
        #expect(positions == Array(1...101_000))
    }

    @Test func aSlowSubscriberFarPastTheHighWaterMarkReceivesEveryEventOnceInOrder() async throws {
        // One message queued at each end: a message holds many events, and this subscriber
        // must fall far enough behind for libzmq to drop some.
        let bus = try await TestBus { $0.publishHighWaterMark = 1 }
        let producer = try bus.client("producer")
        let consumer = try bus.client("slow") { $0.subscriberHighWaterMark = 1 }
        let subscription = consumer.subscribe(.all, after: 0, bufferCapacity: 64)
        let total = 20_000
        var positions: [UInt64] = []
        var started = false
        var producing: Task<Void, any Error>?
        for try await item in subscription {
            switch item {
            case .event(let event):
                positions.append(event.position)
                // Slow on purpose: nothing more is taken until every event is published, far more
                // than the queues between the daemon and this subscriber hold.
                if positions.count == 1 { try await producing?.value }
            case .caughtUp:
                if !started {
                    started = true
                    producing = Task { try await Self.publish(total, with: producer, batch: 100) }
                }
            case .connection: break
            }
            if positions.count == total { break }
        }
        try await producing?.value
        #expect(positions == Array(1...UInt64(total)))
        // Publications were dropped for this subscriber and the log filled the gaps.
        #expect(subscription.gapsFilled > 0)
    }

    @Test func aPackageSubscriptionGetsOnlyThatPackageInOrder() async throws {
        let bus = try await TestBus()
        let client = try bus.client()
        for round in 0..<20 {
            _ = try await client.publish([
                Self.event(round, type: "bureau.a.X"), Self.event(round, type: "bureau.b.Y"),
                Self.event(round, type: "bureau.a.Z"),
            ])
        }
        let events = try await client.collect(EventFilter(prefixes: ["bureau.a."]), count: 40)
        let positions = events.map(\.position)
        #expect(Set(events.map(\.type)) == ["bureau.a.X", "bureau.a.Z"])
        let expected: [UInt64] = (0..<20).flatMap { round -> [UInt64] in
            let first = UInt64(round * 3 + 1)
            return [first, first + 2]
        }
        #expect(positions == expected)
    }

    @Test func aSubscriptionContinuesWithoutGapsAcrossADaemonRestart() async throws {
        let bus = try await TestBus()
        let client = try bus.client()
        let subscription = client.subscribe(EventFilter(prefixes: ["bureau.a."]))
        var iterator = subscription.events.makeAsyncIterator()
        _ = try await client.publish([Self.event(1, type: "bureau.a.X"), Self.event(2, type: "bureau.b.X")])
        #expect(try await iterator.next()?.position == 1)
        await bus.stop()
        try await bus.start()
        _ = try await client.publish([Self.event(3, type: "bureau.a.X"), Self.event(4, type: "bureau.a.Y")])
        #expect(try await iterator.next()?.position == 3)
        #expect(try await iterator.next()?.position == 4)
    }

    @Test func aTornTailCutAtStartIsReportedOnTheBus() async throws {
        let bus = try await TestBus()
        let client = try bus.client()
        _ = try await client.publish([Self.event(1), Self.event(2)])
        await bus.stop()
        // A power cut can leave the file longer than what was written, reading as zeros.
        let segment = bus.location.logDirectory + "/00000000000000000001.seg"
        try Files.overwrite(segment, at: Files.size(segment), with: [UInt8](repeating: 0, count: 300))
        try await bus.start()
        let reports = try await client.collect(
            .types([Bureau_System_ErrorRaised.protoMessageName]), count: 1, timeout: .seconds(30))
        try #require(reports.count == 1)
        let raised = try #require(try reports[0].payload(as: Bureau_System_ErrorRaised.self))
        #expect(reports[0].position == 3)
        #expect(reports[0].producerModule == "bus")
        #expect(raised.code == "log-recovered")
        #expect(raised.message.contains("dropped 300 byte(s)"), "\(raised.message)")
    }

    @Test func aSecondDaemonOnTheSameDataDirectoryRefusesAndNamesTheHolder() async throws {
        let bus = try await TestBus()
        var configuration = BusDaemon.Configuration(location: bus.location)
        configuration.heartbeatInterval = .milliseconds(100)
        // Started on a thread of its own: starting opens the log and takes its lock.
        let error = await #expect(throws: (any Error).self) {
            _ = try await BusDaemon(configuration: configuration, logger: TestLogging.logger("second"))
                .startOffThePool()
        }
        #expect(error.map { "\($0)".contains("in use by process \(getpid())") } == true, "\(String(describing: error))")
        // The first daemon's sockets and bus.json are untouched.
        #expect(FileManager.default.fileExists(atPath: bus.location.infoFile))
    }

    @Test func theRunDirectoryAndItsSocketsAreForTheOwnerOnly() async throws {
        let bus = try await TestBus()
        #expect(Files.mode(bus.location.runDirectory) == 0o700)
        for name in ["ingress.sock", "read.sock", "events.sock", "bus.json"] {
            #expect(Files.mode(bus.location.runDirectory + "/" + name) == 0o600, "\(name)")
        }
    }

    @Test func aDataDirectoryWhoseSocketPathsAreTooLongIsRefusedClearly() throws {
        let directory = try TemporaryDirectory("long")
        let location = BusLocation(dataDirectory: directory.file(String(repeating: "d", count: 100)))
        #expect {
            _ = try BusDaemon(configuration: .init(location: location), logger: TestLogging.logger("long")).start()
        } throws: { error in
            "\(error)".contains("over Linux's limit of 107")
        }
    }

    @Test func publishingWithNoDaemonFailsWithAClearErrorAfterTheTimeout() async throws {
        let directory = try TemporaryDirectory("none")
        var options = ZeroMQBusClient.Options(process: "test")
        options.publishTimeout = .milliseconds(600)
        let client = try ZeroMQBusClient(location: BusLocation(dataDirectory: directory.file("data")), options: options)
        await #expect {
            _ = try await client.publish(Self.event(1))
        } throws: { error in
            "\(error)".contains("no bus answered at ipc://") && "\(error)".contains("within 0.6 s")
        }
    }
}

extension BusDaemonTests {
    @Test func overTCPOnlyClientsWithAnAllowedCurveKeyGetIn() async throws {
        let server = try CurveKeyPair.generate()
        let allowed = try CurveKeyPair.generate()
        let stranger = try CurveKeyPair.generate()
        let bus = try await TestBus {
            $0.tcp = .init(
                host: "127.0.0.1", port: 0, security: .curve(server: server, allowedClients: [allowed.publicKey]))
        }
        let info = try bus.location.readInfo()
        let endpoints = try #require(info?.tcpEndpoints)
        #expect(endpoints.serverKey == server.publicKey)
        #expect(endpoints.ingress.hasPrefix("tcp://127.0.0.1:"))

        var options = ZeroMQBusClient.Options(process: "remote")
        options.curve = .init(serverKey: server.publicKey, keys: allowed)
        let remote = try ZeroMQBusClient(endpoints: endpoints, options: options)
        #expect(try await remote.publish(Self.event(1)) == .committed(1))
        // Live over CURVE too: the heartbeat comes through the PUB socket (and then event 2),
        // not only what catch-up reads fetch. A PUB that dropped CURVE subscribers never beats.
        var received = remote.subscribe().makeAsyncIterator()
        var heard = false
        var published = false
        var positions: [UInt64] = []
        while positions.count < 2, let item = try await received.next() {
            switch item {
            case .event(let event): positions.append(event.position)
            case .connection(let connected): heard = heard || connected
            case .caughtUp: break
            }
            if heard, !published, positions == [1] {
                published = true
                #expect(try await remote.publish(Self.event(2)) == .committed(2))
            }
        }
        #expect(heard)
        #expect(positions == [1, 2])

        var strangerOptions = ZeroMQBusClient.Options(process: "stranger")
        strangerOptions.curve = .init(serverKey: server.publicKey, keys: stranger)
        strangerOptions.publishTimeout = .milliseconds(700)
        let intruder = try ZeroMQBusClient(endpoints: endpoints, options: strangerOptions)
        await #expect(throws: BusError.self) { _ = try await intruder.publish(Self.event(3)) }
        #expect(try await bus.client().ping().head == 2)
    }

    /// A raw DEALER on `bus`'s ingress (it keeps its context alive), to send what README's
    /// protocol text describes. Replies are waited for up to 10 s.
    static func rawIngress(of bus: TestBus) throws -> ZMQSocket {
        try rawDealer(to: bus.location.ipcEndpoints.ingress)
    }

    /// A DEALER of the test's own on `endpoint`, waiting at most 10 s for a reply.
    static func rawDealer(to endpoint: String) throws -> ZMQSocket {
        let context = try ZMQContext()
        let socket = try context.socket(.dealer)
        try socket.setLinger(milliseconds: 0)
        try socket.setReceiveTimeout(milliseconds: 10_000)
        try socket.connect(endpoint)
        return socket
    }

    /// The frames of a catch-up read after `position`, as README's wire protocol writes them.
    static func readRequest(after position: UInt64, batched: Bool, id: UInt64) throws -> [Data] {
        var request = Bureau_Bus_ReadRequest()
        request.after = position
        request.batched = batched
        return [
            Data(WireProtocol.version.utf8), Data(WireProtocol.read.utf8), WireProtocol.requestID(id),
            try request.serializedData(),
        ]
    }

    /// A catch-up read that asks for a batch gets the envelopes in one frame, each after its
    /// length; one that does not (a client from before batched replies) gets a frame each.
    @Test func aReadAskingForABatchGetsItsEnvelopesInOneFrameAndOtherReadsAFrameEach() async throws {
        let bus = try await TestBus()
        let client = try bus.client()
        defer { client.close() }
        let sent = (0..<5).map { OutgoingEvent(type: "bureau.test.Happened", payload: Data([UInt8($0)])) }
        _ = try await client.publish(sent)
        let socket = try Self.rawDealer(to: bus.location.ipcEndpoints.read)
        defer { socket.close() }
        func read(batched: Bool) async throws -> (header: Bureau_Bus_ReadReply, envelopes: [Data]) {
            try socket.send(multipart: try Self.readRequest(after: 1, batched: batched, id: 7))
            let reply = try #require(try await socket.nextMessage())
            #expect(String(decoding: reply[1], as: UTF8.self) == WireProtocol.events)
            let header = try Bureau_Bus_ReadReply(serializedBytes: reply[3])
            guard batched else { return (header, Array(reply.dropFirst(4))) }
            #expect(reply.count == 5, "one frame of envelopes")
            return (header, try WireProtocol.envelopes(inBatch: reply[4], maxEnvelopes: 4096).get())
        }
        for batched in [true, false] {
            let (header, envelopes) = try await read(batched: batched)
            #expect(header.batched == batched && header.scannedTo == 5 && header.head == 5)
            let events = try envelopes.map { try StoredEvent(envelopeBytes: $0) }
            #expect(events.map(\.position) == [2, 3, 4, 5])
            #expect(events.map(\.id) == sent.dropFirst().map(\.id))
        }
    }

    /// A request that names the request it follows is stored only after that one: before, it
    /// is answered `out-of-order` and nothing of it is stored; one that follows a request sent
    /// just before it, unanswered, is stored behind it.
    @Test func aRequestIsStoredOnlyAfterTheRequestItFollows() async throws {
        let bus = try await TestBus()
        let socket = try Self.rawIngress(of: bus)
        defer { socket.close() }
        let header = [Data(WireProtocol.version.utf8), Data(WireProtocol.publish.utf8)]
        func send(_ request: UInt64, events: Int, follows: UInt64?) throws {
            let batch = WireProtocol.batch((0..<events).map { _ in TestEnvelope.bytes() })
            try socket.send(
                multipart: header + [WireProtocol.requestID(request), batch]
                    + (follows.map { [WireProtocol.requestID($0)] } ?? []))
        }
        /// The next answer: its request and, for an ack, the positions; for an error, its code.
        func answer() async throws -> (request: Data, positions: [UInt64], error: String?) {
            let reply = try #require(try await socket.nextMessage())
            if String(decoding: reply[1], as: UTF8.self) == WireProtocol.error {
                return (reply[2], [], try Bureau_Bus_ErrorReply(serializedBytes: reply[3]).code)
            }
            return (reply[2], try Bureau_Bus_PublishAck(serializedBytes: reply[3]).results.map(\.position), nil)
        }

        // The second request reaches the bus before the first (as one sent again after a lost
        // connection would): refused, nothing stored.
        try send(2, events: 1, follows: 1)
        let early = try await answer()
        #expect(early.request == WireProtocol.requestID(2) && early.error == BusErrorCode.outOfOrder.rawValue)
        #expect(try await bus.client().ping().head == 0)

        try send(1, events: 2, follows: nil)
        #expect(try await answer().positions == [1, 2])
        try send(2, events: 1, follows: 1)
        #expect(try await answer().positions == [3])

        // Sent back to back, the second before the first is answered (one wake-up of the
        // daemon, or two): both stored, in order.
        try send(3, events: 3, follows: nil)
        try send(4, events: 2, follows: 3)
        var answers: [Data: [UInt64]] = [:]
        for _ in 0..<2 {
            let next = try await answer()
            #expect(next.error == nil)
            answers[next.request] = next.positions
        }
        #expect(answers[WireProtocol.requestID(3)] == [4, 5, 6])
        #expect(answers[WireProtocol.requestID(4)] == [7, 8])

        // Following a request the bus took earlier is following it; one it never saw is not.
        try send(5, events: 1, follows: 1)
        #expect(try await answer().positions == [9])
        try send(6, events: 1, follows: 99)
        #expect(try await answer().error == BusErrorCode.outOfOrder.rawValue)
        #expect(try await bus.client().ping().head == 9)
    }

    /// A publish larger than the requests in flight at once keeps its events in order.
    @Test func aPublishOfManyRequestsInFlightIsStoredInOrder() async throws {
        let bus = try await TestBus()
        let client = try bus.client("producer") { $0.requestsInFlight = 3 }
        defer { client.close() }
        let events = (0..<(BusLimits.maxEnvelopesPerPublish * 7 + 5)).map { index in
            OutgoingEvent(type: "bureau.test.Happened", payload: Data("\(index)".utf8))
        }
        let outcomes = try await client.publish(events)
        #expect(outcomes.map(\.position) == (1...UInt64(events.count)).map { Optional($0) })
        var stored: [EventID] = []
        _ = try await client.readLog(to: UInt64(events.count)) { event, _ in
            stored.append(event.id)
            return true
        }
        #expect(stored == events.map(\.id))
    }

    /// A request as the scripted daemon below saw it.
    struct ScriptedRequest: Sendable {
        let id: UInt64
        let follows: UInt64?
        let batch: Data
    }

    /// The client against a scripted daemon that stores a request only after the one it
    /// follows, and takes the second request as if it had arrived first: every request but the
    /// first is sent following the one before it while that is unanswered, the refused one is
    /// sent again following nothing once the first is answered, and the publish answers every
    /// event in order.
    @Test func aRequestRefusedOutOfOrderIsSentAgainAfterTheOneBeforeIt() async throws {
        let directory = try TemporaryDirectory("scripted")
        let endpoints = BusEndpoints(
            ingress: "ipc://\(directory.file("ingress"))", read: "ipc://\(directory.file("read"))",
            events: "ipc://\(directory.file("events"))")
        let total = BusLimits.maxEnvelopesPerPublish * 4 + 1
        /// What the scripted daemon saw: each request's id, the one it followed, and its batch.
        /// On a thread of its own: its calls block, and a blocked thread of the shared pool
        /// starves the client's tasks when the other suites run beside it.
        async let script = OwnThread.run(name: "script") { () throws -> [ScriptedRequest] in
            let context = try ZMQContext()
            let router = try BusFuzzTests.scriptedRouter(in: context, at: endpoints.ingress, receiveTimeout: 20_000)
            defer { router.close() }
            // Each request once, in the order first received (the client sends a request it
            // has no answer to again, under the same id: a slow script sees retries).
            var seen: [ScriptedRequest] = []
            var answers: [UInt64: [Data]] = [:]
            var stored: Set<UInt64> = []
            var position: UInt64 = 0
            func receive() throws -> (request: [Data], id: UInt64) {
                while true {
                    let frames = try #require(try router.receiveMessage())
                    let id = try #require(WireProtocol.parseRequestID(frames[3]))
                    if let answer = answers[id] {
                        try router.send(multipart: [frames[0]] + answer)
                        continue
                    }
                    if !seen.contains(where: { $0.id == id }) {
                        seen.append(
                            ScriptedRequest(
                                id: id, follows: frames.count > 5 ? WireProtocol.parseRequestID(frames[5]) : nil,
                                batch: frames[4]))
                    }
                    return (frames, id)
                }
            }
            func send(_ request: [Data], id: UInt64, _ verb: String, _ body: Data) throws {
                answers[id] = [request[1], Data(verb.utf8), request[3], body]
                try router.send(multipart: [request[0], request[1], Data(verb.utf8), request[3], body])
            }
            func refuse(_ request: [Data], id: UInt64) throws {
                var refusal = Bureau_Bus_ErrorReply()
                refusal.code = BusErrorCode.outOfOrder.rawValue
                try send(request, id: id, WireProtocol.error, try refusal.serializedData())
            }
            func answer(_ request: [Data], id: UInt64) throws {
                let follows = request.count > 5 ? WireProtocol.parseRequestID(request[5]) : nil
                if let follows, !stored.contains(follows) { return try refuse(request, id: id) }
                stored.insert(id)
                let count = try WireProtocol.envelopeRanges(inBatch: request[4], maxEnvelopes: 4096).get().count
                var ack = Bureau_Bus_PublishAck()
                ack.results = (0..<count).map { _ in
                    position += 1
                    var result = Bureau_Bus_PublishResult()
                    result.status = .committed
                    result.position = position
                    return result
                }
                ack.head = position
                try send(request, id: id, WireProtocol.ack, try ack.serializedData())
            }
            // The second request as if it came first: refused; then the first, stored. (A
            // retry of the first before the second arrives is the first again: not answered.)
            let first = try receive()
            var second = try receive()
            while second.id == first.id { second = try receive() }
            try refuse(second.request, id: second.id)
            try answer(first.request, id: first.id)
            while position < UInt64(total) {
                let next = try receive()
                try answer(next.request, id: next.id)
            }
            return seen
        }
        let client = try ZeroMQBusClient(
            endpoints: endpoints,
            options: {
                var options = ZeroMQBusClient.Options(process: "producer")
                options.requestsInFlight = 2
                options.publishTimeout = .seconds(20)
                return options
            }(), logger: TestLogging.logger("producer"))
        defer { client.close() }
        let events = (0..<total).map { _ in OutgoingEvent(type: "bureau.test.Happened", payload: Data("x".utf8)) }
        let outcomes = try await client.publish(events)
        #expect(outcomes.map(\.position) == (1...UInt64(total)).map { Optional($0) })
        let seen = try await script
        #expect(seen.count >= 6, "5 requests and the refused one again: \(seen)")
        #expect(seen[0].follows == nil && seen[1].follows == seen[0].id)
        // The refused second request's events went again under a new id, following nothing.
        let again = try #require(seen.dropFirst(2).first { $0.batch == seen[1].batch })
        #expect(again.follows == nil && again.id != seen[1].id)
        // And the positions above, 1… in the events' order, say the script stored them in order.
    }

    /// An `ack` whose body is not a PublishAck fails the publish at once, saying so, rather than
    /// being passed over until the publish timeout calls the bus silent.
    @Test func aMalformedAcknowledgementFailsThePublishSayingSo() async throws {
        let directory = try TemporaryDirectory("scripted")
        let endpoints = BusEndpoints(
            ingress: "ipc://\(directory.file("ingress"))", read: "ipc://\(directory.file("read"))",
            events: "ipc://\(directory.file("events"))")
        // Answers the first request with a truncated varint under the ack verb.
        async let script = OwnThread.run(name: "script") { () throws -> Void in
            let context = try ZMQContext()
            let router = try BusFuzzTests.scriptedRouter(in: context, at: endpoints.ingress, receiveTimeout: 20_000)
            defer { router.close() }
            let frames = try #require(try router.receiveMessage())
            try router.send(multipart: [
                frames[0], frames[1], Data(WireProtocol.ack.utf8), frames[3], Data([0x10, 0xFF]),
            ])
        }
        let client = try ZeroMQBusClient(
            endpoints: endpoints,
            options: {
                var options = ZeroMQBusClient.Options(process: "producer")
                options.publishTimeout = .seconds(20)
                return options
            }(), logger: TestLogging.logger("producer"))
        defer { client.close() }
        let failure = await #expect(throws: BusError.self) {
            try await client.publish([OutgoingEvent(type: "bureau.test.Happened", payload: Data("x".utf8))])
        }
        #expect(
            failure == .unexpectedAnswer("an acknowledgement that is not a PublishAck"),
            "\(String(describing: failure))")
        try await script
    }

    /// A reply that says it is a batch but is not one is refused like an unanswered read: the
    /// client asks again after its read timeout, not at once (a daemon or a relay answering so
    /// would otherwise be read from in a tight loop), and takes the next good reply.
    @Test func aMalformedBatchedReadReplyIsAskedAgainAfterTheReadTimeoutNotAtOnce() async throws {
        let directory = try TemporaryDirectory("scripted")
        let endpoints = BusEndpoints(
            ingress: "ipc://\(directory.file("ingress"))", read: "ipc://\(directory.file("read"))",
            events: "ipc://\(directory.file("events"))")
        let event = try EnvelopeStamp(seconds: 1_700_000_000, nanos: 0).stamped(
            OutgoingEvent(type: "bureau.test.Happened", payload: Data("x".utf8)).envelopeBytes(process: "p"),
            position: 1)
        // The reads as the scripted read socket got them: when, and with which request id. It
        // answers the first without its batch frame, every later one with the one event, and
        // stops when told (or after 20 s). It is bound before the client starts, so that no read
        // waits for it and times out (reads sent before a bind would arrive all at once).
        let (bound, isBound) = AsyncStream<Void>.makeStream()
        let stop = StopFlag()
        async let script = OwnThread.run(name: "script") { () throws -> [(at: ContinuousClock.Instant, id: Data)] in
            let context = try ZMQContext()
            let router = try BusFuzzTests.scriptedRouter(in: context, at: endpoints.read, receiveTimeout: 100)
            defer { router.close() }
            isBound.yield()
            isBound.finish()
            var reads: [(at: ContinuousClock.Instant, id: Data)] = []
            var reply = Bureau_Bus_ReadReply()
            reply.batched = true
            let deadline = ContinuousClock.now + .seconds(20)
            while !stop.isSet, ContinuousClock.now < deadline {
                let received: [Data]?
                do {
                    received = try router.receiveMessage()
                } catch let error as ZMQError where error.wouldBlock {
                    continue  // 100 ms without a read: look at the stop flag again
                }
                guard let frames = received, String(decoding: frames[2], as: UTF8.self) == WireProtocol.read
                else { continue }
                reads.append((ContinuousClock.now, frames[3]))
                reply.head = reads.count == 1 ? 0 : 1
                reply.scannedTo = reply.head
                let envelopes = reads.count == 1 ? [] : [WireProtocol.batch([event])]
                try router.send(
                    multipart: [
                        frames[0], frames[1], Data(WireProtocol.events.utf8), frames[3], try reply.serializedData(),
                    ] + envelopes)
            }
            return reads
        }
        for await _ in bound { break }
        var options = ZeroMQBusClient.Options(process: "reader")
        options.readTimeout = .milliseconds(300)
        let client = try ZeroMQBusClient(endpoints: endpoints, options: options, logger: TestLogging.logger("reader"))
        defer { client.close() }
        let received = try await client.collect(
            until: .now + .seconds(30), onCaughtUp: { !$0.events.isEmpty }, done: { _ in false })
        stop.set()
        let reads = try await script
        #expect(received.map(\.position) == [1])
        #expect(reads.count >= 2)
        if reads.count >= 2 {
            #expect(reads[0].id != reads[1].id)
            #expect(reads[1].at - reads[0].at >= .milliseconds(250), "asked again after \(reads[1].at - reads[0].at)")
        }
    }

    /// What README's protocol text says of request shapes, through a raw DEALER.
    @Test func requestsOutsideTheProtocolTextAreAnsweredWithTheRightError() async throws {
        let bus = try await TestBus()
        let socket = try Self.rawIngress(of: bus)
        let version = Data(WireProtocol.version.utf8)
        let publish = Data(WireProtocol.publish.utf8)
        func ask(_ frames: [Data]) async throws -> (verb: String, id: Data, body: Data) {
            try socket.send(multipart: frames)
            let reply = try #require(try await socket.nextMessage())
            return (String(decoding: reply[1], as: UTF8.self), reply[2], reply[3])
        }
        func error(_ body: Data) throws -> Bureau_Bus_ErrorReply { try Bureau_Bus_ErrorReply(serializedBytes: body) }
        let id = WireProtocol.requestID(42)

        let empty = try await ask([version, publish, id])
        #expect(empty.verb == "error" && empty.id == id)
        #expect(try error(empty.body).code == BusErrorCode.malformedRequest.rawValue)

        let nine = try await ask([version, publish, Data(count: 9), WireProtocol.batch([TestEnvelope.bytes()])])
        #expect(nine.verb == "error" && nine.id.isEmpty)
        #expect(try error(nine.body).message.contains("must be 8 bytes, not 9"))

        let large = try await ask([version, publish, id] + Array(repeating: Data(count: 600_000), count: 16))
        #expect(large.verb == "error")
        #expect(try error(large.body).code == BusErrorCode.tooLarge.rawValue)

        // bureau/2: a publish request's envelopes travel in one batch frame, each after its length.
        let oldVersion = try await ask([Data("bureau/1".utf8), publish, id, TestEnvelope.bytes()])
        #expect(oldVersion.verb == "error" && oldVersion.id == id)
        #expect(try error(oldVersion.body).code == BusErrorCode.unsupportedProtocol.rawValue)
        #expect(try error(oldVersion.body).message.contains("this bus speaks bureau/2"))

        let batchOfOne = WireProtocol.batch([TestEnvelope.bytes()])
        let threeFrames = try await ask([version, publish, id, batchOfOne, Data(count: 16), Data(count: 16)])
        #expect(try error(threeFrames.body).code == BusErrorCode.malformedRequest.rawValue)
        #expect(try error(threeFrames.body).message.contains("not 3 frames"))
        // A second frame is the id of the request this one follows: 8 bytes.
        let twoFrames = try await ask([version, publish, id, batchOfOne, TestEnvelope.bytes()])
        #expect(try error(twoFrames.body).code == BusErrorCode.malformedRequest.rawValue)
        #expect(try error(twoFrames.body).message.contains("the id of the request it follows: 8 bytes"))

        var cut = WireProtocol.batch([TestEnvelope.bytes(), TestEnvelope.bytes()])
        cut.removeLast(3)
        let cutShort = try await ask([version, publish, id, cut])
        #expect(try error(cutShort.body).code == BusErrorCode.malformedRequest.rawValue)
        #expect(try error(cutShort.body).message.contains("envelope 2 says"))

        let emptyBatch = try await ask([version, publish, id, Data()])
        #expect(try error(emptyBatch.body).code == BusErrorCode.malformedRequest.rawValue)

        let tooMany = try await ask(
            [version, publish, id, WireProtocol.batch(Array(repeating: Data([1]), count: 4097))])
        #expect(try error(tooMany.body).code == BusErrorCode.tooLarge.rawValue)
        #expect(try error(tooMany.body).message.contains("at most 4096 envelopes"))
        #expect(try await bus.client().ping().head == 0, "nothing refused whole is committed")

        // A retry of a committed request finds its events, at the same positions.
        let batch = WireProtocol.batch([TestEnvelope.bytes()])
        let retried = WireProtocol.requestID(7)
        let firstAnswer = try await ask([version, publish, retried, batch])
        let secondAnswer = try await ask([version, publish, retried, batch])
        let first = try #require(try Bureau_Bus_PublishAck(serializedBytes: firstAnswer.body).results.first)
        let second = try #require(try Bureau_Bus_PublishAck(serializedBytes: secondAnswer.body).results.first)
        #expect(first.status == .committed && second.status == .duplicate)
        #expect(first.position == second.position)

        // A correlation id that is neither 16 bytes nor absent is rejected.
        var bad = Bureau_Envelope()
        bad.id = Data(EventID.random().bytes)
        bad.type = "bureau.test.Happened"
        bad.correlation = Data(count: 5)
        let rejected = try await ask(
            [version, publish, WireProtocol.requestID(9), WireProtocol.batch([try bad.serializedData()])])
        let result = try #require(try Bureau_Bus_PublishAck(serializedBytes: rejected.body).results.first)
        #expect(result.status == .rejected && result.reason.contains("correlation id must be 16 bytes"))
        socket.close()
    }
}
