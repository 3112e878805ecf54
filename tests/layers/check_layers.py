#!/usr/bin/env python3
"""check_layers.py -- the source layers point only down.

The layers, the files of each and the layers each may use are written once,
in docs/design.md, in the block fenced as ```layers (see "Layers, and where a
change belongs"). This script reads that block and checks every file under
src/ against it:

  includes    every #include "..." names a file of the includer's own unit
              or of a layer its layer may use;
  references  every function or object a file names (declares, calls, takes
              the address of) that a .c file of another unit defines belongs
              to a layer the file's layer may use. A header that declares
              what a higher layer defines is the case this catches: the
              #include of such a header looks harmless, the link is not.

A layer's units: the layer itself, or, for a pattern ending in */, each
folder it matches (the backends: one unit each, none using another). What
a layer may use includes what those layers may use. A layer "implemented by"
another is an interface: its headers may declare what that layer defines
(the host API, which the binding implements); nothing else may name those
definitions unless its layer may use the implementing one.

Usage: check_layers.py [--root DIR] [--design FILE]
Exit status: 0 when the tree keeps the rules; 1 listing each forbidden
edge (and each file in no layer); 2 when the block is missing or malformed.
"""
import argparse
import os
import re
import sys

SOURCE_SUFFIXES = (".c", ".cc")
CHECKED_SUFFIXES = (".c", ".cc", ".h")


class Layer:
    def __init__(self, name, patterns, uses, implemented_by, line):
        self.name = name
        self.patterns = patterns
        self.uses = uses
        self.implemented_by = implemented_by
        self.line = line


def fail_usage(message):
    print("check_layers: " + message, file=sys.stderr)
    sys.exit(2)


def read_layers(design):
    """The layers of design's ```layers block, bottom up, by name."""
    try:
        with open(design, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        fail_usage("cannot read %s: %s" % (design, e))
    block = re.search(r"^```layers[ \t]*\n(.*?)^```", text, re.S | re.M)
    if not block:
        fail_usage("%s has no ```layers block" % design)
    first_line = text.count("\n", 0, block.start(1)) + 1
    line_re = re.compile(r"^([a-z][a-z-]*)\s*=\s*([^;]*?)\s*(?:;\s*(.*))?$")
    layers = {}
    for k, raw in enumerate(block.group(1).splitlines()):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        where = "%s:%d" % (design, first_line + k)
        m = line_re.match(line)
        if not m:
            fail_usage("%s: not 'name = paths [; uses a b] [; implemented by c]'" % where)
        name, patterns = m.group(1), m.group(2).split()
        uses, implemented_by = [], None
        for clause in (m.group(3) or "").split(";"):
            words = clause.split()
            if not words:
                continue
            if words[0] == "uses" and len(words) > 1:
                uses = words[1:]
            elif words[:2] == ["implemented", "by"] and len(words) == 3:
                implemented_by = words[2]
            else:
                fail_usage("%s: unknown clause '%s'" % (where, clause.strip()))
        if name in layers:
            fail_usage("%s: layer %s named twice" % (where, name))
        if not patterns:
            fail_usage("%s: layer %s has no files" % (where, name))
        layers[name] = Layer(name, patterns, uses, implemented_by, where)
    for layer in layers.values():
        for other in layer.uses + ([layer.implemented_by] if layer.implemented_by else []):
            if other not in layers:
                fail_usage("%s: unknown layer %s" % (layer.line, other))
    return layers


def usable(layers):
    """name -> the layers it may use, transitively (itself excluded unless a cycle)."""
    result = {}
    for name in layers:
        seen, todo = set(), list(layers[name].uses)
        while todo:
            other = todo.pop()
            if other not in seen:
                seen.add(other)
                todo.extend(layers[other].uses)
        if name in seen:
            fail_usage("%s: layer %s uses itself through others" % (layers[name].line, name))
        result[name] = seen
    return result


class Rules:
    """What the block allows, between the (layer, unit) pairs of two files."""

    def __init__(self, layers):
        self.layers = layers
        self.may_use = usable(layers)

    def allowed(self, src, dst):
        """Whether src's file may include or name dst's."""
        (src_layer, src_unit), (dst_layer, dst_unit) = src, dst
        return src_unit == dst_unit or dst_layer in self.may_use[src_layer]

    def declares_for(self, header, definer):
        """Whether header's interface layer may declare what definer's defines."""
        implementation = self.layers[header[0]].implemented_by
        return implementation is not None and (
            definer[0] == implementation or definer[0] in self.may_use[implementation])


def unit_of(path, layers):
    """(layer, unit) of a path relative to the root, or None."""
    for layer in layers.values():
        for pattern in layer.patterns:
            if pattern.endswith("*/"):
                base = pattern[:-2]
                if path.startswith(base):
                    rest = path[len(base):]
                    if "/" in rest:
                        return layer.name, base + rest.split("/", 1)[0] + "/"
            elif pattern.endswith("/"):
                if path.startswith(pattern):
                    return layer.name, layer.name
            elif path == pattern:
                return layer.name, layer.name
    return None


# A comment, or a string or character literal.
NOT_CODE = re.compile(r"""/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'""", re.S)


def strip_code(text):
    """text without comments, string and character literals (lines kept)."""
    def blank(m):
        token = m.group(0)
        if token.startswith("/"):
            return "\n" * token.count("\n") or " "
        return token[0] * 2
    return NOT_CODE.sub(blank, text)


def without_directives(code):
    """code (its lines spliced) without preprocessor lines."""
    return re.sub(r"^[ \t]*#[^\n]*", "", code, flags=re.M)


NOT_NAMES = {
    "if", "for", "while", "switch", "return", "sizeof", "_Alignof", "_Alignas", "defined",
    "__attribute__", "__typeof__", "typeof", "_Static_assert", "static_assert", "_Generic",
    "__declspec", "__asm__", "asm",
}


# The end of a function definition's head: its name and parameter list.
FUNCTION_HEAD = re.compile(r"([A-Za-z_]\w*)\s*\([^()]*(?:\([^()]*\)[^()]*)*\)\s*"
                           r"(?:__attribute__\s*\(\(.*\)\)\s*)?$")


def top_level_definitions(code):
    """(external, local): the names of the functions and objects code (its
    lines spliced, no comments, literals or directives) defines at file
    scope, with and without external linkage."""
    external, local = set(), set()

    def add(name, text):
        (local if re.search(r"\bstatic\b", text) else external).add(name)

    head, start, depth = "", 0, 0
    for m in re.finditer(r"[{};]", code):
        c = m.group(0)
        if depth:
            depth += 1 if c == "{" else -1 if c == "}" else 0
            if not depth:
                start = m.end()
            continue
        text = " ".join((head + code[start:m.start()]).split())
        head, start = "", m.end()
        if c == "{":
            depth = 1
            f = FUNCTION_HEAD.search(text)
            if f and "=" not in text and f.group(1) not in NOT_NAMES:
                add(f.group(1), text)
            else:  # an initialised object or a type: the declaration runs to its ';'
                head = text + " {} "
        elif c == ";":
            decl = text.split("=", 1)[0].strip()
            if not decl or re.match(r"(typedef|extern)\b|(struct|union|enum)\s+\w+$", decl) \
                    or decl.endswith("{}"):
                continue  # a type, a declaration, or a block's end
            if "(" not in decl:  # an object: its name ends it, but for array bounds
                o = re.search(r"([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)*$", decl)
            else:  # a function pointer object (a prototype names no "(*")
                o = re.match(r"[^(]*\(\s*\*\s*([A-Za-z_]\w*)\s*\)\s*\(.*\)$", decl)
            if o:
                add(o.group(1), decl)
    return external, local


# Edges the tree still has, each with the change outside this check that
# removes it. They fail like any other edge once gone from here, and an entry
# that no longer matches fails too, so the list only shrinks.
PENDING = {}


def source_files(root, layers, edges):
    """path relative to root -> (layer, unit), for every file under src/."""
    files = {}
    for folder, dirs, names in os.walk(os.path.join(root, "src")):
        dirs.sort()
        for name in sorted(names):
            if name.endswith(CHECKED_SUFFIXES):
                path = os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/")
                where = unit_of(path, layers)
                if where is None:
                    edges.append("%s: in no layer of the ```layers block" % path)
                else:
                    files[path] = where
    return files


def check_includes(root, path, raw, files, rules, edges):
    """Each #include "..." of path names a file its layer may use."""
    for lineno, line in enumerate(raw.splitlines(), 1):
        m = re.match(r'\s*#\s*include\s*"([^"]+)"', line)
        if not m:
            continue
        target = os.path.normpath(os.path.join(os.path.dirname(path), m.group(1)))
        if not os.path.exists(os.path.join(root, target)):  # the include path: src/
            target = os.path.normpath(os.path.join("src", m.group(1)))
        target = target.replace(os.sep, "/")
        if not os.path.exists(os.path.join(root, target)):
            edges.append('%s:%d: includes "%s", no file of the tree' % (path, lineno, m.group(1)))
        elif target not in files:
            edges.append("%s:%d: includes %s, in no layer" % (path, lineno, target))
        elif not rules.allowed(files[path], files[target]):
            edges.append("%s:%d: includes %s: %s may not use %s"
                         % (path, lineno, target, describe(files[path]), describe(files[target])))


def definitions(root, files):
    """(definer, local): name -> the .c files defining it with external
    linkage; path -> the names path defines without."""
    definer, local = {}, {}
    for path in files:
        if path.endswith(SOURCE_SUFFIXES):
            with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                spliced = f.read().replace("\\\n", "")  # lines are spliced before comments go
            external, local[path] = top_level_definitions(without_directives(strip_code(spliced)))
            for name in external:
                definer.setdefault(name, []).append(path)
    return definer, local


def check_references(path, code, files, definer, local, rules, pending, edges):
    """Each function or object path names that another unit defines is one
    its layer may use."""
    seen = set(local.get(path, ()))
    for m in re.finditer(r"\b[A-Za-z_]\w*\b", code):
        name = m.group(0)
        if name in seen or name not in definer:
            continue
        seen.add(name)
        for where in definer[name]:
            if rules.allowed(files[path], files[where]):
                continue
            if path.endswith(".h") and rules.declares_for(files[path], files[where]):
                continue  # an interface's header declares what its implementation defines
            if (path, name) in pending:
                pending[(path, name)] = None
                continue
            edges.append("%s:%d: names %s, defined in %s: %s may not use %s"
                         % (path, code.count("\n", 0, m.start()) + 1, name, where,
                            describe(files[path]), describe(files[where])))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--root", default=os.path.normpath(os.path.join(here, "..", "..")))
    parser.add_argument("--design", default=None, help="default: ROOT/docs/design.md")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    layers = read_layers(args.design or os.path.join(root, "docs", "design.md"))
    rules = Rules(layers)
    edges = []
    files = source_files(root, layers, edges)
    codes = {}
    for path in files:
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            raw = f.read()
        check_includes(root, path, raw, files, rules, edges)
        codes[path] = strip_code(raw)
    definer, local = definitions(root, files)
    pending = dict(PENDING)
    for path, code in codes.items():
        check_references(path, code, files, definer, local, rules, pending, edges)
    for (path, name), change in sorted(pending.items()):
        if change is not None:
            edges.append("%s: no longer names %s across the layers: drop it from PENDING"
                         % (path, name))
    if edges:
        print("Layer rules broken (docs/design.md, the ```layers block):")
        for edge in edges:
            print("  " + edge)
        print("%d forbidden edge(s)." % len(edges))
        return 1
    print("check_layers: the %d files under src/ keep the layers' directions." % len(files))
    for (path, name), change in sorted(PENDING.items()):
        print("  pending: %s names %s: %s" % (path, name, change))
    return 0


def describe(where):
    layer, unit = where
    return layer if layer == unit else "%s (%s)" % (layer, unit.rstrip("/").split("/")[-1])


if __name__ == "__main__":
    sys.exit(main())
