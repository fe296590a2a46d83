import Guards

/// Every run of one measure of a throughput that ``inTurns(_:_:)`` took.
struct Runs {
    /// Events per second, run by run.
    var rates: [Double] = []
    /// CPU microseconds per event, every thread counted, run by run.
    var cpu: [Double] = []
    /// How many events the last run counted.
    var count = 0

    /// The fastest run: the one the machine's other work disturbed least.
    var best: Double { rates.max() ?? 0 }
    /// The least CPU per event of any run.
    var leastCPU: Double { cpu.min() ?? 0 }
    /// ``leastCPU`` for the record: "0.42 µs".
    var leastCPUText: String {
        Duration.microseconds(saturating: leastCPU).microsecondsText(decimals: 2) + " µs"
    }
    /// Every run's rate, for the record: "1,234,567 / 1,198,765 / …".
    var every: String { rates.map(formatted).joined(separator: " / ") }
}

/// Runs each measure `runs` times, the measures taking turns (first, second, …, first again):
/// on a shared machine whose speed changes from one second to the next, a baseline and what is
/// compared with it are comparable only when measured close together, and the best of several
/// runs of each is the least disturbed. Each measure returns events/s and how many events.
func inTurns(_ runs: Int, _ measures: [() throws -> (Double, Int)]) throws -> [Runs] {
    var results = [Runs](repeating: Runs(), count: measures.count)
    for _ in 0..<runs {
        for (index, measure) in measures.enumerated() {
            let ((rate, count), cpu) = try cpuMicroseconds(per: \.1) { try measure() }
            results[index].rates.append(rate)
            results[index].cpu.append(cpu)
            results[index].count = count
        }
    }
    return results
}
