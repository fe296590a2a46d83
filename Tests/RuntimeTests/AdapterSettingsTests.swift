import Runtime
import Testing

/// `--set NAME=VALUE` settings: bounded numbers and URLs, errors that name the setting and the value.
struct AdapterSettingsTests {
    @Test(arguments: [
        ("nan", "poll-ms: 'nan' is not a whole number (give a whole number from 1 to 86400000)"),
        ("inf", "poll-ms: 'inf' is not a whole number (give a whole number from 1 to 86400000)"),
        (
            "9223372036854775807",
            "poll-ms: '9223372036854775807' is out of range (give a whole number from 1 to 86400000)"
        ),
        (
            "99999999999999999999",
            "poll-ms: '99999999999999999999' is too large (give a whole number from 1 to 86400000)"
        ),
        ("-1", "poll-ms: '-1' is out of range (give a whole number from 1 to 86400000)"),
        ("0", "poll-ms: '0' is out of range (give a whole number from 1 to 86400000)"),
    ])
    func aBadNumberOfMillisecondsNamesTheSettingAndTheValue(value: String, message: String) {
        let settings = AdapterSettings(["poll-ms": value])
        #expect(throws: AdapterSettings.Problem(message)) { try settings.milliseconds("poll-ms", in: 1...86_400_000) }
    }

    @Test func aSettingNotGivenIsNil() throws {
        let settings = AdapterSettings([:])
        #expect(try settings.milliseconds("poll-ms", in: 1...10) == nil)
        #expect(try settings.count("max-attempts", in: 1...10) == nil)
        #expect(try AdapterSettings(["max-attempts": "3"]).count("max-attempts", in: 1...10) == 3)
    }

    @Test func aURLMustBeHTTPWithAHostAndNotTooLong() throws {
        #expect(try AdapterSettings([:]).url("rates-url", default: "http://127.0.0.1:1/x") == "http://127.0.0.1:1/x")
        #expect(throws: AdapterSettings.Problem("rates-url 'ftp://x/y' is not an http(s) URL")) {
            try AdapterSettings(["rates-url": "ftp://x/y"]).url("rates-url", default: "")
        }
        let long = "http://example.com/" + String(repeating: "a", count: 3000)
        #expect(throws: AdapterSettings.Problem("rates-url is 3019 bytes long; the limit is 2048")) {
            try AdapterSettings(["rates-url": long]).url("rates-url", default: "")
        }
    }

}
