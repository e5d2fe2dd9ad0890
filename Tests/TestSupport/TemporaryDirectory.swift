import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A fresh directory under `/tmp`, removed with its contents by `remove()` or at `deinit`.
///
/// Always `/tmp`, not `$TMPDIR`: the bus socket's path must fit in `sun_path` (108 bytes).
package final class TemporaryDirectory {
    /// The directory's absolute path.
    package let path: String

    /// Creates the directory.
    ///
    /// - Parameter prefix: the start of its name.
    /// - Throws: `HarnessError` when `mkdtemp` fails.
    ///
    /// The corresponding C function is `mkdtemp`.
    package init(prefix: String) throws {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw HarnessError("Failed to create a temporary directory: \(String(cString: strerror(errno)))")
        }
        path = String(cString: made)
    }

    deinit {
        remove()
    }

    /// The path of `name` inside the directory.
    ///
    /// - Parameter name: a relative path.
    /// - Returns: the absolute path.
    package func file(_ name: String) -> String {
        "\(path)/\(name)"
    }

    /// Removes the directory and everything in it; harmless when repeated.
    package func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
