import ReachabilityBus
import ReachabilityCore

// `CaptivePortalSession` in its bus form (`a{sv}`), written by the daemon, read by the client.

extension CaptivePortalSession {
    /// The session as the property's dictionary: only the keys the API gave.
    public var busDictionary: [String: BusValue] {
        var dictionary: [String: BusValue] = [:]
        dictionary[Key.secondsRemaining.rawValue] = secondsRemaining.map(BusValue.unsignedInteger)
        dictionary[Key.bytesRemaining.rawValue] = bytesRemaining.map(BusValue.unsignedInteger)
        dictionary[Key.venueInfoURL.rawValue] = venueInfoURL.map(BusValue.string)
        dictionary[Key.canExtendSession.rawValue] = canExtendSession.map(BusValue.boolean)
        return dictionary
    }

    /// The session the property's value describes: a key missing or of another type is left
    /// out (a count may come as `u` from JSON, ``BusValue/init(json:)``), keys it does not know
    /// are ignored; a value that is no dictionary describes none.
    public init(busValue value: BusValue) {
        guard case .dictionary(let dictionary) = value else {
            self.init()
            return
        }
        func count(_ key: Key) -> UInt64? {
            switch dictionary[key.rawValue] {
            case .unsignedInteger(let number)?: number
            case .unsigned32(let number)?: UInt64(number)
            default: nil
            }
        }
        self.init(
            secondsRemaining: count(.secondsRemaining), bytesRemaining: count(.bytesRemaining),
            venueInfoURL: dictionary[Key.venueInfoURL.rawValue]?.string, canExtendSession: dictionary[Key.canExtendSession.rawValue]?.boolean
        )
    }
}
