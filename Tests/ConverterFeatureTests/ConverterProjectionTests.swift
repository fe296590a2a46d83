import Bus
import ConverterFeature
import EventLog
import Foundation
import Runtime
import SwiftProtobuf
import Testing

/// What `bureau show converter` and the converter screen show, from the events.
struct ConverterProjectionTests {
    static func event(_ position: UInt64, _ message: some SwiftProtobuf.Message) throws -> StoredEvent {
        StoredEvent(
            position: position, id: .random(), type: type(of: message).protoMessageName,
            commitTime: CommitTime(seconds: 1_700_000_000, nanos: 0), payload: try message.serializedData())
    }

    @Test func anAmountChangedThatCannotBeReadIsPassedOverAndSaidNeverTakenSilently() throws {
        // Given an amount set to 250 USD
        let fold = AnyProjection(ConverterProjection()).fold()
        fold.apply(try Self.event(1, AmountChanged(value: "250.00", currency: "USD")))
        // When an AmountChanged with an amount and one with a currency that cannot be read come
        fold.apply(try Self.event(2, AmountChanged(value: "lots", currency: "EUR")))
        fold.apply(try Self.event(3, AmountChanged(value: "10.00", currency: "XYZ")))
        // Then the amount before them stays, and the fold names both as passed over
        #expect(fold.render().hasPrefix("250.00 USD"), "\(fold.render())")
        #expect(fold.passedOver.count == 2)
        #expect(fold.passedOver.first.map(\.position) == [2, 3])
        #expect(fold.passedOver.first.last?.reason == "'XYZ' is not a currency", "\(fold.passedOver)")
    }
}
