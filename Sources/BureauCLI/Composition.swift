import AlertsFeature
import BookingAdapter
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
}
