/// The release of reachabilityd's daemon and tools: what `reachabilityd --version` and
/// `reachabilityctl --version` print, the `version` label of `reachabilityd_build_info` and
/// Varlink's `GetInfo`. The one copy in the sources; debian/changelog's newest entry names the
/// same release (`ReleaseVersionTests` compares them), so a package bump without it fails.
package enum ReleaseVersion {
    /// The version, as debian/changelog's newest entry has it (upstream part).
    package static let current = "0.1.0"
}
