"""The size caps of the floor plan, applied to the C sources: no C file over
MAX_C_FILE_LINES lines, no C function over MAX_C_FUNCTION_LINES (as the
Python modules and functions are held in tests/test_packaging.py), and the
extension built from every file of mrjobs/csrc/."""
import ast
import glob
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_C_FILE_LINES = 900
MAX_C_FUNCTION_LINES = 60
#: functions still over MAX_C_FUNCTION_LINES, each at most its length here (a
#: ceiling that only goes down; a function brought under the cap leaves it)
C_FUNCTIONS_OVER = {}


def _c_sources():
    paths = glob.glob(os.path.join(ROOT, "mrjobs", "csrc", "*.[ch]"))
    paths.append(os.path.join(ROOT, "codecs", "mrcodecs", "_speedups.c"))
    return sorted(os.path.relpath(p, ROOT) for p in paths)


def c_functions(text):
    """(name, lines) of each function defined in C source text written as
    this project writes it: the return type and the name on lines of their
    own, the body's braces at the start of a line; its lines from the first
    of its signature to its closing brace."""
    lines = text.split("\n")
    found, i = [], 0
    while i < len(lines):
        if not lines[i].startswith("{"):
            i += 1
            continue
        start = i
        while start > 0 and lines[start - 1].strip() and not lines[start - 1].startswith("#") \
                and not lines[start - 1].rstrip().endswith((";", "}", "*/")):
            start -= 1
        end = i
        while not lines[end].startswith("}"):
            end += 1
        name = re.search(r"(\w+)\s*\(", " ".join(lines[start:i]))
        assert name, "no function name before line %d: %r" % (i + 1, lines[start:i])
        found.append((name.group(1), end - start + 1))
        i = end + 1
    return found


def test_the_function_finder_measures_a_function_from_signature_to_brace():
    text = ("/* a comment */\nstatic int\nf(int a,\n  int b)\n{\n    return a;\n}\n\n"
            "typedef struct {\n    int x;\n} S;\n\nvoid\ng(void)\n{\n}\n")
    assert c_functions(text) == [("f", 6), ("g", 4)]


def test_no_c_file_is_over_its_cap():
    sizes = {path: len(open(os.path.join(ROOT, path)).read().splitlines())
             for path in _c_sources()}
    assert len(sizes) >= 10, sizes  # (mrjobs/csrc/ found)
    assert {p: n for p, n in sizes.items() if n > MAX_C_FILE_LINES} == {}


def test_no_c_function_is_over_its_cap():
    over, names = {}, set()
    for path in _c_sources():
        for name, n in c_functions(open(os.path.join(ROOT, path)).read()):
            names.add(name)
            if n > MAX_C_FUNCTION_LINES:
                over["%s:%s" % (path, name)] = n
    # (the finder found the extension's functions)
    assert {"pair_topk", "dots", "neighbours_json", "PyInit__mrjobs_speedups"} <= names
    assert {k: n for k, n in over.items() if n > C_FUNCTIONS_OVER.get(k, 0)} == {}
    # a function brought under the cap leaves the list
    assert sorted(set(C_FUNCTIONS_OVER) - set(over)) == []


def test_the_extension_is_built_from_every_file_of_mrjobs_csrc():
    # setup.py's MRJOBS_SOURCES and MRJOBS_HEADERS: every .c compiled, every
    # .h a dependency (a change to a header rebuilds the extension)
    tree = ast.parse(open(os.path.join(ROOT, "setup.py")).read())
    listed = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id in ("MRJOBS_SOURCES", "MRJOBS_HEADERS"):
            listed[node.targets[0].id] = eval(compile(ast.Expression(node.value), "setup.py",
                                                      "eval"))
    for name, ext in (("MRJOBS_SOURCES", "c"), ("MRJOBS_HEADERS", "h")):
        on_disk = sorted(os.path.relpath(p, ROOT) for p in glob.glob(
            os.path.join(ROOT, "mrjobs", "csrc", "*." + ext)))
        assert sorted(listed[name]) == on_disk
