import Bus
import EventLog
import Foundation
import TestSupport
import Testing

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
        let client = try BusClient(location: bus.location, options: .init(process: "test"))
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
        #expect(reserved.out.contains("\"quoteAmount\":\"558.60\""))
        // No booking adapter runs: the outcome never comes, and send says so.
        let outcome = try await bus.run(
            [
                "send", "bureau://reservations/reserve?base=EUR&quote=USD&amount=5&rate=1.1172", "--outcome",
                "--timeout", "2",
            ])
        #expect(outcome.code == 1)
        #expect(outcome.err.contains("no outcome within 2.0 s"))

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
