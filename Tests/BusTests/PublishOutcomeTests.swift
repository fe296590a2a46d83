import BureauSchemas
import Bus
import Testing

/// What a client makes of each result in a bus's acknowledgement.
struct PublishOutcomeTests {
    static func result(
        _ status: Bureau_Bus_PublishResult.Status, position: UInt64 = 0, reason: String = ""
    )
        -> Bureau_Bus_PublishResult
    {
        var result = Bureau_Bus_PublishResult()
        result.status = status
        result.position = position
        result.reason = reason
        return result
    }

    @Test func eachKnownStatusIsItsOutcome() throws {
        #expect(try PublishOutcome(Self.result(.committed, position: 7)) == .committed(7))
        #expect(try PublishOutcome(Self.result(.duplicate, position: 3)) == .duplicate(3))
        #expect(try PublishOutcome(Self.result(.rejected, reason: "too large")) == .rejected("too large"))
    }

    /// A newer bus's status may mean the event is in the log: not a refusal, an answer this
    /// client cannot use.
    @Test func aStatusThisClientDoesNotKnowIsNotTakenForARefusal() {
        #expect(throws: BusError.unexpectedAnswer("a publish result of status 9, which this client does not know")) {
            try PublishOutcome(Self.result(.UNRECOGNIZED(9), reason: "whatever"))
        }
    }
}
