import Guards

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A snapshot file: a first line `bureau-snapshot 2 crc32=<8 hex digits> length=<bytes>`, then
/// the document as JSON, so that any damage to the file is detected and the snapshot ignored
/// (the host then rebuilds the state from the log). Files of format 1 are the JSON alone.
public enum SnapshotCoding {
    static let magic = "bureau-snapshot"
    static let fileFormat = 2

    public static func encode<State: Codable & Sendable>(_ snapshot: Snapshot<State>) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let document = try encoder.encode(
            SnapshotDocument(
                format: SnapshotDocument<State>.currentFormat, module: snapshot.module,
                stateVersion: snapshot.stateVersion, position: snapshot.position, state: snapshot.state))
        let crc = String(Checksum.crc32(of: document), radix: 16)
        let header =
            "\(magic) \(fileFormat) crc32=\(String(repeating: "0", count: 8 - crc.count))\(crc) length=\(document.count)\n"
        return Data(header.utf8) + document
    }

    /// The JSON document of a snapshot file, once its checksum holds.
    static func document(of data: Data) -> Result<Data, SnapshotRejection> {
        // Format 1: the JSON alone.
        if data.first == UInt8(ascii: "{") { return .success(data) }
        guard let newline = data.prefix(128).firstIndex(of: UInt8(ascii: "\n")) else {
            return .failure(SnapshotRejection("the snapshot is not readable: it has no header line"))
        }
        let fields = String(decoding: data[data.startIndex..<newline], as: UTF8.self).split(separator: " ")
        guard fields.count == 4, fields[0] == magic, fields[1] == "\(fileFormat)", fields[2].hasPrefix("crc32="),
            let crc = UInt32(fields[2].dropFirst(6), radix: 16), fields[3].hasPrefix("length="),
            let length = Int(fields[3].dropFirst(7))
        else {
            return .failure(SnapshotRejection("the snapshot is not readable: its header line is damaged"))
        }
        let document = data[(newline + 1)...]
        guard document.count == length else {
            return .failure(
                SnapshotRejection("the snapshot is damaged: its document is \(document.count) bytes, not \(length)"))
        }
        guard Checksum.crc32(of: document) == crc else {
            return .failure(SnapshotRejection("the snapshot is damaged: its checksum does not match"))
        }
        return .success(Data(document))
    }

    /// Decodes a snapshot, or says why it cannot be used.
    public static func decode<State: Codable & Sendable>(
        _ data: Data, as type: State.Type, module: String, stateVersion: Int
    ) -> Result<Snapshot<State>, SnapshotRejection> {
        let json: Data
        switch document(of: data) {
        case .success(let document): json = document
        case .failure(let rejection): return .failure(rejection)
        }
        let header: SnapshotHeader
        do {
            header = try JSONDecoder().decode(SnapshotHeader.self, from: json)
        } catch {
            let what = (error as? DecodingError)?.readable ?? "\(error)"
            return .failure(SnapshotRejection("the snapshot is not readable JSON: \(what)"))
        }
        guard header.format == SnapshotDocument<State>.currentFormat else {
            return .failure(SnapshotRejection("the snapshot file format is \(header.format)"))
        }
        guard header.module == module else {
            return .failure(SnapshotRejection("the snapshot is of module \(header.module)"))
        }
        guard header.stateVersion == stateVersion else {
            return .failure(
                SnapshotRejection(
                    "the snapshot's state version is \(header.stateVersion); this build uses \(stateVersion)"))
        }
        do {
            let document = try JSONDecoder().decode(SnapshotDocument<State>.self, from: json)
            return .success(
                Snapshot(
                    module: document.module, stateVersion: document.stateVersion, position: document.position,
                    state: document.state))
        } catch {
            // The whole error: a reducer's state is nested, and its coding path says where.
            return .failure(SnapshotRejection("the snapshot's state does not decode: \(error)"))
        }
    }
}
