import Bus
import EventLog
import FeatureTestSupport
import Foundation
import TestSupport
import Testing
import ZeroMQBus

/// `bureau send`, `commands` and `show` against a running bus and reducers.
@Suite(.timeLimit(.minutes(3)))
struct CommandLineTests {
    @Test func aURLThatDoesNotRouteNamesTheProblemAndPublishesNothing() async throws {
        let directory = try TemporaryDirectory("send")
        let bus = BusProcess(directory: directory.path)
        try await bus.start()
        let cases: [(String, String)] = [
            ("watchlist/add?base=EUR", "is not a command URL"),
            ("bureau://nope/add", "unknown module 'nope'"),
            ("bureau://watchlist/ad?base=EUR&quote=USD", "module watchlist has no command 'ad'"),
            ("bureau://watchlist/add?base=EUR", "needs the parameter 'quote'"),
            ("bureau://watchlist/add?base=EUR&quote=USD&colour=red", "has no parameter 'colour'"),
            ("bureau://reservations/reserve?base=EUR&quote=USD&amount=lots&rate=1.1", "'lots' is not a valid amount"),
            ("bureau://alerts/set?base=EUR&quote=USD", "give exactly one of above= or below="),
        ]
        for (url, problem) in cases {
            let result = try await bus.run(["send", url, "--timeout", "2"])
            #expect(result.code == 64, "\(url)")
            #expect(result.err.contains(problem), "\(url): \(result.err)")
        }
        #expect(try bus.records().isEmpty, "nothing was published")
        #expect(await bus.stop() == 0)
    }

    @Test func sendPrintsTheAnswerAndExitsByIt() async throws {
        let directory = try TemporaryDirectory("send")
        let bus = BusProcess(directory: directory.path)
        try await bus.start()
        let client = try ZeroMQBusClient(location: bus.location, options: .init(process: "test"))
        _ = try await client.publish(try OutgoingEvent(rates(["USD": "1.1172", "JPY": "175.68"])))
        let host = try ChildProcess(
            BureauExecutable.path, ["run", "watchlist", "reservations", "--data", bus.location.dataDirectory],
            directory: directory.path, name: "run", readiness: true)
        try await host.waitUntilReady()

        let added = try await bus.run(["send", "bureau://watchlist/add?base=EUR&quote=USD"])
        #expect(added.code == 0)
        #expect(added.out.contains("bureau.watchlist.PairAdded {\"base\":\"EUR\",\"quote\":\"USD\"}"))
        let duplicate = try await bus.run(["send", "bureau://watchlist/add?base=EUR&quote=USD", "--json"])
        #expect(duplicate.code == 1)
        #expect(duplicate.out.contains("\"reason\":\"DUPLICATE\""))
        let reserved = try await bus.run([
            "send", "bureau://reservations/reserve?base=EUR&quote=USD&amount=500&rate=1.1172",
        ])
        #expect(reserved.code == 0)
        #expect(reserved.out.contains("\"grossAmount\":\"558.60\""))
        // No booking adapter runs: the outcome never comes, and send says so.
        let outcome = try await bus.run(
            [
                "send", "bureau://reservations/reserve?base=EUR&quote=USD&amount=5&rate=1.1172", "--outcome",
                "--timeout", "2",
            ])
        #expect(outcome.code == 1)
        #expect(outcome.err.contains("no outcome within 2 s"))

        let shown = try await bus.run(["show", "watchlist"])
        #expect(shown.out.contains("EUR/USD   1.1172"))
        let reservations = try await bus.run(["show", "reservations", "--json"])
        #expect(reservations.out.contains("\"status\" : \"pending\""))
        let before = try await bus.run(["show", "watchlist", "--at", "1"])
        #expect(before.out.contains("The watchlist is empty."))

        host.signal(SIGTERM)
        #expect(await host.exitCode() == 0)
        client.close()
        #expect(await bus.stop() == 0)
    }

    /// `bureau ARGUMENTS` run to its end (killed after 30 s, which fails the test).
    static func run(_ arguments: [String], in directory: TemporaryDirectory) async throws -> (code: Int32?, err: String)
    {
        let child = try ChildProcess(BureauExecutable.path, arguments, directory: directory.path, name: "bounded")
        let code = await child.exitCode(within: .seconds(30))
        if code == nil { child.signal(SIGKILL) }
        let err = child.standardError
        unlink(child.stdoutPath)
        unlink(child.stderrPath)
        return (code, err)
    }

    /// The real binary, given the values that used to trap or overflow: exit 64 with a message
    /// naming the option (or setting, or file and line) and the value.
    @Test func badNumbersAndFilesAreRefusedNamingThemNeverTrapping() async throws {
        let directory = try TemporaryDirectory("bounds")
        let data = directory.file("data")
        var laughs = "processes:\n  bus:\n    command: bus\nl:\n  a: &a [x, x, x, x, x, x, x, x, x]\n"
        for (name, previous) in zip("bcdefghi", "abcdefgh") {
            laughs +=
                "  \(name): &\(name) [" + Array(repeating: "*\(previous)", count: 9).joined(separator: ", ") + "]\n"
        }
        try laughs.write(toFile: directory.file("laughs.yaml"), atomically: true, encoding: .utf8)
        let cases: [([String], String)] = [
            (
                ["send", "bureau://watchlist/add?base=EUR&quote=USD", "--timeout", "nan", "--data", data],
                "The value 'nan' is invalid for '--timeout <timeout>': 'nan' is not a number (give a number from 0.001 to 3600)"
            ),
            (
                ["publish", "--type", "bureau.watchlist.PairAddRequested", "--timeout=1e400", "--data", data],
                "'1e400' is too large"
            ),
            (
                ["bus", "--segment-mib", "9223372036854775807", "--data", data],
                "'--segment-mib <segment-mib>': '9223372036854775807' is out of range (give a whole number from 1 to 4096)"
            ),
            (
                ["bus", "--heartbeat-ms", "inf", "--data", data],
                "'--heartbeat-ms <heartbeat-ms>': 'inf' is not a whole number"
            ),
            (["serve", "rates", "--pace", "inf"], "'--pace <pace>': 'inf' is not a finite number"),
            (["serve", "booking", "--latency=-5"], "'--latency <latency>': '-5' is out of range"),
            (["logs", "--tail=-5", "--data", data], "'--tail <tail>': '-5' is out of range"),
            (
                ["run", "rates-adapter", "--set", "poll-ms=nan", "--data", data],
                "rates-adapter: poll-ms: 'nan' is not a whole number (give a whole number from 1 to 86400000)"
            ),
            (
                ["run", "booking-adapter", "--set", "backoff-max-ms=99999999999999999999", "--data", data],
                "booking-adapter: backoff-max-ms: '99999999999999999999' is too large"
            ),
            (
                ["up", "--no-tui", "--file", directory.file("laughs.yaml"), "--data", data],
                "laughs.yaml:10: expands to more than 100000 nodes once its aliases are expanded"
            ),
        ]
        for (arguments, message) in cases {
            let (code, err) = try await Self.run(arguments, in: directory)
            #expect(code == 64, "\(arguments): exit \(code.map(String.init) ?? "none"): \(err)")
            #expect(err.contains(message), "\(arguments): \(err)")
        }
    }

    @Test func commandsListsEveryModulesCommands() async throws {
        let directory = try TemporaryDirectory("cmds")
        let bus = BusProcess(directory: directory.path)
        let listed = try await bus.run(["commands"], data: false)
        for url in [
            "bureau://watchlist/add", "bureau://watchlist/remove", "bureau://converter/amount",
            "bureau://reservations/reserve", "bureau://reservations/cancel", "bureau://alerts/set",
            "bureau://alerts/clear",
        ] {
            #expect(listed.out.contains(url), "\(url)")
        }
    }
}
