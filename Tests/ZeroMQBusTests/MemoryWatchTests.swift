import Glibc
import Logging
import Metrics
import Testing
import ZeroMQ

@testable import ZeroMQBus

/// The watch's reading of the daemon's memory, which the policy above is fed.
struct MemoryWatchTests {
    @Test func itReadsTheProcesssAnonymousMemoryAsItComesAndGoes() throws {
        let watch = MemoryWatch(
            limit: 1 << 40, renewals: [], stop: try WakeSignal(),
            metrics: BusMetrics(factory: NOOPMetricsHandler.instance),
            logger: Logger(label: "test"))
        let size = 256 << 20
        // Given 256 MiB of anonymous memory, every page of it in place (MAP_POPULATE),
        let pages = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0)
        try #require(pages != MAP_FAILED)
        let mapped = try #require(watch.anonymousResident())
        // when it is handed back,
        munmap(pages, size)
        let unmapped = try #require(watch.anonymousResident())
        // the watch sees it go (other tests' memory may move a little between the two reads).
        #expect(mapped - unmapped >= 192 << 20)
        #expect(unmapped > 0)
    }
}
