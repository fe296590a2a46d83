import Guards
import TerminalUI

/// Measures the diff renderer against full redraws: a 200×60 screen where 10% of the cells
/// change each frame, the same frames rendered both ways in one run.
enum RendererBenchmark {
    /// One way of rendering, measured.
    struct Measurement: Sendable {
        var frames: Int
        var bytesPerFrame: Double
        var microsecondsPerFrame: Double
    }

    /// The diff renderer's figures and the full redraw's, for the same frames.
    static func measure(
        width: Int = 200, height: Int = 60, changedFraction: Double = 0.10, frames: Int = 200
    ) -> (diff: Measurement, full: Measurement) {
        var generator = Xoshiro256(seed: 0x5EED)
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789€│─▲▼")
        let styles: [Style] = [.plain, .bold, .foreground(.green), .foreground(.red), .reverse]
        var frame = CellBuffer(width: width, height: height)
        for y in 0..<height {
            for x in 0..<width {
                frame.set(x, y, Cell(alphabet[Int(generator.next() % UInt64(alphabet.count))]))
            }
        }
        let changes = Int(Double(width * height) * changedFraction)
        var sequence: [CellBuffer] = []
        for _ in 0..<frames {
            for _ in 0..<changes {
                let x = Int(generator.next() % UInt64(width))
                let y = Int(generator.next() % UInt64(height))
                let character = alphabet[Int(generator.next() % UInt64(alphabet.count))]
                frame.set(x, y, Cell(character, style: styles[Int(generator.next() % UInt64(styles.count))]))
            }
            sequence.append(frame)
        }
        let clock = ContinuousClock()
        var renderer = Renderer(colorMode: .color)
        _ = renderer.render(sequence[0])
        var diffBytes = 0
        let diffTime = clock.measure {
            for next in sequence.dropFirst() { diffBytes += renderer.render(next).count }
        }
        var fullBytes = 0
        let fullTime = clock.measure {
            for next in sequence.dropFirst() { fullBytes += Renderer.fullRedraw(next, colorMode: .color).count }
        }
        let measured = Double(frames - 1)
        func micro(_ duration: Duration) -> Double { Double(duration.inMicroseconds) }
        return (
            Measurement(
                frames: frames - 1, bytesPerFrame: Double(diffBytes) / measured,
                microsecondsPerFrame: micro(diffTime) / measured),
            Measurement(
                frames: frames - 1, bytesPerFrame: Double(fullBytes) / measured,
                microsecondsPerFrame: micro(fullTime) / measured)
        )
    }

    /// The measurement as a Markdown table, for BENCHMARKS.md.
    static func run() -> String {
        let (diff, full) = measure()
        func row(_ name: String, _ measurement: Measurement) -> String {
            "| \(name) | \(measurement.frames) | \(Int(measurement.bytesPerFrame.rounded())) | "
                + "\(Int(measurement.microsecondsPerFrame.rounded())) |"
        }
        let saving = full.bytesPerFrame > 0 ? Int((100 * (1 - diff.bytesPerFrame / full.bytesPerFrame)).rounded()) : 0
        return """
            Renderer: 200×60 cells, 10% changed per frame (random cells, 5 styles, some multi-byte characters)

            | renderer | frames | bytes/frame | µs/frame |
            |---|---|---|---|
            \(row("diff (changed cells only)", diff))
            \(row("full redraw", full))

            The diff writes \(saving)% fewer bytes than a full redraw.
            """
    }
}
