import Runtime

/// The converter feature: its reducer, command and projection.
public enum ConverterModule {
    public static func make() -> FeatureModule {
        FeatureModule(
            reducer: ConverterReducer(), summary: "the amount converted across the watchlist",
            commands: commands, projections: [AnyProjection(ConverterProjection())])
    }

    public static let commands: [CommandSpec] = [
        CommandSpec(
            module: "converter", name: "amount", summary: "Set the amount to convert.",
            parameters: [
                .init("value", .decimal, help: "the amount, e.g. 250.50"),
                .init("currency", .currency, help: "its currency, e.g. EUR"),
            ],
            answers: [AmountChanged.protoMessageName, AmountRejected.protoMessageName],
            rejections: [AmountRejected.protoMessageName]
        ) { arguments throws(CommandError) in
            Emitted(AmountSetRequested(value: arguments["value"], currency: arguments["currency"]))
        }
    ]
}
