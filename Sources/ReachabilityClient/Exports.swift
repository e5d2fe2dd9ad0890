// The client library re-exports the shared types of ReachabilityCore, so that a program needs
// only `import ReachabilityClient`. The wire strings live in one table, in ReachabilityCore.
@_exported import enum ReachabilityCore.ReachabilityStatus
@_exported import struct ReachabilityCore.ReachabilitySnapshot
@_exported import enum ReachabilityCore.Transport
@_exported import struct ReachabilityCore.IPAddress
@_exported import enum ReachabilityCore.AddressFamily
@_exported import enum ReachabilityCore.Connectivity
@_exported import struct ReachabilityCore.NetworkInterface
@_exported import enum ReachabilityCore.OperationalState
@_exported import enum ReachabilityCore.DNSReadiness
