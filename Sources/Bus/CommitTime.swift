import Guards

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// When the bus committed an event, to the nanosecond, as the envelope carries it.
///
/// Kept exact (not a `Date`, whose `Double` loses nanoseconds) so that exporting and
/// re-importing a log, or re-running a reducer, sees the very same time.
public struct CommitTime: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public var seconds: Int64
    public var nanos: Int32

    public init(seconds: Int64, nanos: Int32) {
        self.seconds = seconds
        self.nanos = nanos
    }

    public static let zero = CommitTime(seconds: 0, nanos: 0)

    /// The wall clock now, as a bus stamps it (the sequencer keeps commit times from going back).
    public static var now: CommitTime {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return CommitTime(seconds: Int64(now.tv_sec), nanos: Int32(now.tv_nsec))
    }

    public var date: Date { Date(timeIntervalSince1970: Double(seconds) + Double(nanos) / 1e9) }

    /// Nanoseconds since 1970.
    public var nanosecondsSince1970: Int64 { seconds &* 1_000_000_000 &+ Int64(nanos) }

    /// `lhs` minus `rhs`.
    public static func - (lhs: CommitTime, rhs: CommitTime) -> Duration {
        .seconds(lhs.seconds - rhs.seconds) + .nanoseconds(Int64(lhs.nanos) - Int64(rhs.nanos))
    }

    /// `time` moved on by `duration` (back, for a negative one), the nanoseconds carried into
    /// the seconds: what a test's clock does between inputs.
    public static func + (time: CommitTime, duration: Duration) -> CommitTime {
        let seconds = duration.inWholeSeconds
        // The part under a second, in whole nanoseconds: the seconds are added apart, so that
        // no duration saturates.
        let nanos = Int64(time.nanos) + (duration - .seconds(seconds)).inNanoseconds
        let carried = nanos >= 0 ? nanos / 1_000_000_000 : (nanos - 999_999_999) / 1_000_000_000
        return CommitTime(
            seconds: time.seconds &+ seconds &+ carried, nanos: Int32(nanos - carried * 1_000_000_000))
    }

    public static func < (lhs: CommitTime, rhs: CommitTime) -> Bool {
        (lhs.seconds, lhs.nanos) < (rhs.seconds, rhs.nanos)
    }

    /// RFC 3339 in UTC with microseconds, e.g. `2026-11-22T02:20:42.350123Z`.
    public var description: String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(nanos / 1000, 6))Z"
    }

    /// Parses RFC 3339 (`2026-11-22T02:20:42.350123Z`, or with an offset such as `+01:00`); the
    /// fraction of a second is optional and kept to the nanosecond.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: " "), bytes[13] == UInt8(ascii: ":"),
            bytes[16] == UInt8(ascii: ":")
        else { return nil }
        func number(_ range: Range<Int>) -> Int32? {
            guard range.upperBound <= bytes.count else { return nil }
            var value: Int32 = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int32(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var index = 19
        var nanos: Int32 = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            var digits = 0
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                if digits < 9 { nanos = nanos * 10 + Int32(bytes[index] - UInt8(ascii: "0")) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 9) { nanos *= 10 }
        }
        var offset: Int64 = 0
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            guard index + 1 == bytes.count else { return nil }
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard index + 6 == bytes.count, bytes[index + 3] == UInt8(ascii: ":"),
                let hours = number(index + 1..<index + 3), let minutes = number(index + 4..<index + 6)
            else { return nil }
            offset = Int64(hours) * 3600 + Int64(minutes) * 60
            if bytes[index] == UInt8(ascii: "-") { offset = -offset }
        default:
            return nil
        }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = month - 1
        parts.tm_mday = day
        parts.tm_hour = hour
        parts.tm_min = minute
        parts.tm_sec = second
        self.init(seconds: Int64(timegm(&parts)) - offset, nanos: nanos)
    }
}
