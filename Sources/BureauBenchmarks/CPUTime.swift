import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Each thread's user and system CPU seconds, from /proc, to see which one limits throughput.
func printThreadTimes() {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    var rows: [(String, Double, Double)] = []
    for task in tasks {
        guard let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
            let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")")
        else { continue }
        let name = String(stat[stat.index(after: open)..<close])
        let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { continue }
        rows.append((name, user / 100, system / 100))
    }
    for (name, user, system) in rows.sorted(by: { $0.1 + $0.2 > $1.1 + $1.2 }) where user + system > 0.05 {
        print(
            "  " + name.padding(toLength: 18, withPad: " ", startingAt: 0)
                + String(format: " user %6.2f s  system %6.2f s", user, system))
    }
}

/// The process's user and system CPU seconds so far, every thread counted.
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// Runs `body` and says how many CPU microseconds (every thread) it took per item of `count`.
func cpuMicroseconds<Result>(per count: (Result) -> Int, _ body: () throws -> Result) rethrows -> (Result, Double) {
    let before = processCPUSeconds()
    let result = try body()
    return (result, (processCPUSeconds() - before) / Double(max(count(result), 1)) * 1e6)
}
