"""``mrsparse``, the one command: ``mrsparse <subcommand> [options]`` runs what
``python -m mrjobs.<module>`` runs, with the same options and output.

Subcommands (:data:`SUBCOMMANDS`): ``dot-products`` (all-pairs dot products
and similarities), ``index`` (the inverted index), ``convert`` (to and from
the compact format), ``plan`` (the cost planner), ``generate`` (a corpus
of generated vectors), ``update`` (yesterday's output updated for changed
vectors).  ``mrsparse --help`` lists them; ``mrsparse <subcommand> --help``
gives the subcommand's own help.
"""
import difflib
import runpy
import sys

from mrjobs import options

__all__ = ["SUBCOMMANDS", "main"]

#: subcommand -> (the module run as ``python -m``, what it does)
SUBCOMMANDS = {
    "dot-products": ("mrjobs.dot_products", "all-pairs sparse dot products and similarities"),
    "index": ("mrjobs.inverted_index", "the inverted index: feature -> posting list"),
    "convert": ("mrjobs.convert", "vectors to and from the compact format"),
    "plan": ("mrjobs.plan", "what a run will cost: time, memory, disk, shuffle"),
    "generate": ("mrjobs.generate", "a corpus of generated sparse vectors"),
    "update": ("mrjobs.update", "yesterday's neighbours updated for changed vectors"),
}


def usage():
    width = max(map(len, SUBCOMMANDS))
    return "\n".join(["usage: mrsparse <subcommand> [options]  (mrsparse <subcommand> --help)",
                      "", "subcommands:"] + [
        "  %-*s  %s" % (width, name, what) for name, (_, what) in SUBCOMMANDS.items()])


def main(argv=None):
    """Run the subcommand ``argv[0]`` (default: ``sys.argv[1:]``) with the rest
    of ``argv`` as its arguments; its exit status is the command's."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(usage(), file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name not in SUBCOMMANDS:
        close = difflib.get_close_matches(name, SUBCOMMANDS, n=1)
        sys.stderr.write("mrsparse: error: no subcommand %r%s\n%s\n" % (
            name, " (did you mean %s?)" % close[0] if close else "", usage()))
        return 2
    options.PROGRAM = "mrsparse " + name
    sys.argv = [sys.argv[0]] + rest
    try:
        runpy.run_module(SUBCOMMANDS[name][0], run_name="__main__", alter_sys=True)
    except SystemExit as e:
        return e.code
    return 0
