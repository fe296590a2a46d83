/// glibc's allocator controls, which `<malloc.h>` declares and the Glibc module does not export.
enum HeapMemory {
    /// `malloc_trim(3)`: returns the free pages of every arena to the system.
    static func releaseFreed() {
        _ = mallocTrim(0)
    }

    /// `mallopt(3)`: sets one of the allocator's parameters (`M_MMAP_THRESHOLD` is -3,
    /// `M_TRIM_THRESHOLD` -1).
    static func setOption(_ parameter: Int32, _ value: Int32) {
        _ = mallopt(parameter, value)
    }
}

@_silgen_name("malloc_trim")
private func mallocTrim(_ pad: Int) -> Int32

@_silgen_name("mallopt")
private func mallopt(_ parameter: Int32, _ value: Int32) -> Int32
