import CSystemd
import ReachabilityCore
import SystemSupport

/// The key of ``NetworkIdentity``: this machine's app-specific id for
/// ``NetworkIdentity/applicationID`` (`sd_id128_get_machine_app_specific`: HMAC-SHA256 of
/// /etc/machine-id keyed by the app id, so the key reveals nothing of the machine id and no other
/// application's id derives from it).
public enum MachineNetworkKey {
    /// The key; empty, with a warning, when the machine has no id (`NetworkID` is then "").
    ///
    /// The corresponding C function is `sd_id128_get_machine_app_specific`.
    public static func read() -> [UInt8] {
        var application = sd_id128_t()
        withUnsafeMutableBytes(of: &application.bytes) { bytes in
            for (index, byte) in NetworkIdentity.applicationID.enumerated() { bytes[index] = byte }
        }
        var key = sd_id128_t()
        do {
            _ = try sdCall("read the machine's app-specific id") { sd_id128_get_machine_app_specific(application, &key) }
        } catch {
            Log.warning("\(error); NetworkID will be empty.")
            return []
        }
        return withUnsafeBytes(of: key.bytes) { Array($0) }
    }
}
