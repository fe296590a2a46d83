import BureauSchemas
import Runtime
import Testing

struct CommandRouterTests {
    static let router = CommandRouter(commands: [
        CommandSpec(
            module: "watchlist", name: "add", summary: "",
            parameters: [.init("base", .currency, help: ""), .init("quote", .currency, help: "")],
            answers: ["bureau.watchlist.PairAdded"], rejections: []
        ) { arguments throws(CommandError) in
            var request = Bureau_Watchlist_PairAddRequested()
            request.base = arguments["base"]
            request.quote = arguments["quote"]
            return Emitted(request)
        },
        CommandSpec(
            module: "reservations", name: "cancel", summary: "",
            parameters: [
                .init("id", .identifier(prefix: "R"), help: ""), .init("note", .decimal, required: false, help: ""),
            ],
            answers: [], rejections: []
        ) { arguments throws(CommandError) in
            var request = Bureau_Reservations_CancellationRequested()
            request.reservationID = arguments["id"]
            return Emitted(request)
        },
    ])

    @Test func aURLBecomesTheModulesRequestWithNormalisedValues() throws {
        let route = try Self.router.route("bureau://watchlist/add?base=eur&quote=USD")
        var expected = Bureau_Watchlist_PairAddRequested()
        expected.base = "EUR"
        expected.quote = "USD"
        #expect(route.request == Emitted(expected))
        #expect(route.command.name == "add")
        #expect(
            try Self.router.route("bureau://reservations/cancel?id=r12").request.type
                == "bureau.reservations.CancellationRequested")
    }

    @Test(arguments: [
        ("watchlist/add?base=EUR", "is not a command URL"),
        ("https://watchlist/add?base=EUR&quote=USD", "the scheme is 'https'"),
        ("bureau://nope/add", "unknown module 'nope'; modules with commands: reservations, watchlist"),
        ("bureau://watchlist/ad?base=EUR&quote=USD", "module watchlist has no command 'ad'; it has: add"),
        ("bureau://watchlist/add?base=EUR", "watchlist/add needs the parameter 'quote'"),
        ("bureau://watchlist/add?base=EUR&quote=USD&x=1", "watchlist/add has no parameter 'x'; it takes: base, quote"),
        ("bureau://watchlist/add?base=EUR&base=GBP&quote=USD", "got the parameter 'base' more than once"),
        (
            "bureau://watchlist/add?base=EURO&quote=USD",
            "'EURO' is not a valid base: expected a three-letter currency code"
        ),
        ("bureau://reservations/cancel?id=12", "'12' is not a valid id: expected an id such as R42"),
        ("bureau://reservations/cancel?id=R1&note=abc", "'abc' is not a valid note: expected a decimal number"),
        ("bureau://watchlist", "module watchlist has no command ''"),
    ])
    func aBadURLNamesTheProblem(url: String, problem: String) {
        #expect {
            _ = try Self.router.route(url)
        } throws: { error in
            "\(error)".contains(problem)
        }
    }

    @Test func completionOffersModulesThenCommandsThenParameters() {
        #expect(Self.router.completions(for: "bur") == ["bureau://reservations/", "bureau://watchlist/"])
        #expect(Self.router.completions(for: "bureau://wa") == ["bureau://watchlist/"])
        #expect(Self.router.completions(for: "bureau://watchlist/a") == ["bureau://watchlist/add?"])
        #expect(
            Self.router.completions(for: "bureau://watchlist/add?base=EUR&q") == [
                "bureau://watchlist/add?base=EUR&quote="
            ])
        #expect(
            Self.router.completions(for: "bureau://watchlist/add?") == [
                "bureau://watchlist/add?base=", "bureau://watchlist/add?quote=",
            ])
    }
}
