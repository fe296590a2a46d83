import Foundation
import SwiftProtobuf
import TestSupport
import Testing

@testable import BureauSchemas

// Decodes many thousands of payloads: on threads of its own, off the cooperative pool.
@Suite(.ownThreads) struct SchemaRegistryTests {
    @Test func theLiteralNamesAreEveryTypesName() {
        let names = SchemaRegistry.generatedMessageTypes.map { $0.protoMessageName }.sorted()
        #expect(SchemaRegistry.generatedTypeNames == names)
    }

    @Test func aKnownTypeNameIsTheSchemasOwnCopy() throws {
        // Made at run time, as a decoder makes a name from an envelope's bytes.
        let made = String(decoding: Array("bureau.watchlist.PairAdded".utf8), as: UTF8.self)
        let known = try #require(SchemaRegistry.knownTypeName(made))
        #expect(known == made)
        // The same copy each time: its bytes are where the literal's are.
        let again = try #require(SchemaRegistry.knownTypeName(made))
        var (first, second) = (known, again)
        let same = first.withUTF8 { a in second.withUTF8 { b in a.baseAddress == b.baseAddress } }
        #expect(same)
        #expect(SchemaRegistry.knownTypeName("bureau.watchlist.PairParted") == nil)
    }
}
