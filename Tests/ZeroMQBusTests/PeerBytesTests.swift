import BureauSchemas
import Bus
import EventLog
import Foundation
import Guards
import TestSupport
import Testing
import ZeroMQ
import ZeroMQBus

/// Bytes a peer sends reach a terminal only escaped: control characters in a request's version
/// or verb, in a type name, in an error's module, code and message, in a booking's reason and a
/// fixing's date are written as escapes in the daemon's log and in what the CLI prints (`show
/// errors`, `show reservations`, `show converter`, `log show`).
@Suite(.timeLimit(.minutes(2)))
struct PeerBytesTests {
    /// An OSC that retitles a terminal, a clear screen, an 8-bit CSI and a forged log line.
    static let hostile = "\u{1B}]0;owned\u{07}\u{1B}[2J\u{9B}31m\n2026-01-01T00:00:00Z critical forged"

    /// The characters of `text` a terminal would act on (newlines apart, which listings use).
    static func raw(_ text: String) -> [String] {
        text.unicodeScalars.filter { TerminalText.needsEscape($0, keepingLineBreaks: true) }
            .map { String($0.value, radix: 16) }
    }

    @Test func controlCharactersFromPeersReachTheLogAndTheCLIOnlyEscaped() async throws {
        let directory = try TemporaryDirectory("peer-bytes")
        let bus = BusProcess(directory: directory.path)
        let daemon = try await bus.start()
        let context = try ZMQContext()
        let hostile = Data(Self.hostile.utf8)
        // Through both request sockets: a version, then a verb, each answered with an error.
        for endpoint in [bus.location.ipcEndpoints.ingress, bus.location.ipcEndpoints.read] {
            let peer = try context.socket(.dealer)
            try peer.setLinger(milliseconds: 0)
            try peer.setReceiveTimeout(milliseconds: 10_000)
            try peer.connect(endpoint)
            for frames in [
                [hostile, Data("publish".utf8), WireProtocol.requestID(1), Data([0])],
                [Data(WireProtocol.version.utf8), hostile, WireProtocol.requestID(2)],
            ] {
                try peer.send(multipart: frames)
                let answer = try #require(try await peer.nextMessage(), "no answer from \(endpoint)")
                #expect(answer.count == 4 && String(decoding: answer[1], as: UTF8.self) == WireProtocol.error)
            }
            peer.close()
        }
        // Through the events socket: a subscription holding them (libzmq keeps it; nothing is shown).
        let subscriber = try context.socket(.sub)
        try subscriber.setLinger(milliseconds: 0)
        try subscriber.subscribe(Self.hostile)
        try subscriber.connect(bus.location.ipcEndpoints.events)

        let client = try ZeroMQBusClient(
            location: bus.location, options: .init(process: "peer"), logger: TestLogging.logger("peer"))
        // A type name holding them is refused, with a reason that names it.
        let refused = try await client.publish(OutgoingEvent(type: "bureau.x." + Self.hostile, payload: Data()))
        guard case .rejected(let reason) = refused else {
            Issue.record("a type name with control characters was accepted: \(refused)")
            return
        }
        #expect(reason.contains("type"), "\(reason)")
        // An error whose every text field holds them is stored as it came (the log keeps what was said).
        var raised = Bureau_System_ErrorRaised()
        raised.module = "mod" + Self.hostile
        raised.process = "proc" + Self.hostile
        raised.code = "code" + Self.hostile
        raised.message = "message" + Self.hostile
        #expect(try await client.publish(OutgoingEvent(raised)) == .committed(1))
        // A reservation a booking service failed with a reason holding them, and rates dated with them.
        var accepted = Bureau_Reservations_ReservationAcceptedV2()
        accepted.reservationID = "r-1"
        accepted.base = "EUR"
        accepted.quote = "USD"
        var failed = Bureau_Booking_ReservationFailed()
        failed.reservationID = "r-1"
        failed.reason = "refused" + Self.hostile
        var rates = Bureau_Rates_RatesPublished()
        rates.asOf = "2026-11-02" + Self.hostile
        rates.base = "EUR"
        for event in [try OutgoingEvent(accepted), try OutgoingEvent(failed), try OutgoingEvent(rates)] {
            #expect(try await client.publish(event).position != nil)
        }
        client.close()
        subscriber.close()

        let errors = try await bus.run(["show", "errors"])
        #expect(errors.code == 0, "\(errors.err)")
        #expect(Self.raw(errors.out).isEmpty, "show errors printed raw controls: \(Self.raw(errors.out))")
        #expect(errors.out.contains("message\\u{1B}]0;owned\\u{7}"), "\(errors.out)")
        #expect(errors.out.split(separator: "\n").count == 1, "one error, one line: \(errors.out)")
        for (model, rows) in [("reservations", 1), ("converter", 2)] {
            let shown = try await bus.run(["show", model])
            #expect(shown.code == 0, "\(shown.err)")
            #expect(Self.raw(shown.out).isEmpty, "show \(model) printed raw controls: \(Self.raw(shown.out))")
            #expect(shown.out.contains("\\u{1B}]0;owned"), "show \(model): \(shown.out)")
            #expect(shown.out.split(separator: "\n").count == rows, "show \(model), a line a row: \(shown.out)")
        }
        let shown = try await bus.run(["log", "show"])
        #expect(shown.code == 0, "\(shown.err)")
        #expect(Self.raw(shown.out).isEmpty, "log show printed raw controls: \(Self.raw(shown.out))")
        #expect(!shown.out.contains("\n2026-01-01T00:00:00Z critical forged"), "a payload forged a line of log show")

        #expect(await bus.stop() == 0)
        let log = daemon.standardError
        #expect(log.contains("\\u{1B}]0;owned\\u{7}"), "the daemon logged what the peers sent, escaped: \(log)")
        #expect(Self.raw(log).isEmpty, "the daemon's log holds raw controls: \(Self.raw(log))")
        #expect(!log.contains("\n2026-01-01T00:00:00Z critical forged"), "a peer forged a line of the log")
    }

    /// A client command logs what a daemon said (a refusal's code and message) through the
    /// handler every `bureau` process has, as the daemon logs what peers say: escaped. Played by
    /// the test, as no daemon of ours refuses with such words.
    @Test func aDaemonsWordsReachAClientCommandsLogOnlyEscaped() async throws {
        let directory = try TemporaryDirectory("peer-bytes-client")
        let server = try ScriptedReadServer(location: BusLocation(dataDirectory: directory.path))
        defer { server.close() }
        let tail = try ChildProcess(
            BureauExecutable.path, ["log", "tail", "--after", "0", "--data", directory.path], directory: directory.path,
            name: "tail")
        defer { tail.signal(SIGKILL) }
        // Every read it asks is refused so, until it says so (a read that timed out on a loaded
        // machine is asked again, and the refusal of the one before is not its answer).
        var said = false
        for _ in 0..<10 where !said {
            let read = try await server.nextRequest(verb: WireProtocol.read)
            try server.refuse(read, code: "code" + Self.hostile, message: "message" + Self.hostile)
            said = (try? await tail.waitForOutput("a catch-up read failed", timeout: .seconds(5))) != nil
        }
        #expect(said, "log tail never said its read was refused: \(tail.standardError)")
        tail.signal(SIGKILL)
        _ = await tail.exitStatus()
        let log = tail.standardError
        #expect(log.contains("message\\u{1B}]0;owned\\u{7}"), "the client logged what the daemon said, escaped: \(log)")
        #expect(Self.raw(log).isEmpty, "the client's log holds raw controls: \(Self.raw(log))")
        #expect(!log.contains("\n2026-01-01T00:00:00Z critical forged"), "a daemon forged a line of the client's log")
    }
}
