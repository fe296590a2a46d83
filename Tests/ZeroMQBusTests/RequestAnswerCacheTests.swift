import Foundation
import Testing

@testable import Bus
@testable import ZeroMQBus

struct RequestAnswerCacheTests {
    static let id = Data([1, 2, 3, 4, 5, 6, 7, 8])
    static let envelopes = [Data("first envelope".utf8), Data("second envelope".utf8)]

    @Test func aRetryOfTheSameRequestGetsTheSameAnswer() {
        var cache = RequestAnswerCache()
        let fingerprint = RequestAnswerCache.fingerprint(of: Self.envelopes)
        #expect(cache.answer(to: Self.id, fingerprint: fingerprint) == nil)
        cache.remember(Data("ack".utf8), to: Self.id, fingerprint: fingerprint)
        #expect(
            cache.answer(to: Self.id, fingerprint: RequestAnswerCache.fingerprint(of: Self.envelopes))
                == Data("ack".utf8))
    }

    @Test func aRequestIDReusedForOtherEnvelopesIsDecidedAfresh() {
        var cache = RequestAnswerCache()
        cache.remember(Data("ack".utf8), to: Self.id, fingerprint: RequestAnswerCache.fingerprint(of: Self.envelopes))
        let other = RequestAnswerCache.fingerprint(of: [Data("another envelope".utf8)])
        #expect(cache.answer(to: Self.id, fingerprint: other) == nil)
        let reordered = RequestAnswerCache.fingerprint(of: Self.envelopes.reversed())
        #expect(cache.answer(to: Self.id, fingerprint: reordered) == nil)
    }

    @Test func theOldestAnswersAreForgottenBeyondTheBoundsInEntriesAndBytes() {
        var cache = RequestAnswerCache(maxEntries: 100, maxBytes: 1000)
        let fingerprint = RequestAnswerCache.fingerprint(of: Self.envelopes)
        for index in 0..<10_000 {
            cache.remember(
                Data(count: 5), to: withUnsafeBytes(of: UInt64(index)) { Data($0) }, fingerprint: fingerprint)
            #expect(cache.count <= 100 && cache.bytes <= 1000)
        }
        #expect(cache.answer(to: withUnsafeBytes(of: UInt64(9_999)) { Data($0) }, fingerprint: fingerprint) != nil)
        #expect(cache.answer(to: withUnsafeBytes(of: UInt64(0)) { Data($0) }, fingerprint: fingerprint) == nil)
        cache.remember(Data(count: 2000), to: Self.id, fingerprint: fingerprint)
        #expect(cache.bytes <= 1000, "an answer larger than the bound is not kept")
    }
}
