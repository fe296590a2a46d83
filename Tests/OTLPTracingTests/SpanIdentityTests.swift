import OTLPTracing
import Testing

struct SpanIdentityTests {
    @Test func aTraceparentReadsBackAsItWasWritten() {
        let identity = SpanIdentity(
            traceHigh: 0x0af7_6519_16cd_43dd, traceLow: 0x8448_eb21_1c80_319c, spanID: 0xb7ad_6b71_6920_3331,
            sampled: true)
        #expect(identity.traceparent == "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
        #expect(SpanIdentity(traceparent: identity.traceparent) == identity)
        let unsampled = SpanIdentity(traceHigh: 0, traceLow: 1, spanID: 2, sampled: false)
        #expect(unsampled.traceparent == "00-00000000000000000000000000000001-0000000000000002-00")
        #expect(SpanIdentity(traceparent: unsampled.traceparent) == unsampled)
    }

    @Test(arguments: [
        "", "00", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",
        "00-00000000000000000000000000000000-b7ad6b7169203331-01",  // all-zero trace id
        "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",  // all-zero span id
        "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",  // uppercase
        "00-+af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",  // a sign
        "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",  // the forbidden version
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra",  // version 00 has four fields
        "00-0af7651916cd43dd8448eb211c80319-b7ad6b7169203331-01",  // short
    ])
    func anythingElseIsNoParent(header: String) {
        #expect(SpanIdentity(traceparent: header) == nil)
    }

    @Test func aLaterVersionIsReadByItsFirstFourFields() {
        let identity = SpanIdentity(traceparent: "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-what-comes")
        #expect(identity?.spanID == 0xb7ad_6b71_6920_3331)
    }
}

struct TraceSamplerTests {
    @Test func aParentBasedSamplerFollowsTheParentAndSamplesRootsByItsRule() {
        let sampled = SpanIdentity(traceHigh: 1, traceLow: 1, spanID: 1, sampled: true)
        let unsampled = SpanIdentity(traceHigh: 1, traceLow: 1, spanID: 1, sampled: false)
        #expect(TraceSampler.parentBasedAlwaysOn.samples(traceLow: 5, parent: nil))
        #expect(!TraceSampler.parentBasedAlwaysOn.samples(traceLow: 5, parent: unsampled))
        let off = TraceSampler(root: .never, followsParent: true)
        #expect(!off.samples(traceLow: 5, parent: nil))
        #expect(off.samples(traceLow: 5, parent: sampled))
        #expect(!TraceSampler(root: .never, followsParent: false).samples(traceLow: 5, parent: sampled))
    }

    @Test func aRatioSamplesTheTracesWhoseIdFallsInItsShareOfTheRange() {
        let half = TraceSampler(root: .ratio(0.5), followsParent: false)
        #expect(half.samples(traceLow: 1, parent: nil))
        #expect(half.samples(traceLow: UInt64.max / 4, parent: nil))
        #expect(!half.samples(traceLow: UInt64.max / 4 * 3, parent: nil))
        #expect(!TraceSampler(root: .ratio(0), followsParent: false).samples(traceLow: 1, parent: nil))
        #expect(TraceSampler(root: .ratio(1), followsParent: false).samples(traceLow: .max, parent: nil))
    }
}
