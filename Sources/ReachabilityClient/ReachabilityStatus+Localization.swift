#if canImport(Glibc)
import Glibc
#endif
import ReachabilityCore
import Synchronization
import SystemSupport

extension ReachabilityStatus: DescribedInLanguages {
    /// "Reachable via WiFi": the English description, also the key of the translation tables.
    public var englishDescription: String {
        switch self {
        case .unknown: "Unknown"
        case .notReachable: "Not Reachable"
        case .reachableViaWWAN: "Reachable via WWAN"
        case .reachableViaWiFi: "Reachable via WiFi"
        case .reachableViaEthernet: "Reachable via Ethernet"
        case .reachableViaOther: "Reachable via Other Network"
        }
    }

    /// "通过 Wi-Fi 连接": the Simplified Chinese description.
    public var simplifiedChineseDescription: String {
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

extension Connectivity: DescribedInLanguages {
    /// "Limited Connectivity": the English description, also the key of the translation tables.
    public var englishDescription: String {
        switch self {
        case .unknown: "Unknown"
        case .none: "No Connectivity"
        case .limited: "Limited Connectivity"
        case .portal: "Captive Portal"
        case .full: "Full Connectivity"
        }
    }

    /// "连接受限": the Simplified Chinese description.
    public var simplifiedChineseDescription: String {
        switch self {
        case .unknown: "未知"
        case .none: "无网络连接"
        case .limited: "连接受限"
        case .portal: "需要网页登录"
        case .full: "已连接互联网"
        }
    }
}

/// A value with a short human description in the user's language (``ReachabilityStatus``,
/// ``Connectivity``): English and Simplified Chinese compiled in (the tables above are their one
/// place), and any other language from a `Localizable.strings` table installed beside them (see
/// ``LocalizationTables``), keyed by the English text.
public protocol DescribedInLanguages {
    /// The English description, also the key of the translation tables.
    var englishDescription: String { get }
    /// The Simplified Chinese description.
    var simplifiedChineseDescription: String { get }
}

extension DescribedInLanguages {
    /// A short human description in the user's language: "Reachable via WiFi", "通过 Wi-Fi 连接".
    ///
    /// The language comes from the POSIX locale (`LC_ALL`, then `LC_MESSAGES`, then `LANG`, then
    /// the first entry of `LANGUAGE`). Use ``localizedDescription(language:)`` to choose explicitly.
    public var localizedDescription: String {
        localizedDescription(language: StatusLanguage.environmentTag())
    }

    /// A short human description in `language`.
    ///
    /// An installed table (`<language>.lproj/Localizable.strings`, keyed by the English text:
    /// see ``LocalizationTables``) wins; else English and Simplified Chinese are compiled in;
    /// other languages fall back to English.
    ///
    /// - Parameter language: a language tag or POSIX locale name: `"en"`, `"zh-Hans"`,
    ///   `"zh_CN.UTF-8"`… Languages without a translation get English.
    /// - Returns: the description, e.g. "Not Reachable".
    public func localizedDescription(language: String) -> String {
        for directory in StatusLanguage.localizationDirectories(for: language) {
            if let text = LocalizationTables.table(directory)?[englishDescription] { return text }
        }
        return compiledDescription(language: language)
    }

    /// The compiled-in description: Simplified Chinese or English.
    func compiledDescription(language: String) -> String {
        switch StatusLanguage(tag: language) {
        case .english: englishDescription
        case .simplifiedChinese: simplifiedChineseDescription
        }
    }
}

/// The languages the status descriptions are translated into.
enum StatusLanguage: Equatable {
    case english
    case simplifiedChinese

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

    /// The language of the POSIX locale in the environment, as written there ("en" for C/POSIX).
    static func environmentTag() -> String {
        for variable in ["LC_ALL", "LC_MESSAGES", "LANG"] {
            if let value = getenv(variable).map({ String(cString: $0) }), !value.isEmpty {
                return value == "C" || value == "POSIX" || value.hasPrefix("C.") ? "en" : value
            }
        }
        if let list = getenv("LANGUAGE").map({ String(cString: $0) }), let first = list.split(separator: ":").first {
            return String(first)
        }
        return "en"
    }

    /// The `.lproj` directory names (as SwiftPM writes them, lower case) to try for a tag, most
    /// specific first: "fr_CA.UTF-8" → ["fr-ca", "fr"]; Chinese maps to its script,
    /// "zh_CN" → ["zh-hans"], "zh_TW" → ["zh-hant"].
    static func localizationDirectories(for tag: String) -> [String] {
        let base = tag.split(separator: ".").first.map(String.init) ?? ""
        let normalized = (base.split(separator: "@").first.map(String.init) ?? "").replacingUnderscores().lowercased()
        let parts = normalized.split(separator: "-").map(String.init)
        guard let language = parts.first, !language.isEmpty else { return [] }
        if language == "zh" {
            return [StatusLanguage(tag: tag) == .simplifiedChinese ? "zh-hans" : "zh-hant"]
        }
        return parts.count > 1 ? [normalized, language] : [language]
    }
}

/// Translation tables installed for languages beyond the compiled-in ones, by an administrator
/// or a translator: `<language>.lproj/Localizable.strings` in
/// `/usr/share/reachabilityd/reachabilityd_ReachabilityClient.resources/` (or in a directory of
/// that name beside the executable), `"Not Reachable" = "…";` per description. The package
/// ships none: its languages are compiled in. Loaded once per language on first use. Read with plain system calls (no Foundation, so
/// that a service linking the client library links no ICU). Never traps: without the
/// directory every lookup is nil and the compiled-in languages answer.
enum LocalizationTables {
    /// The directory's name, as SwiftPM would name the target's resource bundle.
    static let bundleName = "reachabilityd_ReachabilityClient.resources"

    private static let cache = Mutex<[String: [String: String]]>([:])

    /// The directory: beside the executable, else in `/usr/share/reachabilityd/`.
    static let bundlePath: String? = {
        var candidates: [String] = []
        if let executable = executablePath(), let slash = executable.lastIndex(of: "/") {
            candidates.append("\(executable[..<slash])/\(bundleName)")
        }
        candidates.append("/usr/share/reachabilityd/\(bundleName)")
        return candidates.first { access($0, F_OK) == 0 }
    }()

    /// The table of `<directory>.lproj/Localizable.strings`, or nil when there is none.
    static func table(_ directory: String) -> [String: String]? {
        guard let bundlePath else { return nil }
        if let cached = cache.withLock({ $0[directory] }) { return cached.isEmpty ? nil : cached }
        let table = readSmallFile("\(bundlePath)/\(directory).lproj/Localizable.strings").map(StringsFile.parse) ?? [:]
        cache.withLock { $0[directory] = table }
        return table.isEmpty ? nil : table
    }

    /// The running executable's path (`/proc/self/exe`).
    /// The corresponding C function is `readlink`.
    private static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// The `.strings` format: `"key" = "value";` pairs, `/* */` and `//` comments, backslash escapes.
enum StringsFile {
    /// Parses `text`; malformed parts end the parse with what was read so far.
    static func parse(_ text: String) -> [String: String] {
        var table: [String: String] = [:]
        var scalars = Array(text.unicodeScalars)[...]
        func skipSpaceAndComments() {
            while let first = scalars.first {
                if first.properties.isWhitespace {
                    scalars = scalars.dropFirst()
                } else if scalars.starts(with: "/*".unicodeScalars) {
                    guard let end = scalars.indices.first(where: { scalars[$0...].starts(with: "*/".unicodeScalars) }) else {
                        scalars = []
                        return
                    }
                    scalars = scalars[(end + 2)...]
                } else if scalars.starts(with: "//".unicodeScalars) {
                    scalars = scalars.drop { $0 != "\n" }
                } else {
                    return
                }
            }
        }
        func quoted() -> String? {
            guard scalars.first == "\"" else { return nil }
            scalars = scalars.dropFirst()
            var result = String.UnicodeScalarView()
            while let scalar = scalars.first {
                scalars = scalars.dropFirst()
                switch scalar {
                case "\"":
                    return String(result)
                case "\\":
                    guard let escaped = scalars.first else { return nil }
                    scalars = scalars.dropFirst()
                    result.append(escaped == "n" ? "\n" : escaped == "t" ? "\t" : escaped)
                default:
                    result.append(scalar)
                }
            }
            return nil
        }
        while true {
            skipSpaceAndComments()
            guard let key = quoted() else { return table }
            skipSpaceAndComments()
            guard scalars.first == "=" else { return table }
            scalars = scalars.dropFirst()
            skipSpaceAndComments()
            guard let value = quoted() else { return table }
            skipSpaceAndComments()
            guard scalars.first == ";" else { return table }
            scalars = scalars.dropFirst()
            table[key] = value
        }
    }
}

private extension String {
    func replacingUnderscores() -> String {
        String(map { $0 == "_" ? "-" : $0 })
    }
}
