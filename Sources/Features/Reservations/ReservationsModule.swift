import Runtime

/// The reservations feature: its reducer, commands and projection.
public enum ReservationsModule {
    public static func make(reducer: ReservationsReducer = ReservationsReducer()) -> FeatureModule {
        FeatureModule(
            reducer: reducer, summary: "reserving currency at a quoted rate, and cancelling",
            commands: commands, projections: [AnyProjection(ReservationsProjection())])
    }

    public static let commands: [CommandSpec] = [
        CommandSpec(
            module: "reservations", name: "reserve",
            summary: "Exchange an amount of base into quote at the rate you were shown.",
            parameters: [
                .init("base", .currency, help: "the currency you give, e.g. EUR"),
                .init("quote", .currency, help: "the currency you get, e.g. USD"),
                .init("amount", .decimal, help: "how much base currency, e.g. 500.00"),
                .init("rate", .decimal, help: "the rate you were shown (quote per base), e.g. 1.0832"),
            ],
            answers: [ReservationAccepted.protoMessageName, ReservationRejected.protoMessageName],
            rejections: [ReservationRejected.protoMessageName],
            outcomes: [ReservationConfirmed.protoMessageName, ReservationFailed.protoMessageName],
            failedOutcomes: [ReservationFailed.protoMessageName]
        ) { arguments throws(CommandError) in
            Emitted(
                ReservationRequested(
                    base: arguments["base"], quote: arguments["quote"], amount: arguments["amount"],
                    rate: arguments["rate"]))
        },
        CommandSpec(
            module: "reservations", name: "cancel", summary: "Cancel a confirmed reservation.",
            parameters: [.init("id", .identifier(prefix: "R"), help: "the reservation's id, e.g. R1042")],
            answers: [CancellationAccepted.protoMessageName, CancellationRejected.protoMessageName],
            rejections: [CancellationRejected.protoMessageName],
            outcomes: [ReservationCancelled.protoMessageName, CancellationFailed.protoMessageName],
            failedOutcomes: [CancellationFailed.protoMessageName]
        ) { arguments throws(CommandError) in
            Emitted(CancellationRequested(reservationID: arguments["id"]))
        },
    ]
}
