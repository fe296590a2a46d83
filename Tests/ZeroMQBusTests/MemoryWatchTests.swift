import Glibc
import Logging
import Metrics
import TestSupport
import Testing
import ZeroMQ

@testable import ZeroMQBus

/// The watch's reading of the daemon's memory, which the policy above is fed.
// Faults 64 MiB of pages in: off the cooperative pool.
@Suite(.ownThreads)
struct MemoryWatchTests {
    @Test func itReadsTheProcesssAnonymousMemoryAsItComesAndGoes() throws {
        let watch = MemoryWatch(
            limit: 1 << 40, renewals: [], stop: try WakeSignal(),
            metrics: BusMetrics(factory: NOOPMetricsHandler.instance),
            logger: Logger(label: "test"))
        // 64 MiB, not more: zeroing its pages is the test's whole cost (256 MiB took 0.9 s of CPU
        // on this machine's virtual cores).
        let size = 64 << 20
        // Given 64 MiB of anonymous memory, every page of it in place (MAP_POPULATE),
        let pages = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0)
        try #require(pages != MAP_FAILED)
        let mapped = try #require(watch.anonymousResident())
        // when it is handed back,
        munmap(pages, size)
        let unmapped = try #require(watch.anonymousResident())
        // the watch sees it go (other tests' memory may move a little between the two reads).
        #expect(mapped - unmapped >= 48 << 20)
        #expect(unmapped > 0)
    }
}
