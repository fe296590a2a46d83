/// The ECB's XML formats: the daily document and the 90-day one (a gesmes envelope around
/// `<Cube time="…">` elements holding `<Cube currency="…" rate="…"/>`).
public enum ECBDocument {
    public static func render(_ fixings: [ECBHistory.Fixing]) -> String {
        var xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
            \t<gesmes:subject>Reference rates</gesmes:subject>
            \t<gesmes:Sender>
            \t\t<gesmes:name>European Central Bank</gesmes:name>
            \t</gesmes:Sender>
            \t<Cube>

            """
        for fixing in fixings {
            xml += "\t\t<Cube time='\(fixing.date)'>\n"
            for rate in fixing.rates {
                xml += "\t\t\t<Cube currency='\(rate.currency)' rate='\(rate.rate)'/>\n"
            }
            xml += "\t\t</Cube>\n"
        }
        xml += "\t</Cube>\n</gesmes:Envelope>\n"
        return xml
    }
}
