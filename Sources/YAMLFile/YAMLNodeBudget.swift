// libyaml, as Yams builds it: the only place where a document's aliases can be counted before
// Yams composes (and, for mapping keys, hashes) what they expand to.
import CYaml

/// How many nodes a YAML document has once its aliases are expanded, and how deep it nests,
/// counted from libyaml's event stream before anything is composed.
///
/// Yams resolves an alias by reusing the anchored node, which is cheap to hold but not to
/// walk: a "billion laughs" document of a few hundred bytes expands to billions of nodes for
/// any reader that visits them (and Yams itself hashes mapping keys that are aliases while
/// composing). The budget counts each alias as the size of what it names, so such a document is
/// refused after reading its few hundred bytes, in memory proportional to its anchors. Nesting
/// is bounded as well: composing and reading recurse once per level.
struct YAMLNodeBudget {
    let maximumNodes: Int
    let maximumDepth: Int

    /// Why a document is over the budget, and the line (1-based) where that became clear.
    struct Excess: Error {
        let line: Int
        let problem: String
    }

    /// Throws ``Excess`` if `text` expands to more than `maximumNodes` nodes or nests deeper
    /// than `maximumDepth`. Invalid YAML passes: Yams reports it, with its line, when it composes.
    func check(_ text: String) throws(Excess) {
        var bytes = Array(text.utf8)
        if bytes.isEmpty { return }
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else { return }
        defer { yaml_parser_delete(&parser) }
        try bytes.withUnsafeMutableBufferPointer { (buffer) throws(Excess) in
            yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING)
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            try count(&parser)
        }
    }

    private func count(_ parser: inout yaml_parser_t) throws(Excess) {
        /// Nodes each anchor expands to, by name; a later anchor of the same name replaces it.
        var anchored: [String: Int] = [:]
        /// Open collections: their anchor and the node count when they opened.
        var open: [(anchor: String?, countAtStart: Int)] = []
        var nodes = 0
        while true {
            var event = yaml_event_t()
            guard yaml_parser_parse(&parser, &event) == 1 else { return }
            defer { yaml_event_delete(&event) }
            let line = Int(event.start_mark.line) + 1
            switch event.type {
            case YAML_STREAM_END_EVENT:
                return
            case YAML_SCALAR_EVENT:
                nodes += 1
                if let anchor = Self.name(event.data.scalar.anchor) { anchored[anchor] = 1 }
            case YAML_ALIAS_EVENT:
                // An undefined alias counts as one node; Yams refuses it when it composes.
                nodes += Self.name(event.data.alias.anchor).flatMap { anchored[$0] } ?? 1
            case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
                nodes += 1
                let anchor =
                    event.type == YAML_SEQUENCE_START_EVENT
                    ? Self.name(event.data.sequence_start.anchor) : Self.name(event.data.mapping_start.anchor)
                open.append((anchor, nodes))
                guard open.count <= maximumDepth else {
                    throw Excess(line: line, problem: "nests deeper than \(maximumDepth) levels")
                }
            case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                guard let closed = open.popLast() else { continue }
                if let anchor = closed.anchor { anchored[anchor] = nodes - closed.countAtStart + 1 }
            default:
                continue
            }
            guard nodes <= maximumNodes else {
                throw Excess(
                    line: line,
                    problem: "expands to more than \(maximumNodes) nodes once its aliases are expanded "
                        + "(a document that refers to its anchors this often is refused)")
            }
        }
    }

    private static func name(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        pointer.map { String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self)) }
    }
}
