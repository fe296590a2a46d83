import Foundation
import Guards
import Money

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Why a document is not an ECB reference-rates document; names the element or attribute.
public enum ECBParseError: Error, Equatable, CustomStringConvertible {
    case empty
    case tooLarge(bytes: Int, limit: Int)
    case notXML(line: Int, reason: String)
    case wrongRoot(found: String)
    case noFixing
    case missingAttribute(element: String, attribute: String, line: Int)
    case declaration
    case attributeTooLong(element: String, attribute: String, bytes: Int, limit: Int, line: Int)
    case badDate(String, line: Int)
    case badRate(currency: String, rate: String, line: Int)
    case badCurrency(String, line: Int)
    case baseAmongQuotes(String, line: Int)
    case duplicateCurrency(String, line: Int)
    case noRates(date: String)

    public var description: String {
        switch self {
        case .empty: "malformed document: the body is empty"
        case .tooLarge(let bytes, let limit): "malformed document: \(bytes) bytes is over the limit of \(limit)"
        case .notXML(let line, let reason): "malformed document: not XML at line \(line): \(reason)"
        case .wrongRoot(let found): "malformed document: the root element is <\(found)>, expected <gesmes:Envelope>"
        case .noFixing: "malformed document: no <Cube time=…> element"
        case .missingAttribute(let element, let attribute, let line):
            "malformed document: <\(element)> at line \(line) is missing attribute '\(attribute)'"
        case .declaration:
            "malformed document: it declares a document type (<!DOCTYPE>); ECB documents have none"
        case .attributeTooLong(let element, let attribute, let bytes, let limit, let line):
            "malformed document: \(attribute)= of <\(element)> at line \(line) is \(bytes) bytes long; the limit is \(limit)"
        case .badDate(let text, let line):
            "malformed document: time='\(text)' at line \(line) is not a calendar date (YYYY-MM-DD)"
        case .badRate(let currency, let rate, let line):
            "malformed document: rate='\(rate)' for \(currency) at line \(line) is not a positive decimal"
        case .badCurrency(let code, let line):
            "malformed document: currency='\(code)' at line \(line) is not a three-letter code"
        case .baseAmongQuotes(let code, let line):
            "malformed document: \(code) at line \(line) is the base currency; it cannot be quoted against itself"
        case .duplicateCurrency(let code, let line):
            "malformed document: \(code) appears twice in one fixing at line \(line)"
        case .noRates(let date): "malformed document: <Cube time='\(date)'> has no rates"
        }
    }
}
