import AlertsFeature
import BookingAdapter
import Bus
import ConverterFeature
import RatesAdapter
import ReservationsFeature
import Runtime
import SystemFeature
import WatchlistFeature

/// The composition root: every feature this build knows. Each process builds what it needs
/// from here; nothing is global.
enum Composition {
    static func registry() -> ModuleRegistry {
        ModuleRegistry([
            WatchlistModule.make(),
            ConverterModule.make(),
            ReservationsModule.make(),
            AlertsModule.make(),
            SystemModule.make(),
            RatesAdapterModule.make(),
            BookingAdapterModule.make(),
        ])
    }

    /// Every module's upcasters, checked as one set; a command that reads events calls it at
    /// start, so that a build whose upcasters do not close refuses to run, naming them.
    static func upcasting() throws -> EventUpcasting {
        do {
            return try registry().upcasting()
        } catch {
            throw CLIError("\(error)")
        }
    }
}
