import BusTesting
import Testing

@Suite struct JUnitReportTests {
    @Test func aReportHasASuitePerFileAndTheFailureText() {
        let results = [
            ScenarioResult(file: "a.yaml", name: "passes", line: 3, duration: .milliseconds(250), failure: nil),
            ScenarioResult(
                file: "a.yaml", name: "fails <badly>", line: 9, duration: .milliseconds(1500),
                failure: "after x:\n  missing \"PairAdded\" & more"),
            ScenarioResult(file: "b.yaml", name: "passes", line: 1, duration: .seconds(1), failure: nil),
        ]
        #expect(
            JUnitReport.xml(results) == """
                <?xml version="1.0" encoding="UTF-8"?>
                <testsuites name="bureau test" tests="3" failures="1" time="2.750">
                  <testsuite name="a.yaml" tests="2" failures="1" time="1.750">
                    <testcase classname="a.yaml" name="passes" time="0.250"/>
                    <testcase classname="a.yaml" name="fails &lt;badly&gt;" time="1.500">
                      <failure message="after x:">after x:
                  missing &quot;PairAdded&quot; &amp; more</failure>
                    </testcase>
                  </testsuite>
                  <testsuite name="b.yaml" tests="1" failures="0" time="1.000">
                    <testcase classname="b.yaml" name="passes" time="1.000"/>
                  </testsuite>
                </testsuites>

                """)
    }
}
