#if canImport(Glibc)
    import Glibc
#endif

/// Whether a path names nothing at all, as opposed to something that cannot be read: what a
/// caller needs when absence is a normal answer (no record yet, a log rotated away) but any
/// other failure to read must be said.
public enum FilePresence {
    /// True only when nothing is at `path` (`ENOENT`); false for a file there but unreadable
    /// (its mode, a directory in its place, an I/O error).
    public static func isMissing(_ path: String) -> Bool {
        access(path, F_OK) != 0 && errno == ENOENT
    }
}
