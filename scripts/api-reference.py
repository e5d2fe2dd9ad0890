#!/usr/bin/env python3
"""The API reference, made from the interface files' doc comments: their one description.

    scripts/api-reference.py           write docs/api-reference.md and reachabilityd(8)'s API part
    scripts/api-reference.py --check   change nothing; exit 1, with a diff, when a written file
                                       differs from what the interface files give now, or when
                                       README's API table names what they do not declare

`make reference` runs the first, `make unit` and `make check` the second. Python 3 standard
library only (ElementTree keeps comments since 3.8).

Inputs, in dbus/:

- org.reachabilityd.Reachability1.xml: D-Bus introspection XML. The comment right before a
  <property>, <method> or <signal> is that member's description, the comment right before
  <interface> the interface's. An error is a comment of its own inside <interface>:
  "error NAME: description". Every member needs a description; a comment that describes
  nothing is a mistake. The bus name is Name= of the .service file beside the XML.
- org.reachabilityd.Reachability.varlink, when it exists: a Varlink interface description.
  Lines starting with "#" right above "interface NAME" are the interface's description, those
  right above a "type", "method" or "error" declaration that member's; a declaration runs from
  its keyword until its parentheses close (several lines if need be; "#" comments inside it,
  such as field comments, are left out). Comment lines followed by a blank line describe
  nothing and are left out.

Descriptions are plain text: line breaks and indentation are spaces, an empty line starts a
paragraph, `backticks` mark code. The interface's own member names (and its errors' names)
are set as code, so that the text needs no markup to show what it refers to.

Outputs: docs/api-reference.md (the whole file), and in man/reachabilityd.8 the lines between
BEGIN_MARK and END_MARK (the D-BUS INTERFACE section, and VARLINK INTERFACE when the Varlink
file exists); the rest of the man page is written by hand.
"""

import difflib
import re
import sys
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DBUS_XML = ROOT / "dbus/org.reachabilityd.Reachability1.xml"
VARLINK_IDL = ROOT / "dbus/org.reachabilityd.Reachability.varlink"
REFERENCE = ROOT / "docs/api-reference.md"
MAN_PAGE = ROOT / "man/reachabilityd.8"
README = ROOT / "README.md"
BEGIN_MARK = '.\\" BEGIN scripts/api-reference.py: generated from dbus/, edit the doc comments there'
END_MARK = '.\\" END scripts/api-reference.py'
EMITS_CHANGED = "org.freedesktop.DBus.Property.EmitsChangedSignal"


class InputError(Exception):
    """An interface file that does not describe every member, or that the script cannot read."""


@dataclass
class Member:
    """One property, method, signal, type or error, as both outputs show it."""

    kind: str  # property, method, signal, type, error
    name: str  # as code refers to it: Status, CheckAddress, org.reachabilityd.Error.Busy
    signature: str  # the part after the name: "s", "(s address) → (s status)", "(message: string)"
    description: str
    qualifier: str = ""  # how a property differs from the interface's usual ones, if it does


@dataclass
class Interface:
    """One interface of one protocol, its members in the file's order."""

    protocol: str  # D-Bus, Varlink
    name: str
    source: Path
    description: str
    preamble: list = field(default_factory=list)  # plain-text sentences before the description
    members: list = field(default_factory=list)
    usual_property: str = ""  # what most properties are (read-only, announced...), said once

    def of_kind(self, kind):
        return [member for member in self.members if member.kind == kind]


def comment_text(text):
    """A comment's text as paragraphs joined by blank lines, each on one line."""
    paragraphs = re.split(r"\n\s*\n", text.strip())
    return "\n\n".join(" ".join(paragraph.split()) for paragraph in paragraphs)


# D-Bus


def property_traits(element, interface_emits):
    access = {"read": "read-only", "readwrite": "read-write", "write": "write-only"}[element.get("access")]
    emits = interface_emits
    for annotation in element.findall("annotation"):
        if annotation.get("name") == EMITS_CHANGED:
            emits = annotation.get("value")
    announced = {
        "true": "announced in `PropertiesChanged` with its value",
        "invalidates": "announced in `PropertiesChanged` without its value",
        "const": "never changes",
        "false": "not announced",
    }[emits]
    return f"{access}, {announced}"


def arguments(element, direction):
    return ", ".join(
        " ".join(filter(None, (arg.get("type"), arg.get("name"))))
        for arg in element.findall("arg")
        if arg.get("direction", "in" if element.tag == "method" else "out") == direction
    )


def dbus_member(path, element, description, interface_emits):
    name = element.get("name")
    if element.tag == "property":
        return Member("property", name, element.get("type"), description, property_traits(element, interface_emits))
    if element.tag == "method":
        signature = f"({arguments(element, 'in')})"
        if element.find("arg[@direction='out']") is not None:
            signature += f" → ({arguments(element, 'out')})"
        return Member("method", name, signature, description)
    if element.tag == "signal":
        return Member("signal", name, f"({arguments(element, 'out')})", description)
    raise InputError(f"{path.name}: unknown element <{element.tag}>")


def read_dbus(path):
    builder = ElementTree.TreeBuilder(insert_comments=True)
    root = ElementTree.parse(path, ElementTree.XMLParser(target=builder)).getroot()
    service = path.with_suffix(".service")
    bus_name = re.search(r"^Name=(.+)$", service.read_text(), re.M).group(1) if service.exists() else None
    interfaces = []
    pending = None  # the comment waiting for the element it describes
    for child in root:
        if child.tag is ElementTree.Comment:
            pending = comment_text(child.text)
            continue
        if child.tag != "interface":
            pending = None
            continue
        if pending is None:
            raise InputError(f"{path.name}: interface {child.get('name')} has no description")
        interface = Interface("D-Bus", child.get("name"), path, pending)
        pending = None
        where = f"object `{root.get('name')}`" + (f", bus name `{bus_name}` on the system bus" if bus_name else "")
        interface.preamble = [f"Interface `{interface.name}`, {where}."]
        interface_emits = "true"
        for element in child:
            if element.tag is ElementTree.Comment:
                text = comment_text(element.text)
                error = re.fullmatch(r"error (\S+?): (.+)", text, re.S)
                if error:
                    interface.members.append(Member("error", error.group(1), "", error.group(2)))
                    continue
                if pending is not None:
                    raise InputError(f"{path.name}: a comment describes nothing: {pending[:60]}…")
                pending = text
                continue
            if element.tag == "annotation":
                if element.get("name") == EMITS_CHANGED:
                    interface_emits = element.get("value")
                continue
            if pending is None:
                raise InputError(f"{path.name}: {element.tag} {element.get('name')} has no description")
            interface.members.append(dbus_member(path, element, pending, interface_emits))
            pending = None
        if pending is not None:
            raise InputError(f"{path.name}: a comment describes nothing: {pending[:60]}…")
        properties = interface.of_kind("property")
        if properties:
            traits = [member.qualifier for member in properties]
            interface.usual_property = max(set(traits), key=traits.count)
            for member in properties:
                member.qualifier = "" if member.qualifier == interface.usual_property else member.qualifier
        interfaces.append(interface)
    return interfaces


# Varlink


def closed(keyword, text):
    """Whether a declaration's text is whole: a method has two groups, (in) -> (out), the rest one."""
    return text.count("(") == text.count(")") and text.count("(") >= (2 if keyword == "method" else 1)


def read_varlink(path):
    interface = None
    comments = []
    declaration = None  # (keyword, its lines so far without their comments, description)
    for number, line in enumerate(path.read_text().splitlines(), 1):
        stripped = line.strip()
        if declaration is not None:
            declaration[1].append(stripped.split("#", 1)[0])
            if closed(declaration[0], " ".join(declaration[1])):
                add_varlink_member(interface, declaration[0], " ".join(declaration[1]), declaration[2])
                declaration = None
            continue
        if stripped.startswith("#"):
            comments.append(stripped[1:])
            continue
        if not stripped:
            comments = []
            continue
        keyword, _, rest = stripped.partition(" ")
        description = comment_text("\n".join(comments))
        comments = []
        if keyword == "interface":
            if not description:
                raise InputError(f"{path.name}:{number}: interface {rest} has no description")
            interface = Interface("Varlink", rest.strip(), path, description)
            interface.preamble = [f"Interface `{interface.name}`."]
            continue
        if keyword not in ("type", "method", "error") or interface is None:
            raise InputError(f"{path.name}:{number}: cannot read: {stripped}")
        if not description:
            raise InputError(f"{path.name}:{number}: {keyword} has no description: {stripped}")
        declaration = (keyword, [stripped.split("#", 1)[0]], description)
        if closed(keyword, declaration[1][0]):
            add_varlink_member(interface, keyword, declaration[1][0], description)
            declaration = None
    if declaration is not None:
        raise InputError(f"{path.name}: the last declaration does not close its parentheses")
    if interface is None:
        raise InputError(f"{path.name}: no interface line")
    return [interface]


def add_varlink_member(interface, keyword, text, description):
    text = " ".join(text.split())
    text = re.sub(r"\(\s+", "(", re.sub(r"\s+\)", ")", re.sub(r"\s*,\s*", ", ", text)))
    text = re.sub(r"\)\s*->\s*\(", ") -> (", text)
    match = re.fullmatch(r"(type|method|error) (\w+)\s*(.*)", text)
    if not match:
        raise InputError(f"{interface.source.name}: cannot read: {text}")
    signature = match.group(3).replace("->", "→")
    if keyword != "method":
        signature = " " + signature
    interface.members.append(Member(keyword, match.group(2), signature, description))


# Text: code spans, and the interface's own names set as code


def spans(text, names):
    """The text as (is_code, piece) pairs: backticked spans, and the interface's names, as code."""
    pattern = re.compile(r"(?<![\w.\-\[/])(" + "|".join(sorted(map(re.escape, names), key=len, reverse=True)) + r")(?![\w\-\]=])")
    pieces = []
    for index, part in enumerate(re.split(r"`([^`]*)`", text)):
        if index % 2:
            pieces.append((True, part))
            continue
        position = 0
        for match in pattern.finditer(part) if names else ():
            pieces.append((False, part[position:match.start()]))
            pieces.append((True, match.group(1)))
            position = match.end()
        pieces.append((False, part[position:]))
    return [(code, piece) for code, piece in pieces if piece]


def full_name(interface, member):
    """The name as a program spells it: a Varlink error's is qualified by its interface's."""
    return f"{interface.name}.{member.name}" if interface.protocol == "Varlink" and member.kind == "error" else member.name


def referable_names(interface):
    names = {"PropertiesChanged"} if interface.protocol == "D-Bus" else set()
    for member in interface.members:
        names |= {member.name, full_name(interface, member)}
    return names


# Markdown


def markdown_text(text, names):
    out = []
    for code, piece in spans(text, names):
        out.append(f"`{piece}`" if code else re.sub(r"([\\*_<\[\]~])", r"\\\1", piece))
    return "".join(out)


def markdown_paragraphs(text, names):
    return [line for paragraph in text.split("\n\n") for line in (markdown_text(paragraph, names), "")]


def slug(heading):
    """GitHub's anchor for a heading."""
    return re.sub(r" ", "-", re.sub(r"[^\w\- ]", "", heading.lower()))


def heading(interface, member):
    return f"`{full_name(interface, member)}`" + (" (Varlink)" if interface.protocol == "Varlink" else "")


def markdown_signature(interface, member):
    if member.kind == "property":
        return f"Property `{member.signature}`" + (f", {member.qualifier}." if member.qualifier else ".")
    if not member.signature:
        return f"{member.kind.capitalize()}."
    return f"{member.kind.capitalize()} `{full_name(interface, member)}{member.signature}`."


KIND_TITLES = [("property", "Properties"), ("method", "Methods"), ("signal", "Signals"), ("type", "Types"), ("error", "Errors")]


def markdown(interfaces):
    sources = " and ".join(f"[`{i.source.relative_to(ROOT)}`](../{i.source.relative_to(ROOT)})" for i in interfaces)
    lines = [
        "# API reference",
        "",
        f"Generated by `scripts/api-reference.py` from the doc comments of {sources}:",
        "they are the one description of each member. Edit them, then run `make reference`, which",
        "rewrites this file and the API sections of reachabilityd(8); `make unit` fails while these",
        "differ from what the comments give.",
        "",
    ]
    for interface in interfaces:
        title = f"{interface.protocol} interface {interface.name}"
        index = ", ".join(f"[{heading(interface, member)}](#{slug(heading(interface, member))})" for member in interface.members)
        lines.append(f"- [{title}](#{slug(title)}): {index}")
    lines.append("")
    anchors = set()
    for interface in interfaces:
        names = referable_names(interface)
        lines += [f"## {interface.protocol} interface {interface.name}", ""]
        lines += [markdown_text(sentence, set()) for sentence in interface.preamble] + [""]
        lines += markdown_paragraphs(interface.description, names)
        for kind, title in KIND_TITLES:
            members = interface.of_kind(kind)
            if not members:
                continue
            lines += [f"### {title}", ""]
            if kind == "property" and interface.usual_property:
                lines += [f"Each one {interface.usual_property}, unless it says otherwise.", ""]
            for member in members:
                anchor = slug(heading(interface, member))
                if anchor in anchors:
                    raise InputError(f"two members with the anchor #{anchor}")
                anchors.add(anchor)
                lines += [f"#### {heading(interface, member)}", "", markdown_signature(interface, member), ""]
                lines += markdown_paragraphs(member.description, names)
    return "\n".join(lines[:-1]) + "\n"


# roff


ROFF_CHARACTERS = {
    "\\": "\\e", "-": "\\-", "→": "\\(->", "§": "\\(sc", "…": "\\&...",
    "—": "\\(em", "–": "\\(en", "×": "\\(mu", "≤": "\\(<=", "≥": "\\(>=",
}


def roff_escape(text):
    return "".join(ROFF_CHARACTERS.get(c, c if ord(c) < 128 else f"\\[u{ord(c):04X}]") for c in text)


def roff_line(text, names):
    """One line of text: code in bold, and a leading dot or quote kept from reading as a request."""
    line = "".join(f"\\fB{roff_escape(piece)}\\fR" if code else roff_escape(piece) for code, piece in spans(text, names))
    return "\\&" + line if line[:1] in (".", "'") else line


def roff_paragraphs(text, names, first_macro):
    out = []
    for index, paragraph in enumerate(text.split("\n\n")):
        if index or first_macro:
            out.append(first_macro if index == 0 else ".IP")
        out.append(roff_line(paragraph, names))
    return out


def roff(interfaces):
    # Left-aligned and unhyphenated: the text is full of names and wire strings that a reader
    # copies, and a hyphen inserted into reachable-via-wifi would read as part of it.
    lines = [BEGIN_MARK, ".ad l", ".nh"]
    for interface in interfaces:
        names = referable_names(interface)
        title = "D-BUS INTERFACE" if interface.protocol == "D-Bus" else "VARLINK INTERFACE"
        lines.append(f".SH {title}")
        lines += [roff_line(sentence, set()) for sentence in interface.preamble]
        if interface.protocol == "D-Bus":
            installed = f"/usr/share/dbus\\-1/interfaces/{interface.source.name}"
            lines.append(f"The introspection XML is installed as\n.IR {installed} .")
        lines += roff_paragraphs(interface.description, names, ".PP")
        for kind, title in KIND_TITLES:
            members = interface.of_kind(kind)
            if not members:
                continue
            lines.append(f".SS {title}")
            if kind == "property" and interface.usual_property:
                lines.append(roff_line(f"Each one {interface.usual_property}, unless it says otherwise.", set()))
            for member in members:
                name = full_name(interface, member)
                if member.kind == "property":
                    qualifier = f"; {roff_line(member.qualifier, set())}" if member.qualifier else ""
                    tag = f"\\fB{roff_escape(name)}\\fR ({roff_escape(member.signature)}{qualifier})"
                else:
                    tag = f"\\fB{roff_escape(name)}\\fR{roff_escape(member.signature)}"
                lines += [".TP", tag]
                lines += roff_paragraphs(member.description, names, "")
    lines += [".hy", ".ad b", END_MARK]
    return "\n".join(lines) + "\n"


def spliced_man_page(current, generated):
    begin, end = current.find(BEGIN_MARK), current.find(END_MARK)
    if begin < 0 or end < begin:
        raise InputError(f"{MAN_PAGE.relative_to(ROOT)}: no lines {BEGIN_MARK!r} … {END_MARK!r} to replace")
    return current[:begin] + generated + current[end + len(END_MARK) + 1:]


# README: its API table names only what the reference describes, as the reference writes it


def readme_mistakes(readme, interfaces):
    section = re.search(r"^## The D-Bus API.*?(?=^## )", readme, re.M | re.S)
    if not section:
        return ["README.md: no section \"## The D-Bus API\""]
    members = {}
    for interface in interfaces:
        for member in interface.members:
            members[slug(heading(interface, member))] = (interface, member)
    mistakes = []
    for row in re.findall(r"^\|(.+)\|\s*$", section.group(0), re.M):
        cells = [cell.strip() for cell in row.split("|")]
        if cells[0] == "Member" or set(cells[0]) <= set("-: "):
            continue
        links = re.findall(r"\[`([^`]+)`\]\(docs/api-reference\.md#([\w-]+)\)", cells[0])
        if not links:
            mistakes.append(f"README.md: the API table's row {cells[0]!r} links to no member of docs/api-reference.md")
        for name, anchor in links:
            if anchor not in members:
                mistakes.append(f"README.md: {name} links to #{anchor}, which docs/api-reference.md does not have")
                continue
            interface, member = members[anchor]
            if member.name != name:
                mistakes.append(f"README.md: #{anchor} is {member.name}, not {name}")
            kind = cells[1] if len(cells) > 1 else ""
            if kind != f"{member.kind} `{member.signature}`":
                mistakes.append(f"README.md: {name} is {member.kind} `{member.signature}`, not {kind!r}")
    if not re.search(r"^\|", section.group(0), re.M):
        mistakes.append("README.md: the D-Bus API section has no table")
    return mistakes


def main(arguments):
    check = arguments == ["--check"]
    if arguments not in ([], ["--check"]):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 64
    try:
        interfaces = read_dbus(DBUS_XML) + (read_varlink(VARLINK_IDL) if VARLINK_IDL.exists() else [])
        outputs = {REFERENCE: markdown(interfaces), MAN_PAGE: spliced_man_page(MAN_PAGE.read_text(), roff(interfaces))}
    except (InputError, OSError, ElementTree.ParseError) as error:
        print(f"api-reference: {error}", file=sys.stderr)
        return 1
    if not check:
        for path, text in outputs.items():
            if not path.exists() or path.read_text() != text:
                path.write_text(text)
                print(f"api-reference: wrote {path.relative_to(ROOT)}")
        return 0
    failed = False
    for path, text in outputs.items():
        current = path.read_text() if path.exists() else ""
        if current != text:
            failed = True
            name = str(path.relative_to(ROOT))
            diff = difflib.unified_diff(current.splitlines(True), text.splitlines(True), name, f"{name} (from dbus/)")
            sys.stdout.writelines(diff)
    if failed:
        print("api-reference: generated files differ from dbus/'s doc comments: run make reference", file=sys.stderr)
    for mistake in readme_mistakes(README.read_text(), interfaces):
        failed = True
        print(f"api-reference: {mistake}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
