// The address types live in NetworkTypes, under both RTNetlink and this module; re-exported
// so that `import ReachabilityCore` keeps giving IPAddress, AddressFamily, AddressScope and
// InterfaceIndex.
@_exported import NetworkTypes
