import BureauSchemas
import Bus
import EventLog
import Tracing

extension IngressLoop {
    /// A span for each traced event `batch` commits, begun when the batch was taken in (`time`,
    /// its commit time): the bus's hop of the trace, a child of the span that published the
    /// event. The loop ends them once the commit has finished and the events are published.
    ///
    /// Called only when tracing is on: it reads each committed envelope again, for its
    /// correlation and trace parent, which the sequencer has no need of.
    static func commitSpans(of batch: Sequencer.Batch, since time: CommitTime) -> [any Span] {
        var spans: [any Span] = []
        let began = BusTracing.instant(of: time)
        batch.records.bodies.withUnsafeBytes { bodies in
            for publication in batch.publications {
                let envelope = UnsafeRawBufferPointer(rebasing: bodies[publication.body])
                guard let header = try? EnvelopeScanner.scan(envelope), let span = header.traceParent, span != 0,
                    let idRange = header.idRange,
                    let id = EventID(bytes: UnsafeRawBufferPointer(rebasing: envelope[idRange]))
                else { continue }
                let correlation = header.correlationRange.flatMap {
                    EventID(bytes: UnsafeRawBufferPointer(rebasing: envelope[$0]))
                }
                let parent = TraceParent(traceID: correlation ?? id, spanID: span)
                let commit = Tracing.startSpan(
                    "commit \(publication.type.name)", at: began, context: BusTracing.context(continuing: parent),
                    ofKind: .server)
                commit.attributes.set("messaging.system", value: .string("bureau"))
                commit.attributes.set("messaging.operation.type", value: .string("settle"))
                commit.attributes.set("messaging.destination.name", value: .string(publication.type.name))
                commit.attributes.set("messaging.message.id", value: .string(id.description))
                commit.attributes.set("bureau.position", value: .int64(Int64(clamping: publication.position)))
                spans.append(commit)
            }
        }
        return spans
    }
}
