import BureauSchemas
import Bus
import Foundation
import Runtime

/// The system feature: no reducer; what every process reports about itself.
public enum SystemModule {
    public static func make() -> FeatureModule {
        FeatureModule(
            name: "system", summary: "process life cycles and errors",
            projections: [AnyProjection(ErrorsProjection()), AnyProjection(ProcessesProjection())])
    }
}
