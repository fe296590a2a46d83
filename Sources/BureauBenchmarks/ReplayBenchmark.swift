import ArgumentParser
import BureauSchemas
import Bus
import EventLog
import Foundation
import Guards
import Logging
import Runtime
import WatchlistFeature

struct ReplayBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Replay and verification of a recorded log vs raw read + decode of the same log.",
        discussion: HelpText.prose(
            """
            Writes a log of --events events as a watchlist host would have left it: rates, then
            add and remove EUR/USD requests in turn, each followed by the reducer's answer (ids
            derived, causation and correlation set). It is written straight to the files, not
            through a bus: only the reading is measured. Then, each over the whole log from the
            files: raw read + decode; `bureau replay` (the watchlist reducer and its read model,
            and the final snapshot); `bureau replay --verify` (every answer re-computed and
            compared with the recorded one).

            Each reading runs --runs times, the readings taking turns, and each figure is its
            best run (the ratios best over best): on a shared machine the speed changes from one
            second to the next, and readings compare only when measured close together. On the
            development machine one reading's runs vary by up to 40 %, in windows of a second or
            two: with three turns, one reading often met a fast window and the other none, and
            the ratio moved with that; five turns give each a fair chance at one.

            Replay spreads its work over two threads; the baseline runs on one. So it also times
            a CPU-bound loop on one thread and on two at once, and prints how fast each of two
            runs: below 1, the machine's two processors share a core or a busy host. Its two
            threads settle at one of two rates, about a third apart, whichever the build (and now
            and then change within a process): to compare builds, the replay through the upcasters
            is timed on one thread too ("replay reading inline through an upcaster"), the work alone.

            Example: swift run -c release bureau-bench replay --events 1000000
            """)
    )

    @Option(help: "(default: 1000000)", transform: BoundedNumber.integers(in: 2...100_000_000)) var events = 1_000_000
    @Option(
        help: "How many times to measure each reading, taking turns; each figure is the best run. (default: 5)",
        transform: BoundedNumber.integers(in: 1...20))
    var runs = 5
    @Flag(
        help: """
            Store every add request under an older name, read back through an upcaster (RenamedEvent): \
            what replay pays when every event of one type is upcast.
            """)
    var upcastRequests = false

    /// The older name add requests are stored under with --upcast-requests.
    static let oldAddRequestName = "bureau.bench.PairAddRequestedV0"

    func run() async throws {
        startWatchdog(.seconds(1200))
        try await withScratchDirectory { directory in
            let location = BusLocation(dataDirectory: directory + "/data")
            let started = ContinuousClock.now
            let written = try writeLog(location)
            print(
                "# replay benchmark: \(formatted(Double(written))) events written in \(ContinuousClock.now - started)")
            let timing = ReducersBenchmark()
            // The machine's share in the ratio: how fast two threads run at once.
            let speed = ParallelSpeed.measure()
            // As the tools read: through an upcaster set. Without --upcast-requests no event is of
            // its stored type, which is what a build whose upcasters no event needs pays.
            let upcasting = try EventUpcasting(
                [
                    RenamedEvent(
                        from: upcastRequests ? Self.oldAddRequestName : "bureau.bench.NeverStored",
                        to: PairAddRequested.self)
                ], readTypes: [PairAddRequested.protoMessageName])

            // Each reading --runs times, taking turns; the ratios are best over best.
            var snapshot: ReplaySnapshot?
            let runs = try inTurns(
                runs,
                [
                    { try timing.timeRead(location) { _ in } },
                    { try timing.timeScan(location) { _ in } },
                    {
                        // `bureau replay`'s reading: a few chunks ahead on a thread of its own.
                        let (rate, count, final) = try timeReplay { try timing.timeScan(location, $0) }
                        snapshot = final
                        return (rate, count)
                    },
                    {
                        // For the ratio before the read-ahead: the same replay reading inline.
                        let (rate, count, _) = try timeReplay { try timing.timeRead(location, $0) }
                        return (rate, count)
                    },
                    {
                        // `bureau replay` as it reads: every event through the upcasters.
                        let (rate, count, _) = try timeReplay { apply in
                            try timing.timeScan(location) { upcasting.reading($0, apply) }
                        }
                        return (rate, count)
                    },
                    {
                        // The same work on one thread: the read-ahead's two threads share the
                        // decoding as their timing falls (two steady rates, a third apart, in one
                        // process), which a comparison of builds must not take for their work.
                        let (rate, count, _) = try timeReplay { apply in
                            try timing.timeRead(location) { upcasting.reading($0, apply) }
                        }
                        return (rate, count)
                    },
                ])
            let (raw, ahead, replay, inline, upcast) = (runs[0], runs[1], runs[2], runs[3], runs[4])
            let inlineUpcast = runs[5]

            let verifier = ReplayVerifier(reducers: [WatchlistReducer()])
            var divergence: ReplayDivergence?
            let (verifyRate, verifyCount) = try timing.timeScan(location) { event in
                // Through the upcasters, as `bureau replay --verify` reads: with --upcast-requests
                // the add requests are stored under a name the reducer does not know.
                if divergence == nil { divergence = upcasting.reading(event) { verifier.check($0) } }
            }
            if let divergence {
                throw ValidationError("the generated log does not verify: \(divergence)")
            }
            let compared = verifier.counts.first?.outputsCompared ?? 0

            let best = self.runs == 1 ? "" : ", best of \(self.runs)"
            print("")
            print("| measure | value |")
            print("|---|---|")
            print(
                "| raw read + decode (\(formatted(Double(raw.count))) events)\(best) | \(formatted(raw.best)) events/s |"
            )
            print(
                "| read + decode ahead, on a thread of its own (the tools' reading), nothing done\(best) "
                    + "| \(formatted(ahead.best)) events/s |")
            print("| replay reading inline (as before the read-ahead)\(best) | \(formatted(inline.best)) events/s |")
            print(
                "| replay: watchlist reducer + read model, final snapshot (\(formatted(Double(replay.count))) events)\(best) "
                    + "| \(formatted(replay.best)) events/s |")
            let upcastWhat =
                upcastRequests ? "every add request stored under an older name and upcast" : "no event needs one"
            print(
                "| replay through an upcaster (\(upcastWhat))\(best) | \(formatted(upcast.best)) events/s |")
            print(
                "| replay reading inline through an upcaster (\(upcastWhat))\(best) "
                    + "| \(formatted(inlineUpcast.best)) events/s |")
            if self.runs > 1 {
                print("| raw read + decode: every run | \(raw.every) events/s |")
                print("| replay: every run | \(replay.every) events/s |")
                print("| replay through an upcaster: every run | \(upcast.every) events/s |")
                print("| replay reading inline: every run | \(inline.every) events/s |")
                print("| replay reading inline through an upcaster: every run | \(inlineUpcast.every) events/s |")
            }
            print(
                "| verify: \(formatted(Double(compared))) answers re-computed and compared "
                    + "(\(formatted(Double(verifyCount))) events) | \(formatted(verifyRate)) events/s |")
            print("| replay inline / raw read + decode | \(String(format: "%.2f", inline.best / raw.best)) |")
            print("| replay / raw read + decode | \(String(format: "%.2f", replay.best / raw.best)) |")
            print(
                "| replay through an upcaster / replay (\(upcastWhat)) | "
                    + "\(String(format: "%.2f", upcast.best / replay.best)) |")
            print(
                "| replay reading inline, through an upcaster / without (\(upcastWhat)) | "
                    + "\(String(format: "%.2f", inlineUpcast.best / inline.best)) |")
            print("| verify / raw read + decode | \(String(format: "%.2f", verifyRate / raw.best)) |")
            print("")
            print(
                "CPU per event, every thread, least of any run: raw read + decode \(raw.leastCPUText); "
                    + "read ahead, nothing done \(ahead.leastCPUText); "
                    + "replay read ahead \(replay.leastCPUText); "
                    + "replay reading inline \(inline.leastCPUText)")
            print(
                "Two threads at once each ran at \(String(format: "%.2f", speed)) × the speed of one alone "
                    + "(a CPU-bound loop, best of 3): replay runs on two threads, raw read + decode on one.")
            let pairs = snapshot?.module("watchlist")?.state["pairs"]?.description ?? "?"
            print("replayed to position \(snapshot?.position ?? 0); watchlist pairs: \(pairs)")
        }
    }

    /// Replays the log read by `read` into the watchlist reducer and read model and takes the
    /// final snapshot: events/s, how many, and the snapshot.
    private func timeReplay(
        _ read: ((StoredEvent) -> Void) throws -> (Double, Int)
    ) throws -> (Double, Int, ReplaySnapshot) {
        let replay = LogReplay(reducers: [WatchlistReducer()], projections: [AnyProjection(WatchlistProjection())])
        let started = ContinuousClock.now
        let (_, count) = try read { replay.apply($0) }
        let snapshot = try replay.snapshot()
        return (Double(count) / (ContinuousClock.now - started).inSeconds, count, snapshot)
    }

    /// Writes the log a watchlist host would have left (``WatchlistSession``); how many events.
    private func writeLog(_ location: BusLocation) throws -> UInt64 {
        var options = FileEventLog.Options()
        options.durability = .never
        let quiet = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
        let log = try FileEventLog(directory: location.logDirectory, options: options, logger: quiet)
        var batch: [LogRecord] = []
        let written = try WatchlistSession.events(count: events) { event in
            var event = event
            if upcastRequests && event.type == PairAddRequested.protoMessageName { event.type = Self.oldAddRequestName }
            batch.append(LogRecord(position: event.position, id: event.id, body: try event.envelope().serializedData()))
            if batch.count >= 4096 {
                try log.append(batch)
                try log.commit()
                batch.removeAll(keepingCapacity: true)
            }
        }
        try log.append(batch)
        try log.close()
        return written
    }
}
