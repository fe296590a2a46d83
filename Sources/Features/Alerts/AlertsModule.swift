import Runtime

/// The alerts feature: its reducer, commands and projection.
public enum AlertsModule {
    public static func make() -> FeatureModule {
        FeatureModule(
            reducer: AlertsReducer(), summary: "thresholds on a pair's rate", commands: commands,
            projections: [AnyProjection(AlertsProjection())])
    }

    public static let commands: [CommandSpec] = [
        CommandSpec(
            module: "alerts", name: "set", summary: "Alert when a pair's rate goes above or below a threshold.",
            parameters: [
                .init("base", .currency, help: "the pair's base currency"),
                .init("quote", .currency, help: "the pair's quote currency"),
                .init("above", .decimal, required: false, help: "trigger at or above this rate"),
                .init("below", .decimal, required: false, help: "trigger at or below this rate"),
            ],
            answers: [AlertArmed.protoMessageName, AlertRejected.protoMessageName],
            rejections: [AlertRejected.protoMessageName]
        ) { arguments throws(CommandError) in
            switch (arguments.optional("above"), arguments.optional("below")) {
            case (let above?, nil):
                return Emitted(
                    AlertSetRequested(
                        base: arguments["base"], quote: arguments["quote"], direction: .above, threshold: above))
            case (nil, let below?):
                return Emitted(
                    AlertSetRequested(
                        base: arguments["base"], quote: arguments["quote"], direction: .below, threshold: below))
            default:
                throw .invalidCombination(command: "alerts/set", reason: "give exactly one of above= or below=")
            }
        },
        CommandSpec(
            module: "alerts", name: "clear", summary: "Remove an alert.",
            parameters: [.init("id", .identifier(prefix: "A"), help: "the alert's id, e.g. A77")],
            answers: [AlertCleared.protoMessageName, AlertRejected.protoMessageName],
            rejections: [AlertRejected.protoMessageName]
        ) { arguments throws(CommandError) in
            Emitted(AlertClearRequested(alertID: arguments["id"]))
        },
    ]
}
