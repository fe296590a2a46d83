import Runtime

/// The watchlist feature: its reducer, commands and projection.
public enum WatchlistModule {
    public static func make() -> FeatureModule {
        FeatureModule(
            reducer: WatchlistReducer(), summary: "the currency pairs a person watches",
            commands: commands, projections: [AnyProjection(WatchlistProjection())])
    }

    public static let commands: [CommandSpec] = [
        CommandSpec(
            module: "watchlist", name: "add", summary: "Watch a currency pair.",
            parameters: [
                .init("base", .currency, help: "the currency quoted against, e.g. EUR"),
                .init("quote", .currency, help: "the currency the rate is in, e.g. USD"),
            ],
            answers: [PairAdded.protoMessageName, PairRejected.protoMessageName],
            rejections: [PairRejected.protoMessageName]
        ) { arguments throws(CommandError) in
            Emitted(PairAddRequested(base: arguments["base"], quote: arguments["quote"]))
        },
        CommandSpec(
            module: "watchlist", name: "remove", summary: "Stop watching a currency pair.",
            parameters: [
                .init("base", .currency, help: "the pair's base currency"),
                .init("quote", .currency, help: "the pair's quote currency"),
            ],
            answers: [PairRemoved.protoMessageName, PairRejected.protoMessageName],
            rejections: [PairRejected.protoMessageName]
        ) { arguments throws(CommandError) in
            Emitted(PairRemoveRequested(base: arguments["base"], quote: arguments["quote"]))
        },
    ]
}
