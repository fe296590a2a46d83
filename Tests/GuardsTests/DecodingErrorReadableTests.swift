import Foundation
import Guards
import Testing

/// What a person reads of a decoding error: the field and what is wrong with it.
struct DecodingErrorReadableTests {
    struct Booking: Decodable {
        var code: String
        var count: Int
    }

    static func error(decoding json: String) -> DecodingError? {
        do {
            _ = try JSONDecoder().decode(Booking.self, from: Data(json.utf8))
            return nil
        } catch {
            return error as? DecodingError
        }
    }

    @Test(arguments: [
        (#"{"count": 1}"#, "the field 'code' is missing", "code"),
        (#"{"code": "A", "count": "one"}"#, "the field 'count' has the wrong type", "count"),
        (#"{"code": null, "count": 1}"#, "the field 'code' is null", "code"),
        ("not json", "the body is not JSON", nil),
    ])
    func eachKindOfErrorNamesItsField(json: String, readable: String, field: String?) {
        let error = Self.error(decoding: json)
        #expect(error?.readable == readable)
        #expect(error?.field == field)
    }
}
