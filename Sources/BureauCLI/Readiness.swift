import ArgumentParser
import Foundation
import Guards

/// `--ready-fd N`: when the process is ready to serve, it writes "READY\n" to file descriptor
/// N and closes it. A supervisor (or a test) passes the write end of a pipe and waits on the
/// read end, so readiness is an event to await, not a condition to poll.
struct ReadinessOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp("Write READY to this file descriptor once ready (for supervisors).", valueName: "fd"),
        transform: BoundedNumber.integers(in: Int32(1)...1_048_576))
    var readyFd: Int32?

    /// Tells whoever waits that the process is ready; does nothing without --ready-fd.
    /// `detail` follows READY on the line, e.g. the URL a server listens at.
    func notify(detail: String = "") {
        guard let readyFd else { return }
        let line = Array((detail.isEmpty ? "READY\n" : "READY \(detail)\n").utf8)
        _ = line.withUnsafeBytes { write(readyFd, $0.baseAddress, $0.count) }
        close(readyFd)
    }
}
