import Foundation
import Guards
import Money

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Reads the ECB's reference-rate documents: the daily one and the 90-day one.
///
/// What it accepts is bounded: the document's size (``defaultLimit``), every attribute's
/// length (``attributeLimit``), no document type declaration (so no entities to expand), dates
/// that are real calendar days, three-letter currencies other than the base (EUR), each once
/// per fixing, and rates that are positive decimals (digits and a point, at most 40 characters).
public enum ECBRatesParser {
    /// The largest document accepted (the 90-day one is about 40 KB).
    public static let defaultLimit = 1 << 20
    /// The longest attribute value accepted (the longest in ECB documents is a 50-byte namespace).
    public static let attributeLimit = 256
    /// The currency every ECB rate is quoted against.
    public static let base = "EUR"

    /// Every fixing in the document, newest first.
    public static func parse(_ data: Data, limit: Int = defaultLimit) throws(ECBParseError) -> [ECBFixing] {
        guard !data.isEmpty, data.contains(where: { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }) else {
            throw .empty
        }
        guard data.count <= limit else { throw .tooLarge(bytes: data.count, limit: limit) }
        // A DTD could declare entities that expand far beyond the document's size.
        guard data.range(of: Data("<!DOCTYPE".utf8)) == nil else { throw .declaration }
        let delegate = Delegate()
        let parser = XMLParser(data: data)
        parser.delegate = delegate
        let parsed = parser.parse()
        if let error = delegate.error { throw error }
        guard parsed else {
            throw .notXML(
                line: parser.lineNumber, reason: parser.parserError.map { "\($0.localizedDescription)" } ?? "unknown")
        }
        guard delegate.sawRoot else { throw .empty }
        // libxml2 recovers from some broken nesting without reporting it; the element stack does not.
        if let open = delegate.open.last {
            throw .notXML(line: parser.lineNumber, reason: "<\(open)> is never closed")
        }
        if let empty = delegate.fixings.first(where: { $0.rates.isEmpty }) { throw .noRates(date: empty.asOf) }
        let fixings = delegate.fixings.map { fixing in
            ECBFixing(asOf: fixing.asOf, rates: fixing.rates.sorted { $0.currency < $1.currency })
        }
        guard !fixings.isEmpty else { throw .noFixing }
        return fixings.sorted { $0.asOf > $1.asOf }
    }

    /// The newest fixing in the document.
    public static func latest(_ data: Data, limit: Int = defaultLimit) throws(ECBParseError) -> ECBFixing {
        let fixings = try parse(data, limit: limit)
        guard let newest = fixings.first else { throw .noFixing }
        return newest
    }

    private final class Delegate: NSObject, XMLParserDelegate {
        var fixings: [ECBFixing] = []
        var error: ECBParseError?
        var sawRoot = false
        /// Elements opened and not yet closed, outermost first.
        var open: [String] = []
        private var seen = Set<String>()

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            open.append(elementName)
            guard error == nil else { return }
            let local = elementName.split(separator: ":").last.map(String.init) ?? elementName
            let line = parser.lineNumber
            for (name, value) in attributes where value.utf8.count > ECBRatesParser.attributeLimit {
                return fail(
                    .attributeTooLong(
                        element: elementName, attribute: name, bytes: value.utf8.count,
                        limit: ECBRatesParser.attributeLimit, line: line), parser)
            }
            if open.count == 1 {
                sawRoot = true
                if local != "Envelope" { fail(.wrongRoot(found: elementName), parser) }
                return
            }
            guard local == "Cube" else { return }
            if let time = attributes["time"] {
                guard CalendarDate(time) != nil else { return fail(.badDate(time, line: line), parser) }
                fixings.append(ECBFixing(asOf: time, rates: []))
                seen = []
            } else if attributes["currency"] != nil || attributes["rate"] != nil {
                guard let currency = attributes["currency"] else {
                    return fail(.missingAttribute(element: "Cube", attribute: "currency", line: line), parser)
                }
                guard let rate = attributes["rate"] else {
                    return fail(.missingAttribute(element: "Cube", attribute: "rate", line: line), parser)
                }
                guard currency.count == 3, currency.allSatisfy({ $0.isASCII && $0.isUppercase }) else {
                    return fail(.badCurrency(currency, line: line), parser)
                }
                guard currency != ECBRatesParser.base else {
                    return fail(.baseAmongQuotes(currency, line: line), parser)
                }
                guard let value = try? DecimalText.parse(rate).value, value > 0 else {
                    return fail(.badRate(currency: currency, rate: rate, line: line), parser)
                }
                guard !fixings.isEmpty else {
                    return fail(.missingAttribute(element: "Cube", attribute: "time", line: line), parser)
                }
                guard seen.insert(currency).inserted else {
                    return fail(.duplicateCurrency(currency, line: line), parser)
                }
                fixings[fixings.count - 1].rates.append((currency, rate))
            }
        }

        func parser(
            _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?
        ) {
            guard error == nil else { return }
            guard open.last == elementName else {
                let reason = open.last.map { "</\(elementName)> closes <\($0)>" } ?? "</\(elementName)> closes nothing"
                return fail(.notXML(line: parser.lineNumber, reason: reason), parser)
            }
            open.removeLast()
        }

        private func fail(_ problem: ECBParseError, _ parser: XMLParser) {
            error = problem
            parser.abortParsing()
        }
    }
}
