import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// One D-Bus interface from introspection XML, reduced to what a client depends on, in a form
/// that compares as sets: properties, methods and signals with their arguments.
///
/// Defaults are made explicit so that equivalent texts compare equal: a method argument without
/// `direction` is `in`, a signal argument is `out`, and a property without the
/// `org.freedesktop.DBus.Property.EmitsChangedSignal` annotation inherits the interface's, else
/// `true` (sd-bus writes the annotation only when it is not `true`).
package struct InterfaceDescription: Equatable {
    /// A property: name, type signature, access and how changes are announced.
    package struct Property: Hashable, CustomStringConvertible {
        package var name: String
        package var type: String
        package var access: String
        package var emitsChangedSignal: String

        package var description: String { "property \(name) \(type) \(access) emits-change=\(emitsChangedSignal)" }
    }

    /// An argument of a method or signal.
    package struct Argument: Hashable, CustomStringConvertible {
        package var name: String?
        package var type: String
        package var direction: String

        package var description: String { "\(direction) \(type) \(name ?? "<unnamed>")" }
    }

    /// A method or a signal with its arguments, in order, and its annotations (sd-bus writes
    /// one for a method an unprivileged caller may not call, `org.freedesktop.systemd1.Privileged`).
    package struct Member: Hashable, CustomStringConvertible {
        package var name: String
        package var arguments: [Argument]
        package var annotations: [String: String]

        package var description: String {
            "\(name)(\(arguments.map(\.description).joined(separator: ", ")))"
                + annotations.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
        }
    }

    /// The interface's name.
    package var name: String
    /// Its properties.
    package var properties: Set<Property>
    /// Its properties' names, in the document's order (`GetAll` and introspection list them so).
    package var propertyOrder: [String]
    /// Its methods.
    package var methods: Set<Member>
    /// Its signals.
    package var signals: Set<Member>
    /// Its methods' and then its signals' names, in the document's order.
    package var memberOrder: [String]

    /// Parses one interface out of introspection XML.
    ///
    /// - Parameters:
    ///   - xml: a `<node>` document.
    ///   - interfaceName: the interface to extract.
    /// - Throws: `HarnessError` when the text is not XML or lacks the interface.
    package init(xml: String, interface interfaceName: String) throws {
        let document: XMLDocument
        do {
            document = try XMLDocument(xmlString: xml, options: [])
        } catch {
            throw HarnessError("Not introspection XML (\(error)): \(xml)")
        }
        guard let interface = try document.nodes(forXPath: "/node/interface[@name='\(interfaceName)']").first as? XMLElement else {
            throw HarnessError("No interface \(interfaceName) in: \(xml)")
        }
        let interfaceEmits = Self.annotation("org.freedesktop.DBus.Property.EmitsChangedSignal", of: interface)
        name = interfaceName
        propertyOrder = interface.elements(forName: "property").map { $0.attribute(forName: "name")?.stringValue ?? "" }
        properties = Set(interface.elements(forName: "property").map { element in
            Property(
                name: element.attribute(forName: "name")?.stringValue ?? "",
                type: element.attribute(forName: "type")?.stringValue ?? "",
                access: element.attribute(forName: "access")?.stringValue ?? "",
                emitsChangedSignal: Self.annotation("org.freedesktop.DBus.Property.EmitsChangedSignal", of: element)
                    ?? interfaceEmits ?? "true"
            )
        })
        methods = Set(interface.elements(forName: "method").map { Self.member($0, defaultDirection: "in") })
        signals = Set(interface.elements(forName: "signal").map { Self.member($0, defaultDirection: "out") })
        memberOrder = (interface.elements(forName: "method") + interface.elements(forName: "signal")).map { $0.attribute(forName: "name")?.stringValue ?? "" }
    }

    /// The differences from `other`, one line each, prefixed `-` (only here) or `+` (only there).
    ///
    /// - Parameter other: the description to compare with.
    /// - Returns: the differing lines, sorted; empty when equal.
    package func differences(from other: InterfaceDescription) -> [String] {
        func lines<T: CustomStringConvertible & Hashable>(_ mine: Set<T>, _ theirs: Set<T>, _ kind: String) -> [String] {
            mine.subtracting(theirs).map { "- \(kind) \($0)" } + theirs.subtracting(mine).map { "+ \(kind) \($0)" }
        }
        return (lines(properties, other.properties, "")
            + lines(methods, other.methods, "method")
            + lines(signals, other.signals, "signal")).sorted()
    }

    private static func member(_ element: XMLElement, defaultDirection: String) -> Member {
        Member(
            name: element.attribute(forName: "name")?.stringValue ?? "",
            arguments: element.elements(forName: "arg").map { argument in
                Argument(
                    name: argument.attribute(forName: "name")?.stringValue,
                    type: argument.attribute(forName: "type")?.stringValue ?? "",
                    direction: argument.attribute(forName: "direction")?.stringValue ?? defaultDirection
                )
            },
            annotations: Dictionary(
                element.elements(forName: "annotation").map { ($0.attribute(forName: "name")?.stringValue ?? "", $0.attribute(forName: "value")?.stringValue ?? "") },
                uniquingKeysWith: { first, _ in first }
            )
        )
    }

    private static func annotation(_ name: String, of element: XMLElement) -> String? {
        element.elements(forName: "annotation")
            .first { $0.attribute(forName: "name")?.stringValue == name }?
            .attribute(forName: "value")?.stringValue
    }
}
