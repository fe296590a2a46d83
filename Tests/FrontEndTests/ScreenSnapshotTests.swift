import BureauSchemas
import Bus
import Foundation
import FrontEnd
import Money
import ReservationsFeature
import SwiftProtobuf
import TerminalUI
import Testing

/// Each screen rendered to text for a fixed history, compared with its reviewed snapshot.
struct ScreenSnapshotTests {
    static func screen(_ state: AppState, width: Int = 100, height: Int = 30) -> String {
        RootView(state: state).rendered(width: width, height: height).text
    }

    @Test func watchlistShowsRatesChangesConversionsAndTheEventPane() {
        Snapshot.expect(Self.screen(Fixtures.state), matches: "watchlist")
    }

    @Test func reservationsShowEveryStatus() {
        var state = Fixtures.state
        state.navigation.tab = .reservations
        Snapshot.expect(Self.screen(state), matches: "reservations")
    }

    @Test func aReservationWhoseBookingIsUnknownSaysItIsBeingChecked() throws {
        var accepted = ReservationAcceptedV2()
        accepted.reservationID = "R21"
        accepted.base = "EUR"
        accepted.quote = "USD"
        accepted.amount = "500.00"
        accepted.rate = "1.0832"
        accepted.grossAmount = "541.60"
        accepted.commissionRate = "0.005"
        accepted.commission = "2.71"
        accepted.netAmount = "538.89"
        accepted.commissionBasis = .schedule
        let projection = ReservationsProjection()
        var value = projection.initialValue
        for (position, message) in [
            (21, accepted), (22, BookingOutcomeUnknown(reservationID: "R21", call: .booking, reason: "timed out")),
        ] as [(UInt64, any SwiftProtobuf.Message & Sendable)] {
            try projection.apply(Fixtures.event(position, message), to: &value)
        }
        let screen = ReservationsScreen(reservations: value, selected: 0).rendered(width: 140, height: 4)
        let lines = screen.text.split(separator: "\n", omittingEmptySubsequences: false)
        let row = try #require(lines.firstIndex { $0.contains("R21") })
        #expect(lines[row].contains("? unknown"), "\(lines[row])")
        #expect(lines[row].contains("checking with the booking service (timed out)"), "\(lines[row])")
        // In the colour of what is still under way (reversed: the row is selected).
        let column = try #require((0..<140).first { screen[$0, row].character == "?" })
        #expect(screen[column, row].style.foreground == .yellow)
    }

    /// Reservations as the screen lists them: R31 charged 0.5 % on USD, R32 accepted before any
    /// rate was set, R33 stored before Bureau charged commissions (a `ReservationAccepted`, read
    /// through its upcaster).
    static func commissionRows() throws -> ReadModels {
        func accepted(
            _ id: String, rate: String, commission: String, net: String, basis: ReservationAcceptedV2.CommissionBasis
        )
            -> ReservationAcceptedV2
        {
            var accepted = ReservationAcceptedV2()
            accepted.reservationID = id
            accepted.base = "EUR"
            accepted.quote = "USD"
            accepted.amount = "500.00"
            accepted.rate = "1.0832"
            accepted.grossAmount = "541.60"
            accepted.commissionRate = rate
            accepted.commission = commission
            accepted.netAmount = net
            accepted.asOf = "2024-05-03"
            accepted.commissionBasis = basis
            return accepted
        }
        var old = ReservationAccepted()
        old.reservationID = "R33"
        old.base = "EUR"
        old.quote = "GBP"
        old.amount = "100.00"
        old.rate = "0.8562"
        old.quoteAmount = "85.62"
        old.asOf = "2024-05-03"
        let upcasting = try EventUpcasting(
            ReservationsModule.upcasters, readTypes: [ReservationAcceptedV2.protoMessageName])
        return ReadModels.folding(
            [
                Fixtures.event(31, accepted("R31", rate: "0.005", commission: "2.71", net: "538.89", basis: .schedule)),
                Fixtures.event(
                    32, accepted("R32", rate: "0", commission: "0.00", net: "541.60", basis: .beforeCommissions)),
                Fixtures.event(33, old),
            ].map(upcasting.upcast))
    }

    @Test func reservationsShowTheCommissionChargedOrWhyNoneWas() throws {
        let models = try Self.commissionRows()
        let screen = ReservationsScreen(reservations: models.reservations, selected: 0).rendered(width: 100, height: 5)
        Snapshot.expect(screen.text, matches: "reservations-commission")
        let lines = screen.text.split(separator: "\n")
        func row(_ id: String) -> String { lines.first { $0.contains(id) }.map(String.init) ?? "(no row \(id))" }
        #expect(row("R31").contains("538.89 USD 2.71 (0.5 %)"), "\(row("R31"))")
        #expect(row("R32").contains("541.60 USD none (no rate)"), "\(row("R32"))")
        #expect(row("R33").contains("85.62 GBP none (before)"), "\(row("R33"))")
    }

    @Test func anEventTheScreensCannotReadIsNamedOnTheStatusLine() {
        var state = Fixtures.state
        // A reservation whose payload is cut short (a field of 5 bytes holding 1).
        let unreadable = StoredEvent(
            position: 17, id: .random(), type: ReservationAcceptedV2.protoMessageName, commitTime: .zero,
            payload: Data([0x0A, 0x05, 0x52]))
        _ = Coordinator(router: Fixtures.router).handle(.delivered(.event(unreadable)), in: &state)
        #expect(state.models.passedOver.count == 1)
        let status = Self.screen(state, width: 160).split(separator: "\n").last.map(String.init) ?? ""
        #expect(
            status.contains("✗ 1 event not shown, unreadable: @17 bureau.reservations.ReservationAcceptedV2"),
            "\(status)")
    }

    @Test func alertsShowTheTriggeredOneStandingOut() {
        var state = Fixtures.state
        state.navigation.tab = .alerts
        Snapshot.expect(Self.screen(state), matches: "alerts")
        let buffer = RootView(state: state).rendered(width: 100, height: 30)
        let row = (0..<30).first {
            buffer.text.split(separator: "\n", omittingEmptySubsequences: false)[$0].contains("TRIGGERED")
        }
        let column = row.flatMap { y in (0..<100).first { buffer[$0, y].character == "‼" } }
        if let row, let column {
            #expect(buffer[column, row].style.background == .red)
        } else {
            Issue.record("no triggered alert on screen")
        }
    }

    @Test func thePickerMarksWatchedPairsInTheQuoteStep() {
        var state = Fixtures.state
        let coordinator = Coordinator(router: Fixtures.router)
        for key: Key in [.character("a"), .character("E"), .character("U"), .enter] {
            _ = coordinator.handle(.key(key), in: &state)
        }
        Snapshot.expect(Self.screen(state), matches: "picker-quote")
    }

    @Test func reservingShowsTheQuoteForTheAmountTyped() {
        var state = Fixtures.state
        let coordinator = Coordinator(router: Fixtures.router)
        for key: Key in [.character("r"), .character("5"), .character("0"), .character("0")] {
            _ = coordinator.handle(.key(key), in: &state)
        }
        Snapshot.expect(Self.screen(state), matches: "reserve-prompt")
    }

    @Test func helpListsTheKeys() {
        var state = Fixtures.state
        state.navigation.overlay = .help
        Snapshot.expect(Self.screen(state), matches: "help")
    }

    @Test func aDownBusIsShownWhileTheLastStateStays() {
        var state = Fixtures.state
        state.connection.isConnected = false
        state.connection.problem = "no answer to ping"
        Snapshot.expect(Self.screen(state, width: 120, height: 24), matches: "bus-down")
    }

    @Test func anEmptyDeploymentInvitesTheFirstPair() {
        Snapshot.expect(Self.screen(AppState(), width: 80, height: 20), matches: "empty")
    }
}
