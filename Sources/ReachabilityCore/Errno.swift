#if canImport(Glibc)
import Glibc
#endif

/// An error number (positive `errno`) the kernel answered a question with, as it crosses from
/// the kernel layers (``RouteLookup``, ``SourceSelection``) into the rule. Its text is the
/// number, as in "route lookup failed with errno 5".
public struct Errno: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The kernel's number.
    public let rawValue: Int32

    /// The error numbered `rawValue`.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// The error numbered `code`, e.g. `Errno(ENETUNREACH)`.
    public init(_ code: Int32) {
        rawValue = code
    }

    /// The number.
    public var description: String { String(rawValue) }

    /// `ENETUNREACH`: no route at all.
    public static let networkUnreachable = Errno(ENETUNREACH)
    /// `EHOSTUNREACH`: an unreachable route.
    public static let noRouteToHost = Errno(EHOSTUNREACH)
    /// `EACCES`: a prohibit route.
    public static let permissionDenied = Errno(EACCES)
    /// `EINVAL`: a blackhole route, or a link-local destination without a zone.
    public static let invalidArgument = Errno(EINVAL)
    /// `EAGAIN`: a throw route past the last table.
    public static let resourceTemporarilyUnavailable = Errno(EAGAIN)
    /// `EADDRNOTAVAIL`: no source address to use.
    public static let addressNotAvailable = Errno(EADDRNOTAVAIL)
    /// `ENODEV`: a zone that names no interface.
    public static let noSuchDevice = Errno(ENODEV)
    /// `EBADF`: the question could not be asked (the socket is closed).
    public static let badFileDescriptor = Errno(EBADF)
}
