import Bus
import EventLog
import Foundation
import LogTools
import Testing

/// `bureau trace`'s tree: each event under its cause, with its producer and the time since.
struct CausationTreeTests {
    static func event(
        _ position: UInt64, _ type: String, id: EventID = .random(), at nanos: Int64, process: String,
        module: String = "", causation: UInt64 = 0, correlation: EventID
    ) -> StoredEvent {
        StoredEvent(
            position: position, id: id, type: type,
            commitTime: CommitTime(seconds: 1_700_000_000 + nanos / 1_000_000_000, nanos: Int32(nanos % 1_000_000_000)),
            producerProcess: process, producerModule: module, causation: causation, correlation: correlation,
            payload: Data())
    }

    @Test func eachHopIsUnderItsCauseWithItsProducerAndTheTimeSinceTheCause() {
        let intent = EventID.random()
        let answer = EventID.random()
        var tree = CausationTree()
        tree.add(
            Self.event(
                7, "bureau.reservations.ReservationRequested", id: intent, at: 0, process: "send", correlation: intent))
        tree.add(
            Self.event(
                8, "bureau.reservations.ReservationAccepted", id: answer, at: 2_500_000, process: "reducers",
                module: "reservations", causation: 7, correlation: intent))
        tree.add(
            Self.event(
                9, "bureau.booking.ReservationConfirmed", at: 1_302_500_000, process: "booking", module: "booking",
                causation: 8, correlation: intent))
        tree.add(
            Self.event(
                10, "bureau.system.ErrorRaised", at: 2_500_400, process: "reducers", module: "reservations",
                causation: 7, correlation: intent))

        #expect(
            tree.lines(marking: answer) == [
                "#7 bureau.reservations.ReservationRequested  send  +0 µs",
                "├─ #8 bureau.reservations.ReservationAccepted  reducers/reservations  +2.5 ms  ◀",
                "│  └─ #9 bureau.booking.ReservationConfirmed  booking/booking  +1.30 s",
                "└─ #10 bureau.system.ErrorRaised  reducers/reservations  +2.5 ms",
            ])
        #expect(tree.processes == ["send", "reducers", "booking"])
        #expect(tree.duration == .nanoseconds(1_302_500_000))
    }

    @Test func elapsedTimesReadInTheUnitThatFits() {
        #expect(CausationTree.elapsed(.nanoseconds(412_400)) == "+412 µs")
        #expect(CausationTree.elapsed(.microseconds(3_140)) == "+3.1 ms")
        #expect(CausationTree.elapsed(.milliseconds(999)) == "+999.0 ms")
        #expect(CausationTree.elapsed(.milliseconds(2_405)) == "+2.41 s")
        #expect(CausationTree.elapsed(.milliseconds(-5)) == "-5.0 ms")
    }
}
