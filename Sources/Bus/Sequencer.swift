import BureauSchemas
import EventLog

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The daemon's decisions for a batch of publish requests, without any socket: check each
/// envelope, recognise retries by id, assign positions, stamp the commit time.
///
/// Kept apart from the socket loop so that it can be tested against an in-memory log.
package struct Sequencer {
    /// One event committed by a batch, ready to publish.
    package struct Publication {
        package let position: UInt64
        package let type: KnownType
        package let previousInPackage: UInt64
        /// Where the stored envelope lies in the batch's ``Batch/records``' bodies.
        package let body: Range<Int>
    }

    package struct Batch {
        /// One result list per request, in request order.
        package var results: [[Bureau_Bus_PublishResult]] = []
        /// The records to append, the stored envelopes in one buffer.
        package var records = RecordBatch()
        package var publications: [Publication] = []
        /// The code of each event rejected, in the order of the rejected results: what the
        /// daemon counts them by (the results say them to producers in words).
        package var rejections: [PublishRejectionCode] = []

        /// A batch whose records go into `records`' memory (emptied first), so that a caller
        /// that keeps the buffer from batch to batch allocates it once.
        package init(reusing records: consuming RecordBatch = RecordBatch()) {
            records.removeAll()
            self.records = records
        }

        /// The body of `publication`, in ``records``' buffer.
        package func body(of publication: Publication) -> ArraySlice<UInt8> {
            records.bodies[publication.body]
        }
    }

    package let maxEnvelopeBytes: Int
    /// The head when the daemon started; chains of packages not seen since begin there.
    package let epochStart: UInt64
    private(set) var lastCommitTime: (seconds: Int64, nanos: Int32)
    /// The packages that published since the daemon started, in order of first appearance.
    private var packages: [String] = []
    /// The last position of each of ``packages``, at the same index.
    private var lastInPackage: [UInt64] = []
    private var packageIndices: [String: Int] = [:]
    /// Type names already checked, by their bytes: most events repeat a few types.
    private var knownTypes: [Data: KnownType] = [:]
    /// The types the last envelopes had, the latest first: a stream of a few types (a host's
    /// answers, added and removed in turn) finds each by comparing bytes, without making a
    /// `Data` of the name and hashing it.
    private var recentTypes: [KnownType] = []
    private static let recentTypesKept = 8

    /// The package of the last event committed and where it is in ``packages``: events of one
    /// package often come in a row.
    private var lastPackage: (name: String, index: Int)?

    /// A type name checked once and shared by every event of that type: an object, so that
    /// handing it along with each event costs one reference count, not one per field.
    package final class KnownType: Sendable {
        package let name: String
        package let package: String
        /// The name's bytes: the topic its events are published under.
        package let topic: Data
        /// The topic again, to compare with an envelope's bytes without making a `Data`.
        let topicBytes: [UInt8]

        package init(name: String, package: String, topic: Data) {
            self.name = name
            self.package = package
            self.topic = topic
            topicBytes = Array(topic)
        }

        func hasTopic(_ bytes: UnsafeRawBufferPointer) -> Bool {
            bytes.count == topicBytes.count && EventFilter.hasPrefix(bytes, topicBytes)
        }

        /// Whether events of `other` go under the same topic.
        package func sharesTopic(with other: KnownType) -> Bool {
            self === other || topicBytes == other.topicBytes
        }
    }

    /// The last position of each package that published since the daemon started.
    package var packageHeads: [String: UInt64] {
        Dictionary(uniqueKeysWithValues: zip(packages, lastInPackage))
    }

    package init(maxEnvelopeBytes: Int, epochStart: UInt64, lastCommitTime: (seconds: Int64, nanos: Int32)) {
        self.maxEnvelopeBytes = maxEnvelopeBytes
        self.epochStart = epochStart
        self.lastCommitTime = lastCommitTime
    }

    /// Decides every envelope of `requests` against `log` and returns the records to append.
    /// The caller appends them, makes them durable, then publishes and acknowledges.
    package mutating func sequence(
        _ requests: [[Data]], log: any EventLog, now: (seconds: Int64, nanos: Int32),
        reusing buffer: consuming RecordBatch = RecordBatch()
    ) -> Batch {
        sequence(requests.map(EnvelopeBatch.init), log: log, now: now, reusing: consume buffer)
    }

    /// ``sequence(_:log:now:reusing:)-([[Data]],_,_,_)`` for requests as they arrive: each one
    /// buffer of envelopes.
    package mutating func sequence(
        _ requests: [EnvelopeBatch], log: any EventLog, now: (seconds: Int64, nanos: Int32),
        reusing buffer: consuming RecordBatch = RecordBatch()
    ) -> Batch {
        var batch = Batch(reusing: consume buffer)
        // Commit times never go backwards, even when the wall clock does.
        let time = now < lastCommitTime ? lastCommitTime : now
        lastCommitTime = time
        let stamp = EnvelopeStamp(seconds: time.seconds, nanos: time.nanos)
        let first = log.head + 1
        var next = first
        // Checked first, so that the log is asked for every id of the batch at once: one
        // query for a log in a database, however many requests the batch holds. The log numbers
        // the new ids in order from `first`, as the loop below does, and finds ids repeated
        // within the batch.
        let checks = requests.map { request in
            request.withBytes { bytes in
                request.envelopes.map { check(UnsafeRawBufferPointer(rebasing: bytes[$0])) }
            }
        }
        var known = log.claimPositions(checks.flatMap { $0.compactMap { try? $0.get().id } }, from: first)
            .makeIterator()
        let envelopes = checks.reduce(0) { $0 + $1.count }
        batch.records.reserve(
            records: envelopes, bodyBytes: requests.reduce(0) { $0 + $1.byteCount + $1.count * stamp.maxBytes })
        batch.publications.reserveCapacity(envelopes)
        for (request, checks) in zip(requests, checks) {
            var results: [Bureau_Bus_PublishResult] = []
            results.reserveCapacity(request.count)
            request.withBytes { bytes in
                for (range, checked) in zip(request.envelopes, checks) {
                    guard case .success(let accepted) = checked else {
                        if case .failure(let rejection) = checked {
                            results.append(.rejected(rejection.text))
                            batch.rejections.append(rejection.code)
                        }
                        continue
                    }
                    if let position = known.next() ?? nil {
                        results.append(.duplicate(position))
                        continue
                    }
                    let type = accepted.type
                    let package = packageIndex(type.package)
                    let previous = lastInPackage[package]
                    lastInPackage[package] = next
                    // Stamped into the batch's buffer as it is decided.
                    let position = next
                    let body = batch.records.append(position: position, id: accepted.id) { bodies in
                        stamp.append(UnsafeRawBufferPointer(rebasing: bytes[range]), position: position, to: &bodies)
                    }
                    batch.publications.append(
                        Publication(position: position, type: type, previousInPackage: previous, body: body))
                    results.append(.committed(position))
                    next += 1
                }
            }
            batch.results.append(results)
        }
        return batch
    }

    /// The index of `package` in ``packages``, added with the epoch start as its last position if
    /// new. Called for committed events only, so that rejected ones cannot grow the list.
    private mutating func packageIndex(_ package: String) -> Int {
        if let last = lastPackage, last.name == package { return last.index }
        let index: Int
        if let known = packageIndices[package] {
            index = known
        } else {
            packages.append(package)
            lastInPackage.append(epochStart)
            index = packages.count - 1
            packageIndices[package] = index
        }
        lastPackage = (package, index)
        return index
    }

    struct Accepted {
        let id: EventID
        let type: KnownType
    }

    struct Rejection: Error {
        let code: PublishRejectionCode
        let text: String
    }

    /// Checks one producer envelope: size, wire format, id, type, and no bus-assigned fields.
    private mutating func check(_ envelope: UnsafeRawBufferPointer) -> Result<Accepted, Rejection> {
        guard envelope.count <= maxEnvelopeBytes else {
            return .failure(
                Rejection(
                    code: .tooLarge,
                    text: "envelope of \(envelope.count) bytes is over the limit of \(maxEnvelopeBytes)"))
        }
        let header: EnvelopeHeader
        do {
            header = try EnvelopeScanner.scan(envelope)
        } catch {
            return .failure(Rejection(code: .malformed, text: error.description))
        }
        guard let idRange = header.idRange, let id = EventID(bytes: UnsafeRawBufferPointer(rebasing: envelope[idRange]))
        else {
            let count = header.idRange?.count ?? 0
            return .failure(Rejection(code: .badID, text: "the envelope's id must be 16 bytes, not \(count)"))
        }
        guard id != .zero else { return .failure(Rejection(code: .badID, text: "the envelope's id is all zeros")) }
        if let correlation = header.correlationRange, correlation.count != 16, !correlation.isEmpty {
            return .failure(
                Rejection(
                    code: .badCorrelation,
                    text: "the envelope's correlation id must be 16 bytes (or absent), not \(correlation.count)"))
        }
        guard let typeRange = header.typeRange else {
            return .failure(Rejection(code: .badType, text: "the envelope has no type name"))
        }
        let typeBytes = UnsafeRawBufferPointer(rebasing: envelope[typeRange])
        let type: KnownType
        if let index = recentTypes.firstIndex(where: { $0.hasTopic(typeBytes) }) {
            type = recentTypes[index]
            if index > 0 { recentTypes.swapAt(index, index - 1) }  // the frequent ones move up
        } else {
            if let known = knownTypes[Data(typeBytes)] {
                type = known
            } else {
                let name = String(decoding: typeBytes, as: UTF8.self)
                if let problem = TypeName.problem(with: name) {
                    return .failure(Rejection(code: .badType, text: problem))
                }
                type = KnownType(name: name, package: String(TypeName.package(of: name)), topic: Data(typeBytes))
                // Bounded, so that a producer inventing types cannot grow it without end.
                if knownTypes.count < 4096 { knownTypes[Data(typeBytes)] = type }
            }
            if recentTypes.count == Self.recentTypesKept { recentTypes.removeLast() }
            recentTypes.insert(type, at: 0)
        }
        guard header.position == nil || header.position == 0 else {
            return .failure(Rejection(code: .busField, text: "the envelope sets a position; the bus assigns positions"))
        }
        guard !header.hasCommitTime else {
            return .failure(
                Rejection(code: .busField, text: "the envelope sets a commit time; the bus assigns commit times"))
        }
        return .success(Accepted(id: id, type: type))
    }
}

extension Bureau_Bus_PublishResult {
    package static func committed(_ position: UInt64) -> Self {
        var result = Self()
        result.status = .committed
        result.position = position
        return result
    }

    package static func duplicate(_ position: UInt64) -> Self {
        var result = Self()
        result.status = .duplicate
        result.position = position
        return result
    }

    package static func rejected(_ reason: String) -> Self {
        var result = Self()
        result.status = .rejected
        result.reason = reason
        return result
    }
}
