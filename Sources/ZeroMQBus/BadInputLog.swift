import Bus
import Logging

/// Logs rejected input without flooding: the first few one by one, then a count per interval.
struct BadInputLog {
    private let logger: Logger
    private let individually: Int
    private let interval: Duration
    private var logged = 0
    private var suppressed = 0
    private var lastReason = ""
    private var lastSummary = ContinuousClock.now
    /// Everything rejected since the daemon started.
    private(set) var total = 0

    init(logger: Logger, individually: Int = 20, interval: Duration = .seconds(5)) {
        self.logger = logger
        self.individually = individually
        self.interval = interval
    }

    mutating func record(_ reason: String, socket: String) {
        total += 1
        if logged < individually {
            logged += 1
            logger.warning("rejected input", metadata: ["bus.socket": "\(socket)", "bus.reason": "\(reason)"])
        } else {
            suppressed += 1
            lastReason = reason
        }
        summarizeIfDue()
    }

    /// Logs the count of rejections not logged one by one, once per interval.
    mutating func summarizeIfDue() {
        guard suppressed > 0, ContinuousClock.now - lastSummary >= interval else { return }
        logger.warning(
            "rejected more input",
            metadata: ["bus.count": "\(suppressed)", "bus.total": "\(total)", "bus.last_reason": "\(lastReason)"])
        suppressed = 0
        lastSummary = .now
    }
}
