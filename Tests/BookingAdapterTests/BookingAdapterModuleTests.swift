import BookingAdapter
import Runtime
import Testing

/// `bureau run booking-adapter --set NAME=VALUE`: every setting bounded, errors naming it.
struct BookingAdapterModuleTests {
    @Test(arguments: ["timeout-ms", "max-attempts", "backoff-initial-ms", "backoff-max-ms"])
    func everyNumericSettingRefusesBadValues(setting: String) {
        for value in ["nan", "inf", "-1", "0", "99999999999999999999", "9223372036854775807"] {
            do {
                _ = try BookingAdapterModule.configuration(AdapterSettings([setting: value]))
                Issue.record("\(setting)=\(value) was accepted")
            } catch {
                #expect(error.description.hasPrefix("\(setting): '\(value)' "), "\(error)")
            }
        }
    }

    @Test func settingsWithinBoundsConfigureTheAdapter() throws {
        let (url, timeout, configuration) = try BookingAdapterModule.configuration(
            AdapterSettings(["booking-url": "http://127.0.0.1:9", "timeout-ms": "600000", "max-attempts": "1000"]))
        #expect(url == "http://127.0.0.1:9" && timeout == .seconds(600) && configuration.maxAttempts == 1000)
    }
}
