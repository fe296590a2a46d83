import RatesAdapter
import Runtime
import Testing

/// `bureau run rates-adapter --set NAME=VALUE`: every setting bounded, errors naming it.
struct RatesAdapterModuleTests {
    @Test(arguments: ["poll-ms", "timeout-ms", "backoff-initial-ms", "backoff-max-ms"])
    func everyNumericSettingRefusesBadValues(setting: String) {
        for value in ["nan", "inf", "-1", "0", "99999999999999999999", "9223372036854775807"] {
            #expect(throws: AdapterSettings.Problem.self, "\(setting)=\(value)") {
                _ = try RatesAdapterModule.configuration(AdapterSettings([setting: value]))
            }
            do {
                _ = try RatesAdapterModule.configuration(AdapterSettings([setting: value]))
            } catch {
                #expect(error.description.hasPrefix("\(setting): '\(value)' "), "\(error)")
            }
        }
    }

    @Test func settingsWithinBoundsConfigureTheAdapter() throws {
        let (url, configuration) = try RatesAdapterModule.configuration(
            AdapterSettings([
                "rates-url": "http://127.0.0.1:1/x", "poll-ms": "86400000", "timeout-ms": "250",
                "backoff-initial-ms": "5", "backoff-max-ms": "86400000",
            ]))
        #expect(url == "http://127.0.0.1:1/x")
        #expect(configuration.interval == .seconds(86_400) && configuration.timeout == .milliseconds(250))
        #expect(configuration.backoff.initial == .milliseconds(5))
        // The largest backoff doubles to its cap without overflowing.
        #expect(configuration.backoff.nominalDelay(attempt: 1000) == .seconds(86_400))
    }

    @Test func theURLIsChecked() {
        #expect(throws: AdapterSettings.Problem("rates-url 'file:///etc/passwd' is not an http(s) URL")) {
            _ = try RatesAdapterModule.configuration(AdapterSettings(["rates-url": "file:///etc/passwd"]))
        }
    }
}
