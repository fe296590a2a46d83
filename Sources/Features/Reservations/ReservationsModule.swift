import Bus
import Runtime

/// The reservations feature: its reducer, commands and projection.
public enum ReservationsModule {
    public static func make(reducer: ReservationsReducer = ReservationsReducer()) -> FeatureModule {
        FeatureModule(
            reducer: reducer, summary: "reserving currency at a quoted rate, less a commission, and cancelling",
            commands: commands, projections: [AnyProjection(ReservationsProjection())],
            upcasters: upcasters)
    }

    /// How the older shapes of the events this feature owns read as today's.
    public static let upcasters: [any Upcaster] = [ReservationAcceptedUpcaster()]

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
            answers: [ReservationAcceptedV2.protoMessageName, ReservationRejected.protoMessageName],
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
        CommandSpec(
            module: "reservations", name: "commission",
            summary: "Charge a commission on every reservation that sells a currency, from now on.",
            parameters: [
                .init("currency", .currency, help: "the currency sold (a reservation's quote), e.g. USD"),
                .init("rate", .decimal, help: "a decimal fraction from 0 to 0.1, e.g. 0.005 for 0.5 %"),
            ],
            answers: [CommissionRateSet.protoMessageName, CommissionRateRejected.protoMessageName],
            rejections: [CommissionRateRejected.protoMessageName]
        ) { arguments throws(CommandError) in
            Emitted(CommissionRateSetRequested(currency: arguments["currency"], rate: arguments["rate"]))
        },
    ]
}
