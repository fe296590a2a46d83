#if canImport(Glibc)
    import Glibc
#endif

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Builds a segment file's bytes, and its index, record by record.
struct SegmentWriter {
    let segment: SegmentFile
    let indexInterval: Int64
    private(set) var bytes: [UInt8]
    private(set) var index: [SparseIndex.Entry] = []
    private(set) var nextPosition: UInt64
    private var lastIndexed = Int64(SegmentFile.headerSize)

    init(segment: SegmentFile, previous: UInt64, indexInterval: Int64) {
        self.segment = segment
        self.indexInterval = indexInterval
        bytes = SegmentFile.header(firstPosition: segment.firstPosition, previousFirstPosition: previous)
        nextPosition = segment.firstPosition
    }

    mutating func append(_ record: LogRecord) {
        let offset = Int64(bytes.count)
        if offset - lastIndexed >= indexInterval {
            index.append(.init(position: record.position, offset: offset))
            lastIndexed = offset
        }
        RecordFormat.append(position: record.position, id: record.id, body: record.body, to: &bytes)
        nextPosition = record.position + 1
    }

    /// Writes the segment beside where it belongs (`<name>.repair`), durably; returns that path.
    func finish(fileSystem: any FileSystem, dryRun: Bool) throws -> String {
        let path = segment.path + ".repair"
        guard !dryRun else { return path }
        let file = try PosixFile(path: path, flags: O_WRONLY | O_CREAT | O_TRUNC, fileSystem: fileSystem)
        try bytes.withUnsafeBytes { try file.write($0, at: 0) }
        try file.dataSync()
        return path
    }
}
