import EventLog
import Runtime
import Testing

struct DerivedIDTests {
    @Test func theSameModulePositionAndIndexGiveTheSameID() {
        #expect(
            EventID.derived(module: "watchlist", position: 42, index: 1)
                == .derived(module: "watchlist", position: 42, index: 1))
    }

    @Test func anyDifferenceGivesAnotherID() {
        let ids: Set<EventID> = [
            .derived(module: "watchlist", position: 42, index: 0),
            .derived(module: "watchlist", position: 42, index: 1),
            .derived(module: "watchlist", position: 43, index: 0), .derived(module: "alerts", position: 42, index: 0),
        ]
        #expect(ids.count == 4)
    }
}
