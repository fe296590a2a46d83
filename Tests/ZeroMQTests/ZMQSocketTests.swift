import Foundation
import TestSupport
import Testing
import ZeroMQ

struct ZMQSocketTests {
    @Test func aFailedCallNamesTheCallAndLibzmqsErrnoText() throws {
        let context = try ZMQContext()
        let socket = try context.socket(.router)
        #expect {
            try socket.bind("bogus://nowhere")
        } throws: { error in
            let text = "\(error)"
            return text.contains("zmq_bind(bogus://nowhere)") && text.contains("Protocol not supported")
        }
        socket.close()
        #expect {
            try socket.connect("inproc://x")
        } throws: { error in
            "\(error)".contains("zmq_connect(inproc://x)") && "\(error)".contains("Socket operation on non-socket")
        }
    }

    @Test func multipartMessagesArriveWholeAndInOrder() async throws {
        let context = try ZMQContext()
        let server = try context.socket(.router)
        let client = try context.socket(.dealer)
        try server.bind("inproc://multipart")
        try client.connect("inproc://multipart")
        let frames = [Data("one".utf8), Data(), Data(repeating: 9, count: 70_000)]
        try client.send(multipart: frames)
        let received = try #require(try await server.nextMessage())
        #expect(received.count == 4)
        let body: [Data] = Array(received.dropFirst())
        #expect(body == frames)
        try server.send(multipart: [received[0], Data("reply".utf8)])
        #expect(try await client.nextMessage() == [Data("reply".utf8)])
        #expect(try client.receiveMessage(wait: false) == nil)
    }

    @Test func framesReceivedIntoABufferReplaceItAndTheRestOfAMessageCanBeSkipped() throws {
        let context = try ZMQContext()
        let pull = try context.socket(.pull)
        let push = try context.socket(.push)
        try pull.bind("inproc://frames")
        try push.connect("inproc://frames")
        try push.send(multipart: [Data("a longer first frame".utf8), Data("two".utf8), Data(), Data("four".utf8)])
        try push.send(multipart: [Data("next".utf8)])
        var buffer: [UInt8] = Array("left over from before".utf8)
        #expect(try pull.receiveFrame(into: &buffer) == true)
        #expect(buffer == Array("a longer first frame".utf8))
        #expect(try pull.receiveFrame(into: &buffer) == true)
        #expect(buffer == Array("two".utf8))
        try pull.skipRestOfMessage()
        #expect(try pull.receiveFrame(into: &buffer) == false)
        #expect(buffer == Array("next".utf8))
        // Nothing is left over to skip once the last frame is in.
        try pull.skipRestOfMessage()
        #expect(try pull.receiveFrame(into: &buffer, wait: false) == nil)
    }

    // The poll blocks its thread until the signal rings: on threads of its own, not the pool's.
    @Test(.ownThreads) func thePollerHearsSocketsAndAWakeSignalRungFromAnotherThread() async throws {
        let context = try ZMQContext()
        let pull = try context.socket(.pull)
        try pull.bind("inproc://poll")
        let signal = try WakeSignal()
        var poller = ZMQPoller()
        let socketItem = poller.add(pull)
        let signalItem = poller.add(fileDescriptor: signal.fileDescriptor)
        #expect(try poller.poll(timeout: 0) == 0)
        // A thread of its own: the poll below blocks this one, and a task might wait for it.
        Thread.detachNewThread { signal.ring() }
        try poller.poll(timeout: 10_000)
        #expect(poller.isReadable(signalItem))
        #expect(!poller.isReadable(socketItem))
        signal.drain()
        #expect(try poller.poll(timeout: 0) == 0)
    }

    @Test func curveKeysRoundTripBetweenTextAndBytes() throws {
        let pair = try CurveKeyPair.generate()
        #expect(CurveKeyPair.isValidKey(pair.publicKey) && CurveKeyPair.isValidKey(pair.secretKey))
        #expect(try CurveKeyPair(secretKey: pair.secretKey) == pair)
        let raw = try #require(CurveKeyPair.rawBytes(ofKey: pair.publicKey))
        #expect(CurveKeyPair.text(ofRawKey: raw) == pair.publicKey)
        #expect(throws: ZMQError.self) { try CurveKeyPair(secretKey: "too short") }
    }

    @Test func curveAdmitsListedClientsAndTheZAPHandlerRefusesOthers() async throws {
        let context = try ZMQContext()
        let server = try CurveKeyPair.generate()
        let allowed = try CurveKeyPair.generate()
        let stranger = try CurveKeyPair.generate()
        let (decisions, record) = AsyncStream.makeStream(of: ZAPHandler.Decision.self)
        let zap = try ZAPHandler(
            context: context, allowedKeys: [allowed.publicKey], onDecision: { record.yield($0) },
            onFailure: { Issue.record("the ZAP handler failed: \($0)") })
        try zap.start()
        defer { zap.stop() }
        let router = try context.socket(.router)
        try router.setLinger(milliseconds: 0)
        try router.setZAPDomain("test")
        try router.setCurveServer(secretKey: server.secretKey)
        try router.bind("tcp://127.0.0.1:*")
        let endpoint = try router.lastEndpoint

        var decisionIterator = decisions.makeAsyncIterator()
        let good = try context.socket(.dealer)
        try good.setLinger(milliseconds: 0)
        try good.setCurveClient(serverKey: server.publicKey, keys: allowed)
        try good.connect(endpoint)
        let first = try #require(await decisionIterator.next())
        #expect(first.allowed && first.clientKey == allowed.publicKey)
        try good.send(Data("hello".utf8))
        try router.setReceiveTimeout(milliseconds: 10_000)
        let message = try #require(try await router.nextMessage())
        #expect(message.last == Data("hello".utf8))

        let bad = try context.socket(.dealer)
        try bad.setLinger(milliseconds: 0)
        try bad.setCurveClient(serverKey: server.publicKey, keys: stranger)
        try bad.connect(endpoint)
        let second = try #require(await decisionIterator.next())
        #expect(!second.allowed && second.clientKey == stranger.publicKey)
        good.close()
        bad.close()
        router.close()
    }
}
