import AlertsFeature
import BookingAdapter
import Bus
import ConverterFeature
import RatesAdapter
import ReservationsFeature
import Runtime
import SystemFeature
import WatchlistFeature

/// The composition root: the features a process is built from. Each process builds what it
/// needs from here; nothing is global. ``product`` is this build's; a process given another
/// (a test's) is built from that one instead, so that what it does with a broken set of
/// features (upcasters that do not close, say) is what the product would do.
struct Composition: Sendable {
    /// The features, by name.
    let registry: ModuleRegistry

    /// Every feature this build knows.
    static let product = Composition(
        registry: ModuleRegistry([
            WatchlistModule.make(),
            ConverterModule.make(),
            ReservationsModule.make(),
            AlertsModule.make(),
            SystemModule.make(),
            RatesAdapterModule.make(),
            BookingAdapterModule.make(),
        ]))

    /// The features' upcasters, checked as one set; a process that reads events builds it first,
    /// so that one whose upcasters do not close refuses to start, naming them.
    func checkedUpcasting() throws -> EventUpcasting {
        do {
            return try registry.upcasting()
        } catch {
            throw CLIError("\(error)")
        }
    }

    /// This build's features.
    static func registry() -> ModuleRegistry { product.registry }

    /// This build's upcasters, checked (``checkedUpcasting()``).
    static func upcasting() throws -> EventUpcasting { try product.checkedUpcasting() }
}
