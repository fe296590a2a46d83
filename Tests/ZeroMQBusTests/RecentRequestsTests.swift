import Testing

@testable import ZeroMQBus

struct RecentRequestsTests {
    @Test func aRequestIsAdmittedOnlyAfterTheOneItFollows() {
        var recent = RecentRequests()
        // Given nothing seen, when 2 follows 1: refused, and 2 is not remembered.
        #expect(recent.admit([(2, 1)]) == [false])
        // When 1 comes, then 2 after it, in one wake-up: both.
        #expect(recent.admit([(1, nil), (2, 1)]) == [true, true])
        // A request that follows one refused in the same wake-up is refused too.
        #expect(recent.admit([(4, 3), (5, 4), (3, nil)]) == [false, false, true])
        #expect(recent.admit([(4, 3)]) == [true])
    }

    @Test func theDaemonsOwnRequestsFollowNothingAndAreNotRemembered() {
        var recent = RecentRequests()
        #expect(recent.admit([(nil, nil), (7, nil)]) == [true, true])
        #expect(recent.admit([(8, 7)]) == [true])
    }

    @Test func theOldestAreForgottenFirstAndARetryKeepsItsPlace() {
        var recent = RecentRequests(capacity: 3)
        #expect(recent.admit([(1, nil), (2, nil), (3, nil)]) == [true, true, true])
        // A retry of 1 does not make it newer: the next new id forgets it.
        #expect(recent.admit([(1, nil), (4, nil)]) == [true, true])
        #expect(recent.admit([(10, 1)]) == [false])
        #expect(recent.admit([(11, 2), (12, 4)]) == [true, true])
    }
}
