#if canImport(Glibc)
import Glibc
#endif
import ReachabilityCore

extension ReachabilityStatus {
    /// A short human description in the user's language: "Reachable via WiFi", "通过 Wi-Fi 连接".
    ///
    /// The language comes from the POSIX locale (`LC_ALL`, then `LC_MESSAGES`, then `LANG`, then
    /// the first entry of `LANGUAGE`): Simplified Chinese for `zh_CN`, `zh_SG` and `zh-Hans`,
    /// English otherwise. Use ``localizedDescription(language:)`` to choose explicitly.
    public var localizedDescription: String {
        localizedDescription(language: StatusLanguage.fromEnvironment().identifier)
    }

    /// A short human description in `language`.
    ///
    /// - Parameter language: a language tag or POSIX locale name: `"en"`, `"zh-Hans"`,
    ///   `"zh_CN.UTF-8"`… Languages without a translation get English.
    /// - Returns: the description, e.g. "Not Reachable".
    public func localizedDescription(language: String) -> String {
        switch StatusLanguage(tag: language) {
        case .english: englishDescription
        case .simplifiedChinese: simplifiedChineseDescription
        }
    }

    private var englishDescription: String {
        switch self {
        case .unknown: "Unknown"
        case .notReachable: "Not Reachable"
        case .reachableViaWWAN: "Reachable via WWAN"
        case .reachableViaWiFi: "Reachable via WiFi"
        case .reachableViaEthernet: "Reachable via Ethernet"
        case .reachableViaOther: "Reachable via Other Network"
        }
    }

    private var simplifiedChineseDescription: String {
        switch self {
        case .unknown: "未知"
        case .notReachable: "网络不可达"
        case .reachableViaWWAN: "通过蜂窝网络连接"
        case .reachableViaWiFi: "通过 Wi-Fi 连接"
        case .reachableViaEthernet: "通过以太网连接"
        case .reachableViaOther: "通过其他网络连接"
        }
    }
}

/// The languages the status descriptions are translated into.
enum StatusLanguage: Equatable {
    case english
    case simplifiedChinese

    /// The language's tag.
    var identifier: String {
        switch self {
        case .english: "en"
        case .simplifiedChinese: "zh-Hans"
        }
    }

    /// Maps a language tag or POSIX locale name to a translation: `zh`, `zh-Hans`, `zh-CN`,
    /// `zh_CN.UTF-8`, `zh_SG` are Simplified Chinese; `zh-Hant`, `zh_TW`, `zh_HK` and everything
    /// else English.
    init(tag: String) {
        let normalized = tag.split(separator: ".").first.map(String.init)?
            .replacingUnderscores().lowercased() ?? ""
        let parts = normalized.split(separator: "-")
        guard parts.first == "zh" else {
            self = .english
            return
        }
        let traditional: Set<Substring> = ["hant", "tw", "hk", "mo"]
        self = parts.dropFirst().contains(where: traditional.contains) ? .english : .simplifiedChinese
    }

    /// The language of the POSIX locale in the environment.
    static func fromEnvironment() -> StatusLanguage {
        for variable in ["LC_ALL", "LC_MESSAGES", "LANG"] {
            if let value = getenv(variable).map({ String(cString: $0) }), !value.isEmpty {
                if value == "C" || value == "POSIX" { return .english }
                return StatusLanguage(tag: value)
            }
        }
        if let list = getenv("LANGUAGE").map({ String(cString: $0) }), let first = list.split(separator: ":").first {
            return StatusLanguage(tag: String(first))
        }
        return .english
    }
}

private extension String {
    func replacingUnderscores() -> String {
        String(map { $0 == "_" ? "-" : $0 })
    }
}
