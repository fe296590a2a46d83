import BureauSchemas
import EventLog
import Foundation
import Guards
import TestSupport
import Testing

/// `bureau show` on a log holding an event its read model cannot read: the read model is shown
/// without it, and the event is named on stderr, never dropped in silence.
@Suite(.timeLimit(.minutes(2)))
struct ShowCommandTests {
    static let history =
        "/" + #filePath.split(separator: "/").dropLast(2).joined(separator: "/")
        + "/Histories/2026-11-with-commission/log"

    @Test func anEventTheReadModelCannotReadIsPassedOverAndNamedOnStderr() async throws {
        let work = try TemporaryDirectory("show-passed-over")
        let log = work.file("data/log")
        try FileManager.default.createDirectory(atPath: work.file("data"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Self.history, toPath: log)
        // A reservation whose payload is cut short (a field of 5 bytes holding 1), after the history;
        // written on a thread of its own, as it syncs.
        let position = try await OwnThread.run(name: "test-log") {
            let appended = try FileEventLog(directory: log, logger: TestLogging.logger("show"))
            let position = appended.head + 1
            var envelope = Bureau_Envelope()
            envelope.position = position
            let id = EventID.random()
            envelope.id = Data(id.bytes)
            envelope.type = "bureau.reservations.ReservationAcceptedV2"
            envelope.payload = Data([0x0A, 0x05, 0x52])
            try appended.append([LogRecord(position: position, id: id, body: try envelope.serializedData())])
            try appended.commit()
            try appended.close()
            return position
        }

        let bureau = BusProcess(directory: work.path, data: work.file("data"))
        for arguments in [["show", "reservations"], ["show", "reservations", "--json"]] {
            let shown = try await bureau.run(arguments)
            #expect(shown.code == 0, "\(arguments): \(shown.err)")
            #expect(shown.out.contains("R78"), "\(arguments): the history's reservations are shown: \(shown.out)")
            #expect(
                shown.err.contains(
                    "warning: reservations: 1 event passed over: position \(position) (bureau.reservations.ReservationAcceptedV2): "
                ), "\(arguments): \(shown.err)")
        }
        // Folded before it: nothing passed over, nothing said.
        let before = try await bureau.run(["show", "reservations", "--at", "\(position - 1)"])
        #expect(before.code == 0 && !before.err.contains("passed over"), "\(before.err)")
    }
}
