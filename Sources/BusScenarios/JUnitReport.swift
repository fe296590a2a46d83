import Guards

/// Scenario results as JUnit XML, for CI systems that show test reports: one `testsuite` per file.
public enum JUnitReport {
    public static func xml(_ results: [ScenarioResult]) -> String {
        var files: [String] = []
        for result in results where !files.contains(result.file) { files.append(result.file) }
        let failures = results.filter { !$0.passed }.count
        var lines = [
            #"<?xml version="1.0" encoding="UTF-8"?>"#,
            #"<testsuites name="bureau test" tests="\#(results.count)" failures="\#(failures)" time="\#(seconds(results))">"#,
        ]
        for file in files {
            let cases = results.filter { $0.file == file }
            lines.append(
                #"  <testsuite name="\#(escape(file))" tests="\#(cases.count)" "#
                    + #"failures="\#(cases.filter { !$0.passed }.count)" time="\#(seconds(cases))">"#)
            for result in cases {
                let open =
                    #"    <testcase classname="\#(escape(file))" name="\#(escape(result.name))" "#
                    + #"time="\#(seconds([result]))""#
                guard let failure = result.failure else {
                    lines.append(open + "/>")
                    continue
                }
                let first = failure.split(separator: "\n").first.map(String.init) ?? failure
                lines.append(open + ">")
                lines.append(#"      <failure message="\#(escape(first))">\#(escape(failure))</failure>"#)
                lines.append("    </testcase>")
            }
            lines.append("  </testsuite>")
        }
        lines.append("</testsuites>")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The results' time in seconds: JUnit's `time` is a decimal number of seconds, its digits
    /// free; three decimals, as JUnit's own reports write it.
    static func seconds(_ results: [ScenarioResult]) -> String {
        results.reduce(Duration.zero) { $0 + $1.duration }.secondsText(decimals: 3)
    }

    static func escape(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            // XML 1.0 has no place for most control characters, even escaped.
            case "\n", "\t", "\r": result.unicodeScalars.append(scalar)
            case _ where scalar.value < 0x20: result += "?"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
