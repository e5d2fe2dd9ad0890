import CProcessShims

/// Gives the heap's free pages back to the kernel after a change that freed much of it
/// (docs/benchmarks.md, "Private memory", with the figures). glibc gives back only the free top
/// of an arena by itself; pages freed in the middle of one stay the daemon's anonymous memory
/// (after many links added and deleted again), and `malloc_trim` gives back part of them.
enum HeapTrim {
    /// Free bytes in the heap (`mallinfo2`'s `fordblks`, all arenas) above which a change trims.
    static let freeBytesThreshold = 256 * 1024

    /// Trims when the heap holds more than ``freeBytesThreshold`` free bytes; otherwise only
    /// reads the free lists' totals (microseconds).
    static func afterChange() {
        guard mallinfo2().fordblks > freeBytesThreshold else { return }
        _ = malloc_trim(0)
    }
}
