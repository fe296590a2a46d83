import Bus
import Foundation
import TestSupport
import Testing
import ZeroMQBus

/// Another language joins the bus: the Python scripts in tools/python, as README documents them.
@Suite(.timeLimit(.minutes(2)))
struct PythonClientTests {
    static let scripts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("tools/python").path
    /// Debian's interpreter, where python3-zmq and python3-protobuf are installed.
    static let python = "/usr/bin/python3"

    static func python(
        _ arguments: [String], in directory: TemporaryDirectory, name: String
    ) async throws -> (
        code: Int32, out: String, err: String
    ) {
        let child = try ChildProcess(Self.python, arguments, directory: directory.path, name: name)
        let code = await child.exitCode(within: .seconds(60)) ?? -1
        return (code, child.standardOutput, child.standardError)
    }

    /// `subscribe.py` reading `bus` from its data directory, with `arguments`, as a child named `name`.
    static func subscriber(
        of bus: BusProcess, _ arguments: [String], in directory: TemporaryDirectory, name: String
    ) throws -> ChildProcess {
        try ChildProcess(
            python, [scripts + "/subscribe.py", "--data", bus.location.dataDirectory] + arguments,
            directory: directory.path, name: name)
    }

    /// The wire's error codes live in `BusErrorCode`; the Python client's copy says the same.
    @Test func thePythonClientKnowsTheBussErrorCodesAsBusErrorCodeListsThem() async throws {
        let directory = try TemporaryDirectory("python-codes")
        let listed = try await Self.python(
            [
                "-c",
                "import sys; sys.path.insert(0, sys.argv[1]); import bureau_bus as b; "
                    + "print(b.AHEAD_OF_LOG); print('\\n'.join(sorted(b.ERROR_CODES)))",
                Self.scripts,
            ], in: directory, name: "codes")
        #expect(listed.code == 0, "\(listed.err)")
        let lines = listed.out.split(separator: "\n").map(String.init)
        #expect(lines.first == BusErrorCode.aheadOfLog.rawValue)
        #expect(Array(lines.dropFirst()) == BusErrorCode.known.map(\.rawValue).sorted())
    }

    @Test func aPythonClientPublishesARequestAndAnotherFollowsTheBus() async throws {
        let directory = try TemporaryDirectory("python")
        let bus = BusProcess(directory: directory.path)
        try await bus.start()
        let reducer = try ChildProcess(
            BureauExecutable.path, ["run", "converter", "--data", bus.location.dataDirectory],
            directory: directory.path,
            name: "converter", readiness: true)
        defer { reducer.signal(SIGKILL) }
        try await reducer.waitUntilReady()
        let data = bus.location.dataDirectory

        let accepted = try await Self.python(
            [
                Self.scripts + "/request.py", "--data", data, "bureau.converter.AmountSetRequested",
                #"{"value": "250", "currency": "EUR"}"#,
            ], in: directory, name: "request")
        #expect(accepted.code == 0, "\(accepted.err)")
        #expect(accepted.out.contains(#"bureau.converter.AmountChanged {"value": "250.00", "currency": "EUR"}"#))

        let rejected = try await Self.python(
            [
                Self.scripts + "/request.py", "--data", data, "bureau.converter.AmountSetRequested",
                #"{"value": "-3", "currency": "EUR"}"#,
            ], in: directory, name: "rejected")
        #expect(rejected.code == 1, "\(rejected.err)")
        #expect(rejected.out.contains("bureau.converter.AmountRejected"))
        #expect(rejected.out.contains("NOT_POSITIVE"))

        // The subscriber sees all four events, from the log, in order.
        let followed = try await Self.python(
            [Self.scripts + "/subscribe.py", "--data", data, "--count", "4"], in: directory, name: "subscribe")
        #expect(followed.code == 0, "\(followed.err)")
        let types = followed.out.split(separator: "\n").map {
            $0.split(separator: " ").prefix(2).joined(separator: " ")
        }
        #expect(
            types == [
                "1 bureau.converter.AmountSetRequested", "2 bureau.converter.AmountChanged",
                "3 bureau.converter.AmountSetRequested", "4 bureau.converter.AmountRejected",
            ])
        await bus.stop()
    }

    /// The same scripts joining a bus on another machine: TCP with CURVE, by options or by the
    /// BUREAU_* variables, as the Swift commands do.
    @Test func aPythonClientJoinsABusOverCurveTCP() async throws {
        let directory = try TemporaryDirectory("python-curve")
        for stem in ["bus", "python"] {
            let keygen = try await ChildProcess.bureau(
                ["keygen", directory.file(stem)], in: directory.path, name: stem)
            #expect(keygen.code == 0)
        }
        let port = try KeysAndTCPTests.freePort()
        let bus = BusProcess(directory: directory.path)
        try await bus.start([
            "--listen", "127.0.0.1:\(port)", "--curve-secret-file", directory.file("bus.key"), "--allow-keys",
            directory.file("python.pub"),
        ])
        let reducer = try ChildProcess(
            BureauExecutable.path, ["run", "converter", "--data", bus.location.dataDirectory],
            directory: directory.path, name: "converter", readiness: true)
        defer { reducer.signal(SIGKILL) }
        try await reducer.waitUntilReady()
        let url = "tcp://127.0.0.1:\(port)"

        let accepted = try await Self.python(
            [
                Self.scripts + "/request.py", "--bus", url, "--server-key", directory.file("bus.pub"), "--client-key",
                directory.file("python.key"), "bureau.converter.AmountSetRequested",
                #"{"value": "250", "currency": "EUR"}"#,
            ], in: directory, name: "request")
        #expect(accepted.code == 0, "\(accepted.err)")
        #expect(accepted.out.contains(#"bureau.converter.AmountChanged {"value": "250.00", "currency": "EUR"}"#))

        let followed = try ChildProcess(
            Self.python, [Self.scripts + "/subscribe.py", "--count", "2"], directory: directory.path,
            name: "subscribe",
            environment: [
                "BUREAU_BUS": url, "BUREAU_SERVER_KEY": directory.file("bus.pub"),
                "BUREAU_CLIENT_KEY": directory.file("python.key"),
            ])
        let code = await followed.exitCode(within: .seconds(60))
        if code == nil { followed.signal(SIGKILL) }
        #expect(code == 0, "\(followed.standardError)")
        let printed: [String] = followed.standardOutput.split(separator: "\n").map { line in
            line.split(separator: " ").prefix(2).joined(separator: " ")
        }
        #expect(printed == ["1 bureau.converter.AmountSetRequested", "2 bureau.converter.AmountChanged"])
        await bus.stop()
    }

    /// A bus that does not let the client's key in: both scripts say so and stop at once,
    /// watching the handshake with a socket monitor, instead of sending again until their
    /// timeouts (libzmq reconnects silently). The scripts are given a minute and waited for
    /// 20 s: one that waited for its timeout could not pass.
    @Test func aRefusedKeyFailsFastWithTheReason() async throws {
        let directory = try TemporaryDirectory("python-refused")
        for stem in ["bus", "python", "stranger"] {
            let keygen = try await ChildProcess.bureau(
                ["keygen", directory.file(stem)], in: directory.path, name: stem)
            #expect(keygen.code == 0)
        }
        let port = try KeysAndTCPTests.freePort()
        let bus = BusProcess(directory: directory.path)
        try await bus.start([
            "--listen", "127.0.0.1:\(port)", "--curve-secret-file", directory.file("bus.key"), "--allow-keys",
            directory.file("stranger.pub"),
        ])
        let connection = [
            "--bus", "tcp://127.0.0.1:\(port)", "--server-key", directory.file("bus.pub"), "--client-key",
            directory.file("python.key"),
        ]
        let scripts: [(name: String, arguments: [String], code: Int32)] = [
            (
                "request",
                [Self.scripts + "/request.py"] + connection + [
                    "--timeout", "60", "bureau.converter.AmountSetRequested", #"{"value": "250", "currency": "EUR"}"#,
                ], 3
            ),
            ("subscribe", [Self.scripts + "/subscribe.py"] + connection, 1),
        ]
        for script in scripts {
            let child = try ChildProcess(Self.python, script.arguments, directory: directory.path, name: script.name)
            let code = await child.exitCode(within: .seconds(20))
            if code == nil { child.signal(SIGKILL) }
            #expect(code == script.code, "\(script.name): \(child.standardError)")
            #expect(
                child.standardError.contains(
                    "\(script.name).py: cannot use the bus: the bus refused this client's key: its public key "
                        + "is not in the daemon's --allow-keys"),
                "\(script.name): \(child.standardError)")
        }
        #expect(try bus.records().isEmpty, "nothing was published")
        await bus.stop()
    }

    /// A subscriber following a bus that goes away hears nothing more: after three heartbeat
    /// intervals (or the wait for the first heartbeat) it stops, saying the bus is unreachable
    /// and how far it got, instead of waiting on its SUB socket for ever.
    @Test func aSubscriberWhoseBusGoesAwayStopsAfterThreeHeartbeatIntervals() async throws {
        let directory = try TemporaryDirectory("python-gone")
        let bus = BusProcess(directory: directory.path)
        try await bus.start()
        let client = try ZeroMQBusClient(location: bus.location, options: .init(process: "test"))
        _ = try await client.publish([OutgoingEvent(type: "bureau.test.Happened", payload: Data([1]))])
        client.close()
        // Asked for two events: after the one in the log it follows live, where the second never comes.
        let subscriber = try Self.subscriber(of: bus, ["--count", "2"], in: directory, name: "follow")
        defer { subscriber.signal(SIGKILL) }
        try await subscriber.waitForOutput("1 bureau.test.Happened")
        await bus.stop(SIGKILL)
        let code = await subscriber.exitCode(within: .seconds(20))
        #expect(code == 1, "\(subscriber.standardError)")
        // Three intervals of the bus's 100 ms, or, if the bus went before its first heartbeat
        // reached the subscriber (a loaded machine), the 5 s allowed for that first one.
        let said = subscriber.standardError
        #expect(
            said.contains("is unreachable: nothing from it, not even a heartbeat, for ")
                && (said.contains("for 0.3 s (three intervals of 100 ms); ") || said.contains("for 5 s; "))
                && said.contains("every event through position 1 was delivered"), "\(said)")
    }

    /// README's subscriber algorithm, step 1: the read matches plain prefixes, so a package
    /// prefix (`bureau.watchlist.`) returns a nested package's events too, and a client on the
    /// global chain, as the Python one is, delivers them from the log and live alike; another
    /// package's events it passes over.
    @Test func aPackagePrefixAlsoDeliversANestedPackagesEventsFromTheLogAndLive() async throws {
        let directory = try TemporaryDirectory("python-nested")
        let bus = BusProcess(directory: directory.path)
        try await bus.start()
        let client = try ZeroMQBusClient(location: bus.location, options: .init(process: "nested"))
        defer { client.close() }
        func publish(_ types: [String]) async throws -> [UInt64] {
            try await client.publish(types.map { OutgoingEvent(type: $0, payload: Data([1])) }).compactMap(\.position)
        }
        let plain = "bureau.watchlist.Noted"
        let nested = "bureau.watchlist.archive.PairArchived"
        let other = "bureau.watchlistx.Elsewhere"
        let logged = try await publish([plain, other, nested])
        let subscriber = try Self.subscriber(
            of: bus, ["--type", "bureau.watchlist.", "--count", "4"], in: directory, name: "nested")
        defer { subscriber.signal(SIGKILL) }
        // Caught up on the log (both of its events delivered), then live.
        try await subscriber.waitForOutput("\(logged[2]) \(nested)")
        let live = try await publish([nested, other, plain])
        let code = await subscriber.exitCode(within: .seconds(60))
        #expect(code == 0, "\(subscriber.standardError)")
        let seen: [String] = subscriber.standardOutput.split(separator: "\n").map { line in
            line.split(separator: " ").prefix(2).joined(separator: " ")
        }
        let expected: [String] = [
            "\(logged[0]) \(plain)", "\(logged[2]) \(nested)", "\(live[0]) \(nested)", "\(live[2]) \(plain)",
        ]
        #expect(seen == expected, "\(subscriber.standardOutput)")
        await bus.stop()
    }

    /// A Python subscriber that follows the text of README's algorithm, while the bus is under
    /// load and some events are too large for the live stream: every event once, in order.
    @Test func aPythonSubscriberAheadOfTheLogStopsAndSaysWhereTheLogEnds() async throws {
        let directory = try TemporaryDirectory("python-ahead")
        let bus = BusProcess(directory: directory.path)
        try await bus.start()
        let client = try ZeroMQBusClient(location: bus.location, options: .init(process: "ahead"))
        _ = try await client.publish((0..<4).map { OutgoingEvent(type: "bureau.test.Few", payload: Data([UInt8($0)])) })
        let epoch = try await client.ping().epoch
        client.close()
        // A cursor from another log: 1000 events on, where this one has 4.
        let subscriber = try Self.subscriber(of: bus, ["--from", "1000"], in: directory, name: "ahead")
        let code = await subscriber.exitCode(within: .seconds(60))
        await bus.stop()
        #expect(code == 1, "\(subscriber.standardError)")
        #expect(subscriber.standardError.contains("ahead-of-log"), "\(subscriber.standardError)")
        #expect(subscriber.standardError.contains("through position 1000"), "\(subscriber.standardError)")
        #expect(subscriber.standardError.contains("ends at position 4"), "\(subscriber.standardError)")
        #expect(subscriber.standardError.contains("\(epoch)"), "\(subscriber.standardError)")
        #expect(subscriber.standardOutput.isEmpty, "nothing delivered: \(subscriber.standardOutput)")
    }

    @Test func aPythonSubscriberFollowingTheTextGetsEveryEventOnceUnderLoad() async throws {
        let directory = try TemporaryDirectory("python-load")
        let bus = BusProcess(directory: directory.path)
        // The smallest high-water mark (a message holds a run of events), so that the live
        // stream drops publications and the subscriber must notice and fill the gaps.
        try await bus.start(["--publish-hwm", "1"])
        let total = 6000
        let subscriber = try Self.subscriber(of: bus, ["--count", "\(total)"], in: directory, name: "follow")
        let client = try ZeroMQBusClient(location: bus.location, options: .init(process: "load"))
        var positions: [UInt64] = []
        for batch in 0..<60 {
            let events = (0..<100).map { index in
                // One event in fifty is over 4 KiB: published as a notice, read from the log.
                let size = index % 50 == 7 ? 6000 : 40
                return OutgoingEvent(type: "bureau.test.Loaded", payload: Data(repeating: UInt8(batch), count: size))
            }
            positions += try await client.publish(events).compactMap(\.position)
        }
        client.close()
        let code = await subscriber.exitCode(within: .seconds(90))
        await bus.stop()
        #expect(code == 0, "\(subscriber.standardError)")
        let seen = subscriber.standardOutput.split(separator: "\n").compactMap { UInt64($0.split(separator: " ")[0]) }
        #expect(seen.count == total)
        #expect(seen == positions, "every event once, in order")
    }
}
