// The command lines' grammar, reachabilityd's and reachabilityctl's: a small parser of our own
// instead of swift-argument-parser, which links Foundation's Essentials into a static binary
// (about a quarter of reachabilityctl, and twice the daemon's resident size).

/// A usage error: the message is printed with the subcommand's usage, and the exit status is 64.
package struct UsageError: Error {
    /// One sentence, e.g. "Unknown option '--jsn'."
    package let message: String

    /// A usage error saying `message`.
    package init(message: String) {
        self.message = message
    }
}

/// One option of a subcommand: a flag (`--json`) or an option with a value (`--timeout 5`).
package struct OptionSpec: Sendable {
    /// The name without dashes: "json", "timeout".
    package let name: String
    /// The value's name in help ("seconds"); nil for a flag.
    package let valueName: String?
    /// One line of help.
    package let help: String
    /// The default, shown in help.
    package var defaultValue: String?
    /// For an option whose value may be left out (`--dns` or `--dns answering`): the value it
    /// then has; nil for an option that needs its value.
    package var impliedValue: String?
    /// The values such an option takes: only one of them, as the next argument, is its value.
    package var choices: [String] = []

    /// A flag.
    package static func flag(_ name: String, _ help: String) -> OptionSpec {
        OptionSpec(name: name, valueName: nil, help: help)
    }

    /// An option with a value.
    package static func value(_ name: String, _ valueName: String, _ help: String, default defaultValue: String? = nil) -> OptionSpec {
        OptionSpec(name: name, valueName: valueName, help: help, defaultValue: defaultValue)
    }

    /// An option whose value may be left out: `--NAME` alone means `implied`; `--NAME VALUE` or
    /// `--NAME=VALUE` gives one of `choices`.
    package static func optionalValue(_ name: String, _ valueName: String, _ help: String, implied: String, choices: [String]) -> OptionSpec {
        OptionSpec(name: name, valueName: valueName, help: help, impliedValue: implied, choices: choices)
    }

    /// "--timeout <seconds>", "--dns [<level>]" or "--json".
    package var synopsis: String {
        guard let valueName else { return "--\(name)" }
        return impliedValue == nil ? "--\(name) <\(valueName)>" : "--\(name) [<\(valueName)>]"
    }
}

/// A command's (or a subcommand's) grammar and help.
package struct CommandSpec: Sendable {
    /// The program: "reachabilityctl".
    package let program: String
    /// The subcommand, "status"; "" for a program without subcommands.
    package let name: String
    /// One line for the subcommand list and OVERVIEW.
    package let abstract: String
    /// More text for `--help`, ending with the exit statuses.
    package let discussion: String
    /// The options it takes.
    package let options: [OptionSpec]
    /// Its one positional argument (name and help), if it takes one.
    package var positional: (name: String, help: String)?
    /// Whether the positional argument may be left out (the command then checks what it says).
    package var isPositionalOptional: Bool

    /// A grammar.
    package init(
        program: String, name: String, abstract: String, discussion: String, options: [OptionSpec], positional: (name: String, help: String)? = nil,
        isPositionalOptional: Bool = false
    ) {
        self.program = program
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.options = options
        self.positional = positional
        self.isPositionalOptional = isPositionalOptional
    }

    /// The usage line: "reachabilityctl check <host> [--json] …" ("[<host>]" when it may be left out).
    package var usage: String {
        let argument = positional.map { isPositionalOptional ? ["[<\($0.name)>]"] : ["<\($0.name)>"] } ?? []
        return ([program] + (name.isEmpty ? [] : [name]) + argument + options.map { "[\($0.synopsis)]" }).joined(separator: " ")
    }

    /// The text of `--help`.
    package var help: String {
        var lines = ["OVERVIEW: \(abstract)", "", discussion, "", "USAGE: \(usage)", ""]
        if let positional {
            lines += ["ARGUMENTS:", Self.row("<\(positional.name)>", positional.help), ""]
        }
        lines.append("OPTIONS:")
        for option in options {
            lines.append(Self.row(option.synopsis, option.help + (option.defaultValue.map { " (default: \($0))" } ?? "")))
        }
        lines.append(Self.row("-h, --help", "Show help information."))
        return lines.joined(separator: "\n")
    }

    /// "  --json                  Print …": the name column 24 wide, longer names on a line of their own.
    package static func row(_ name: String, _ help: String) -> String {
        let column = 24
        let indented = "  " + name
        return indented.count < column
            ? indented + String(repeating: " ", count: column - indented.count) + help
            : indented + "\n" + String(repeating: " ", count: column) + help
    }

    /// Parses `arguments` (after the subcommand's name).
    ///
    /// - Returns: what was given, or nil when help was asked for.
    /// - Throws: ``UsageError`` for an unknown option, a missing value or a misplaced argument.
    package func parse(_ arguments: [String]) throws(UsageError) -> ParsedArguments? {
        var parsed = ParsedArguments()
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            if argument == "--help" || argument == "-h" { return nil }
            guard argument.hasPrefix("--"), argument.count > 2 else {
                guard positional != nil, parsed.positional == nil, !argument.hasPrefix("-") || argument == "-" else {
                    throw UsageError(message: argument.hasPrefix("-") ? "Unknown option '\(argument)'." : "Unexpected argument '\(argument)'.")
                }
                parsed.positional = argument
                continue
            }
            let body = argument.dropFirst(2)
            let name = String(body.prefix { $0 != "=" })
            guard let option = options.first(where: { $0.name == name }) else { throw UsageError(message: "Unknown option '--\(name)'.") }
            if option.valueName == nil {
                guard !body.contains("=") else { throw UsageError(message: "'--\(name)' takes no value.") }
                parsed.flags.insert(name)
            } else if let equals = body.firstIndex(of: "=") {
                parsed.values[name] = String(body[body.index(after: equals)...])
            } else if let implied = option.impliedValue {
                // The next argument is the value only when it is one of the option's values.
                if let next = remaining.first, option.choices.contains(next) {
                    parsed.values[name] = remaining.removeFirst()
                } else {
                    parsed.values[name] = implied
                }
            } else {
                // The next argument is the value, whatever it looks like: "--timeout -1" is a
                // negative number, to be refused as such, not a missing value.
                guard let value = remaining.popFirst() else { throw UsageError(message: "Missing value for '\(option.synopsis)'.") }
                parsed.values[name] = value
            }
        }
        if let positional, !isPositionalOptional, parsed.positional == nil { throw UsageError(message: "Missing expected argument '<\(positional.name)>'.") }
        return parsed
    }
}

/// What a command line gave: flags, option values (the last of repeated ones) and the positional argument.
package struct ParsedArguments: Sendable {
    /// The flags given.
    package var flags: Set<String> = []
    /// Option values by name.
    package var values: [String: String] = [:]
    /// The positional argument.
    package var positional: String?

    /// Whether flag `name` was given.
    package func flag(_ name: String) -> Bool {
        flags.contains(name)
    }

    /// The most seconds an option takes: 4294967295 (`UInt32.max`, about 136 years), the
    /// largest "for ever" scripts write. Any such number of seconds fits a `Duration`, and as
    /// milliseconds or tenths an `Int64`; 1e19 seconds fits neither (a trap, not an error).
    package static let maximumSeconds = Double(UInt32.max)

    /// Option `name` as seconds: a number from 0 to ``maximumSeconds`` (`default` when absent).
    ///
    /// - Throws: ``UsageError`` for anything else: not a number, NaN, infinite, negative or too large.
    package func seconds(_ name: String, default defaultValue: Double) throws(UsageError) -> Double {
        guard let text = values[name] else { return defaultValue }
        guard let seconds = Double(text), seconds >= 0, seconds <= Self.maximumSeconds else {
            throw UsageError(message: "The value '\(text)' is invalid for '--\(name) <seconds>': give a number of seconds from 0 to \(UInt32.max).")
        }
        return seconds + 0  // -0 is 0
    }

    /// Option `name` as a whole number in `range` (nil when absent).
    ///
    /// - Throws: ``UsageError`` for anything else: not a whole number, or out of `range`.
    package func integer(_ name: String, in range: ClosedRange<Int64>) throws(UsageError) -> Int64? {
        guard let text = values[name] else { return nil }
        guard let number = Int64(text), range.contains(number) else {
            throw UsageError(message: "The value '\(text)' is invalid for '--\(name)': give a whole number from \(range.lowerBound) to \(range.upperBound).")
        }
        return number
    }

    /// Option `name` as one of `allowed`, by its wire string (nil when absent).
    package func choice<Choice: RawRepresentable & Equatable>(_ name: String, among allowed: [Choice]) throws(UsageError) -> Choice? where Choice.RawValue == String {
        guard let text = values[name] else { return nil }
        guard let choice = allowed.first(where: { $0.rawValue == text }) else {
            throw UsageError(message: "The value '\(text)' is invalid for '--\(name)': give one of \(allowed.map(\.rawValue).joined(separator: ", ")).")
        }
        return choice
    }
}
