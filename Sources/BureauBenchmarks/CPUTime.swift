import Foundation
import Guards

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
    // Right-aligned in 6 characters, as tools/bench-alternate reads them ("%6.2f" before).
    func seconds(_ value: Double) -> String {
        let text = Duration.seconds(saturating: value).secondsText(decimals: 2)
        return String(repeating: " ", count: max(0, 6 - text.count)) + text
    }
    for (name, user, system) in rows.sorted(by: { $0.1 + $0.2 > $1.1 + $1.2 }) where user + system > 0.05 {
        print(
            "  " + name.padding(toLength: 18, withPad: " ", startingAt: 0)
                + " user \(seconds(user)) s  system \(seconds(system)) s")
    }
}

/// The process's user and system CPU seconds so far, every thread counted.
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    func seconds(_ time: timeval) -> Double { (Duration.seconds(time.tv_sec) + .microseconds(time.tv_usec)).inSeconds }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// Runs `body` and says how many CPU microseconds (every thread) it took per item of `count`.
func cpuMicroseconds<Result>(per count: (Result) -> Int, _ body: () throws -> Result) rethrows -> (Result, Double) {
    let before = processCPUSeconds()
    let result = try body()
    return (result, (processCPUSeconds() - before) / Double(max(count(result), 1)) * 1e6)
}
