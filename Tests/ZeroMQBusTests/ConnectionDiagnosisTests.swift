import Bus
import Foundation
import Testing
import ZeroMQ

@testable import ZeroMQBus

/// What a client tells a person about a TCP bus it cannot use, from the monitor events libzmq
/// reports: given a client with or without CURVE, when these events come, then this reason.
struct ConnectionDiagnosisTests {
    static func diagnosis(
        curve: Bool, after events: [ZMQMonitorEvent.Kind], value: UInt32 = 0
    ) -> (
        ConnectionDiagnosis, [String]
    ) {
        var diagnosis = ConnectionDiagnosis(usesCurve: curve)
        let verdicts = events.compactMap { diagnosis.record(ZMQMonitorEvent(kind: $0, value: value)) }
        return (diagnosis, verdicts)
    }

    @Test func aKeyTheDaemonDeniesIsAVerdictAtOnce() {
        let (_, verdicts) = Self.diagnosis(curve: true, after: [.connected, .handshakeFailedAuth], value: 400)
        #expect(verdicts == [ConnectionDiagnosisTests.denied])
    }

    @Test func aDenialStaysTheExplanationWhateverComesAfterIt() {
        // The client's request may come after the refusal: it times out, or is failed at once,
        // with the refusal as the reason, not the disconnections that follow it.
        let (diagnosis, _) = Self.diagnosis(
            curve: true, after: [.connected, .handshakeFailedAuth, .disconnected, .connected, .disconnected],
            value: 400)
        #expect(diagnosis.verdict == ConnectionDiagnosisTests.denied)
        #expect(diagnosis.explanation == ConnectionDiagnosisTests.denied)
    }

    static let denied =
        "the bus refused this client's key: its public key is not in the daemon's --allow-keys "
        + "(the daemon logs the key it refused)"

    @Test func anAuthenticatorThatFailsIsNotTakenForADenial() {
        let (_, verdicts) = Self.diagnosis(curve: true, after: [.connected, .handshakeFailedAuth], value: 500)
        #expect(verdicts == ["the bus could not authenticate this client (ZAP status 500)"])
    }

    @Test(arguments: [
        (
            true,
            "the bus does not use CURVE (it was started with --insecure); connect without --server-key and --client-key"
        ),
        (
            false,
            "the bus requires CURVE: give --server-key (the daemon's .pub) and --client-key (this client's .key from `bureau keygen`)"
        ),
    ])
    func aMechanismMismatchSaysWhichSideLacksCurve(curve: Bool, reason: String) {
        let (_, verdicts) = Self.diagnosis(
            curve: curve, after: [.connected, .handshakeFailedProtocol], value: ZMQMonitorEvent.mechanismMismatch)
        #expect(verdicts == [reason])
    }

    @Test func connectionsCutInTheHandshakePointAtTheServerKeyWhenTheRequestTimesOut() {
        let (diagnosis, verdicts) = Self.diagnosis(
            curve: true, after: [.connectDelayed, .connected, .handshakeFailedNoDetail, .disconnected, .connected])
        #expect(verdicts.isEmpty)
        #expect(
            diagnosis.explanation
                == "the daemon ended every connection during the CURVE handshake: "
                + "--server-key is probably not this daemon's public key")
    }

    @Test func aPlainClientCutInTheHandshakeIsToldTheBusProbablyRequiresCurve() {
        let (diagnosis, verdicts) = Self.diagnosis(curve: false, after: [.connected, .disconnected, .connected])
        #expect(verdicts.isEmpty)
        #expect(
            diagnosis.explanation
                == "the daemon ended every connection during the handshake, so it probably requires CURVE: "
                + "give --server-key (the daemon's .pub) and --client-key (this client's .key from `bureau keygen`)")
    }

    @Test func aDisconnectBeforeAnyHandshakeCountsAsCutToo() {
        let (diagnosis, _) = Self.diagnosis(curve: true, after: [.connected, .disconnected])
        #expect(diagnosis.explanation?.contains("--server-key is probably not") == true)
    }

    @Test func noConnectionAtAllIsAHostOrPortNobodyAnswersOn() {
        let (diagnosis, verdicts) = Self.diagnosis(
            curve: true, after: [.connectDelayed, .closed, .connectRetried, .connectDelayed])
        #expect(verdicts.isEmpty)
        #expect(
            diagnosis.explanation == "could not connect: nothing listens there, or the host cannot be reached")
    }

    @Test func aHandshakeThatSucceededLeavesTheTimeoutToSayNoAnswer() {
        let (diagnosis, _) = Self.diagnosis(
            curve: true, after: [.connected, .handshakeSucceeded, .disconnected, .connectRetried])
        #expect(diagnosis.explanation == nil)
    }

    @Test func monitorMessagesAreDecodedAndOtherShapesPassedOver() throws {
        // ZMQ_EVENT_HANDSHAKE_FAILED_AUTH (0x4000), value 400, little-endian.
        let frame = Data([0x00, 0x40, 0x90, 0x01, 0x00, 0x00])
        let event = try #require(ZMQMonitorEvent.decode([frame, Data("tcp://198.51.100.1:7400".utf8)]))
        #expect(event == ZMQMonitorEvent(kind: .handshakeFailedAuth, value: 400, endpoint: "tcp://198.51.100.1:7400"))
        #expect(ZMQMonitorEvent.decode([frame]) == nil)
        #expect(ZMQMonitorEvent.decode([Data([1, 2, 3]), Data()]) == nil)
        #expect(ZMQMonitorEvent.decode([Data([0x34, 0x12, 0, 0, 0, 0]), Data()])?.kind == .other(0x1234))
    }
}
