"""Wire-format benchmark: mrsparse's VectorProtocol against the formats it replaces.

For sparse vectors of n UUID -> float64 entries (random version-4 UUIDs,
uniform weights, seeded) it measures bytes per record (with its framing: the
newline mrjob appends, or a SequenceFile record header) against the target
``24 + 24.5 n``, and encode and decode speed in MB/s of wire bytes and in
records/s.  Formats: ``mrcodecs.VectorProtocol`` (float64, float32), mrjob's
``JSONProtocol`` and ``PickleProtocol``, a Python equivalent of Hadoop's
``MapWritable`` byte layout (not the JVM's speed) and base64 of the raw
bytes.  Encoding walks distinct inputs and decoding distinct lines, each
output dropped at once, as a streaming task does; formats interleave in a
rotating order, best of ``--repeat``, process CPU time unless ``--clock
wall``, each measurement looped to last ``--min-time``.

``python -m bench.wire`` or ``--quick`` (also ``BENCH_QUICK=1``); results
go to ``bench/results/wire.json`` and ``wire.png``.  It reports, never asserts.
"""
import binascii
import collections
import gc
import operator
import struct
import sys
import time
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as ``python bench/wire.py``
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import mrcodecs  # noqa: E402
from mrcodecs import SparseVector, VectorProtocol, uuid_from_bytes  # noqa: E402
from mrjob.protocol import JSONProtocol, PickleProtocol  # noqa: E402

from bench import common  # noqa: E402

SIZES = (1, 8, 64, 512, 4096)
QUICK_SIZES = (1, 8, 512)
SEED = 20240611
#: record bytes the wire format aims for: ``TARGET_RECORD + TARGET_ENTRY * n``
TARGET_RECORD = 24.0
TARGET_ENTRY = 24.5


def target_bytes(n):
    """The target size of a mrsparse record of ``n`` entries, in bytes."""
    return TARGET_RECORD + TARGET_ENTRY * n


# -- the MapWritable equivalent -------------------------------------------------
#
# hadoop-common's org.apache.hadoop.io, big-endian: SequenceFile.Writer.append
# (uncompressed; sync markers not counted) writes int recordLength, int keyLength,
# key, value; BytesWritable int size, bytes; DoubleWritable 8 bytes; MapWritable
# byte newClasses, per class not predefined (DoubleWritable; BytesWritable is
# -125) byte id + writeUTF(name), int size, per entry: class id, key, class id, value.

_DOUBLE_WRITABLE = b"org.apache.hadoop.io.DoubleWritable"
MW_CLASS_TABLE = struct.pack(">bbH", 1, 1, len(_DOUBLE_WRITABLE)) + _DOUBLE_WRITABLE
#: one map entry: key class id, BytesWritable(16), value class id, DoubleWritable
MW_ENTRY = np.dtype([("kid", "i1"), ("klen", ">i4"), ("id", "V16"), ("vid", "i1"),
                     ("w", ">f8")])
_MW_HEADER = struct.Struct(">ii")  # recordLength, keyLength
_MW_INT = struct.Struct(">i")
_MW_KEY_SIZE = 4 + 16  # BytesWritable(16)
#: bytes of a record besides its entries: SequenceFile header, key, class table, count
MW_RECORD_OVERHEAD = _MW_HEADER.size + _MW_KEY_SIZE + len(MW_CLASS_TABLE) + 4
_MW_ENTRY_STRUCT = struct.Struct(">bi16sbd")
_MW_SMALL = 8  # at most this many entries: encode with struct, not numpy
_MW_TEMPLATE = np.zeros(0, MW_ENTRY)


class MapWritableError(ValueError):
    """A byte string that is not a record this MapWritable equivalent reads."""


def mapwritable_encode(key, vector):
    """One SequenceFile record: BytesWritable(16) key, MapWritable value.

    ``int recordLength, int 20``, the key ``int 16, 16 bytes``, the class
    table ``01 01 00 23 "org.apache.hadoop.io.DoubleWritable"``, ``int n``,
    ``n`` entries of 30 bytes ``83 00000010 <id> 01 <double>``: ``71 + 30 n``.

    >>> import uuid
    >>> rec = mapwritable_encode(uuid.UUID(int=1),
    ...                          SparseVector.from_dict({uuid.UUID(int=2): 0.5}))
    >>> len(rec), rec[28:32], rec[67:71].hex(), rec[71:76].hex()
    (101, b'\\x01\\x01\\x00#', '00000001', '8300000010')
    """
    global _MW_TEMPLATE
    n = vector.ids.shape[0]
    if n <= _MW_SMALL:  # numpy's per-call overhead dominates tiny maps
        buf = vector.ids.tobytes()
        body = b"".join([_MW_ENTRY_STRUCT.pack(-125, 16, buf[16 * i:16 * i + 16], 1, w)
                         for i, w in enumerate(vector.weights.tolist())])
    else:
        if _MW_TEMPLATE.shape[0] < n:  # the constant fields, prefilled once
            _MW_TEMPLATE = np.zeros(max(n, 2 * _MW_TEMPLATE.shape[0]), MW_ENTRY)
            _MW_TEMPLATE["kid"], _MW_TEMPLATE["klen"], _MW_TEMPLATE["vid"] = -125, 16, 1
        entries = _MW_TEMPLATE[:n].copy()
        entries["id"] = vector.ids.view("V16")
        entries["w"] = vector.weights  # casts to big-endian float64
        body = entries.tobytes()
    value_len = len(MW_CLASS_TABLE) + 4 + 30 * n
    return b"".join((_MW_HEADER.pack(_MW_KEY_SIZE + value_len, _MW_KEY_SIZE), _MW_INT.pack(16),
                     key.bytes, MW_CLASS_TABLE, _MW_INT.pack(n), body))


def _mw_fail(record, offset, expected, found):
    return MapWritableError("cannot decode MapWritable record: expected %s at byte offset %d, "
                            "found %r (record of %d bytes)" % (expected, offset, found,
                                                                len(record)))


def mapwritable_decode(record):
    """Inverse of :func:`mapwritable_encode`: ``(uuid.UUID, (ids S16, float64))``.  Reads
    the class table Hadoop writes for this map (DoubleWritable as id 1) only."""
    size = len(record)
    if size < 33:
        raise _mw_fail(record, 0, "a record of at least 33 bytes", size)
    if _MW_HEADER.unpack_from(record) != (size - 8, _MW_KEY_SIZE):
        raise _mw_fail(record, 0, "recordLength %d, keyLength 20" % (size - 8),
                       _MW_HEADER.unpack_from(record))
    if record[8:12] != _MW_INT.pack(16):
        raise _mw_fail(record, 8, "BytesWritable size 16", record[8:12])
    pos = 28 + len(MW_CLASS_TABLE)
    if record[28:pos] != MW_CLASS_TABLE or size < pos + 4:
        raise _mw_fail(record, 28, "the class table {1: DoubleWritable}, an int count",
                       record[28:pos + 4])
    (n,) = _MW_INT.unpack_from(record, pos)
    pos += 4
    if n < 0 or size - pos != 30 * n:
        raise _mw_fail(record, pos - 4, "an entry count of %d (30 bytes per entry)"
                       % ((size - pos) // 30), n)
    # the bytes every entry repeats, checked as strided slices: no per-entry loop
    for off, byte in ((0, 0x83), (1, 0), (2, 0), (3, 0), (4, 16), (21, 1)):
        column = record[pos + off::30]
        if column.count(byte) != n:
            bad = pos + 30 * next(i for i, b in enumerate(column) if b != byte)
            raise _mw_fail(record, bad + off, "entries BytesWritable(16) -> DoubleWritable "
                           "(byte 0x%02X)" % byte, record[bad:bad + 30])
    entries = np.frombuffer(record, MW_ENTRY, n, pos)
    return uuid_from_bytes(record[12:28]), (entries["id"].copy().view("S16"),
                                            entries["w"].astype(np.float64))


# -- base64-wrapped raw binary ----------------------------------------------------

def base64_encode(key, vector):
    """``b64(key.bytes) TAB b64(ids bytes + float64 weight bytes)``."""
    return b"%s\t%s" % (binascii.b2a_base64(key.bytes, newline=False), binascii.b2a_base64(
        vector.ids.tobytes() + vector.weights.tobytes(), newline=False))


def base64_decode(line):
    """Inverse of :func:`base64_encode`: ``(uuid.UUID, (ids S16, weights float64))``."""
    k, _, v = line.partition(b"\t")
    raw = binascii.a2b_base64(v)
    n = len(raw) // 24
    return uuid_from_bytes(binascii.a2b_base64(k)), (np.frombuffer(raw, "S16", n),
                                                     np.frombuffer(raw, "<f8", n, 16 * n))


# -- the formats -------------------------------------------------------------------

#: a format under test: ``inputs(data)`` -> ``[(key, value)]``; ``make()`` -> fresh
#: ``(encode, decode)`` (a new protocol, as a task has); ``same(decoded, input)``
#: checks a round trip; ``framing``: the bytes the transport adds to a record
Format = collections.namedtuple("Format", "name label description inputs make same framing "
                                "line_safe", defaults=(operator.eq, 1, True))


def _protocol(cls):
    def make():
        p = cls()
        return p.write, p.read
    return make


def _same_arrays(decoded, expected):
    (k, (ids, ws)), (ek, v) = decoded, expected
    return k == ek and ids.tobytes() == v.ids.tobytes() and np.array_equal(ws, v.weights)


def _vectors(name):
    return lambda d: list(zip(d.keys, getattr(d, name)))


FORMATS = (
    Format("mrsparse-f64", "mrsparse float64", "mrcodecs.VectorProtocol, float64 weights",
           _vectors("vectors64"), _protocol(VectorProtocol)),
    Format("mrsparse-f32", "mrsparse float32", "mrcodecs.VectorProtocol, float32 weights",
           _vectors("vectors32"), _protocol(VectorProtocol)),
    Format("json", "mrjob JSONProtocol", "mrjob.protocol.JSONProtocol (%s): key UUID string, "
           "value {UUID string: float}" % JSONProtocol.__name__,
           lambda d: [(str(k), {str(u): w for u, w in m.items()}) for k, m in zip(d.keys, d.dicts)],
           _protocol(JSONProtocol)),
    Format("pickle", "mrjob PickleProtocol", "mrjob.protocol.PickleProtocol: key uuid.UUID, "
           "value {uuid.UUID: float}", _vectors("dicts"), _protocol(PickleProtocol)),
    Format("mapwritable", "MapWritable equiv.", "Python equivalent of Hadoop's MapWritable"
           "<BytesWritable(16), DoubleWritable> in an uncompressed SequenceFile record",
           _vectors("vectors64"), lambda: (mapwritable_encode, mapwritable_decode),
           _same_arrays, framing=0, line_safe=False),
    Format("base64", "base64 raw binary", "base64(16-byte key) TAB base64(16n id bytes + 8n "
           "float64 bytes)", _vectors("vectors64"), lambda: (base64_encode, base64_decode),
           _same_arrays),
)
FORMAT_NAMES = tuple(f.name for f in FORMATS)


class Data:
    """``records`` random records of ``n`` entries: keys, dicts and SparseVectors."""

    def __init__(self, n, records, seed):
        rng = np.random.default_rng([seed, n])
        raw = rng.integers(0, 256, size=(records, n + 1, 16), dtype=np.uint8)
        raw[..., 6] = (raw[..., 6] & 0x0F) | 0x40  # version 4
        raw[..., 8] = (raw[..., 8] & 0x3F) | 0x80  # RFC 4122 variant
        ids = raw.view("V16")[..., 0]  # V16 keeps trailing zero bytes
        weights = rng.random((records, n))
        self.n = n
        self.keys = [uuid_from_bytes(b) for b in ids[:, 0].tolist()]
        self.dicts = [dict(zip(map(uuid_from_bytes, row_ids), row_w))
                      for row_ids, row_w in zip(ids[:, 1:].tolist(), weights.tolist())]
        self.vectors64 = [SparseVector.from_dict(d, dtype=np.float64) for d in self.dicts]
        self.vectors32 = [SparseVector.from_dict(d, dtype=np.float32) for d in self.dicts]


# -- measuring ---------------------------------------------------------------------

def prepare(f, data):
    """Encode ``data`` in format ``f`` once, check it; the format's timing state."""
    inputs = f.inputs(data)
    encode, decode = f.make()
    lines = [encode(k, v) for k, v in inputs]
    for i in (0, len(lines) - 1):  # one round trip each end, outside the timing
        if not f.same(decode(lines[i]), inputs[i]):
            raise AssertionError("%s does not round-trip n=%d" % (f.name, data.n))
    if f.line_safe and any(b"\n" in x or b"\r" in x or x.count(b"\t") != 1 for x in lines):
        raise AssertionError("%s wrote lines that are not line-safe" % f.name)
    sizes = np.array([len(x) for x in lines], np.int64) + f.framing
    return {"format": f, "inputs": inputs, "lines": lines, "wire_bytes": int(sizes.sum()),
            "min_record": int(sizes.min()), "max_record": int(sizes.max()),
            "enc": [], "dec": [], "enc_passes": None, "dec_passes": None}


def _streams(p):
    encode, decode = p["format"].make()

    def enc():
        for k, v in p["inputs"]:
            encode(k, v)  # dropped at once, as a mapper drops a written line

    def dec():
        for line in p["lines"]:
            decode(line)
    return ("enc", enc), ("dec", dec)


def time_formats(prepared, repeat, min_time):
    """Fill each format's ``enc``/``dec`` with ``(wall, cpu)`` per record stream."""
    gc.collect()
    gc.freeze()  # the inputs live through the timing: keep the collector off them
    try:
        for rep in range(repeat):
            shift = rep % len(prepared)
            for p in prepared[shift:] + prepared[:shift]:  # rotate: no format always first
                for kind, run in _streams(p):
                    if p[kind + "_passes"] is None:  # calibrate on the first rep
                        one = common.seconds_per_pass(run)
                        p[kind + "_passes"] = common.passes_for(one[0], min_time)
                        if p[kind + "_passes"] == 1:
                            p[kind].append(one)
                            continue
                    p[kind].append(common.seconds_per_pass(run, p[kind + "_passes"]))
    finally:
        gc.unfreeze()


def result_row(p, n, records, clock):
    enc, dec = (min(t[clock == "cpu"] for t in p[k]) for k in ("enc", "dec"))
    bpr, wire = p["wire_bytes"] / records, p["wire_bytes"]
    return {"format": p["format"].name, "n": n, "records": records, "wire_bytes": wire,
            "bytes_per_record": bpr, "min_record_bytes": p["min_record"],
            "max_record_bytes": p["max_record"], "bytes_per_entry": bpr / n,
            "target_bytes_per_record": target_bytes(n), "vs_target": bpr / target_bytes(n),
            "encode_s": enc, "decode_s": dec,
            **{"%s_%s_s_all" % (k, c): [t[i] for t in p[k[:3]]]
               for k in ("encode", "decode") for i, c in enumerate(("wall", "cpu"))},
            "encode_passes": p["enc_passes"], "decode_passes": p["dec_passes"],
            "encode_MBps": wire / enc / 1e6, "decode_MBps": wire / dec / 1e6,
            "encode_records_per_s": records / enc, "decode_records_per_s": records / dec,
            "encode_us_per_record": enc / records * 1e6,
            "decode_us_per_record": dec / records * 1e6}


def measure_size(n, formats, args, log):
    """Time every format on one stream of ``n``-entry records; the result rows."""
    records = int(min(MAX_RECORDS, max(8, args.entry_budget // n)))
    t0 = time.perf_counter()
    data = Data(n, records, SEED)
    prepared = [prepare(f, data) for f in formats]
    del data
    setup = time.perf_counter() - t0
    time_formats(prepared, args.repeat, args.min_time)
    log("n=%-5d %6d records  setup %.1fs  timing %.1fs"
        % (n, records, setup, time.perf_counter() - t0 - setup))
    return [result_row(p, n, records, args.clock) for p in prepared]


def fit_sizes(rows):
    """Least-squares ``bytes_per_record = per_record + per_entry * n`` per format."""
    fits = {}
    for name in dict.fromkeys(r["format"] for r in rows):
        pts = np.array([(r["n"], r["bytes_per_record"]) for r in rows if r["format"] == name])
        if len(pts) >= 2:
            per_entry, per_record = np.polyfit(pts[:, 0], pts[:, 1], 1)
            fits[name] = {"per_record": float(per_record), "per_entry": float(per_entry)}
    return fits


def evaluate_checks(rows):
    """The four targets, each with what was measured and PASS/FAIL."""
    at = {(r["format"], r["n"]): r for r in rows}
    ours = [r for r in rows if r["format"] == "mrsparse-f64"]
    worst = max(ours, key=lambda r: r["vs_target"], default=None)
    r512, m1, j1 = at.get(("mrsparse-f64", 512)), at.get(("mrsparse-f64", 1)), at.get(("json", 1))
    ratios = [(r["n"], at["json", r["n"]]["decode_s"] / r["decode_s"])
              for r in ours if ("json", r["n"]) in at]
    us = [None if r is None else r["encode_us_per_record"] + r["decode_us_per_record"]
          for r in (m1, j1)]
    check = common.check
    return [
        check("a", "mrsparse float64 record <= 24 + 24.5 n bytes (every n; mean over the stream)",
              worst and "worst n=%d: %.2f B vs %.1f B (%.4fx); largest single record %d B" % (
                  worst["n"], worst["bytes_per_record"], worst["target_bytes_per_record"],
                  worst["vs_target"], worst["max_record_bytes"]),
              worst and all(r["bytes_per_record"] <= r["target_bytes_per_record"] for r in ours)),
        check("b", "mrsparse float64 encode and decode >= 1 GB/s at n=512",
              r512 and "encode %.0f MB/s, decode %.0f MB/s" % (r512["encode_MBps"],
                                                               r512["decode_MBps"]),
              r512 and r512["encode_MBps"] >= 1000 and r512["decode_MBps"] >= 1000),
        check("c", "mrsparse float64 decode >= 5x faster than JSONProtocol decode at n=512",
              ", ".join("n=%d %.1fx" % nr for nr in ratios) or None,
              next((x >= 5 for n, x in ratios if n == 512), None)),
        check("d", "n=1: mrsparse float64 encode+decode time <= JSONProtocol's",
              None if None in us else "mrsparse %.2f us vs JSONProtocol %.2f us per record "
              "(enc+dec)" % tuple(us), None if None in us else us[0] <= us[1]),
    ]


# -- output --------------------------------------------------------------------------

TABLE = [
    ("n", "n"), ("format", "format"), ("bytes_per_record", "B/record", "{:,.1f}"),
    ("vs_target", "/target", "{:.3f}"), ("bytes_per_entry", "B/entry", "{:,.2f}"),
    ("encode_MBps", "enc MB/s", "{:,.0f}"), ("decode_MBps", "dec MB/s", "{:,.0f}"),
    ("encode_records_per_s", "enc rec/s", "{:,.0f}"),
    ("decode_records_per_s", "dec rec/s", "{:,.0f}"),
]
STYLES = {"mrsparse-f64": dict(color="#d62728", lw=2.6, marker="o"),
          "mrsparse-f32": dict(color="#ff9896", lw=2.0, marker="o", ls="--"),
          "json": dict(color="#1f77b4", marker="s"), "pickle": dict(color="#9467bd", marker="^"),
          "mapwritable": dict(color="#2ca02c", marker="D"),
          "base64": dict(color="#7f7f7f", marker="v")}


def draw_chart(rows, sizes, directory, title):
    """Bytes per entry, encode MB/s and decode MB/s against n, one line per format."""
    from matplotlib import ticker

    fig, axes = common.pyplot().subplots(1, 3, figsize=(16, 5.2))
    xs = np.array(sorted(sizes), dtype=float)
    labels = {f.name: f.label for f in FORMATS}
    for ax, key, ylabel, title_ in zip(axes, ("bytes_per_entry", "encode_MBps", "decode_MBps"), (
            "bytes per entry (record bytes / n)", "encode MB/s of wire bytes",
            "decode MB/s of wire bytes"), ("size (lower is better)", "encode speed (higher is "
                                           "better)", "decode speed (higher is better)")):
        for name in dict.fromkeys(r["format"] for r in rows):
            common.plot_series(ax, [(r["n"], r[key]) for r in rows if r["format"] == name],
                               label=labels.get(name, name), ms=5, **STYLES.get(name, {}))
        if key == "bytes_per_entry":
            ax.plot(xs, target_bytes(xs) / xs, color="black", ls=(0, (6, 2, 1, 2)), lw=1.5,
                    label="target (24 + 24.5 n) / n")
        else:
            ax.axhline(1000, color="0.45", ls=(0, (1, 2)), lw=1.5, label="1 GB/s")
        common.log_axes(ax, "entries per vector (n)", ylabel, title_)
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs, [str(int(x)) for x in xs])
        ax.xaxis.set_minor_locator(ticker.NullLocator())
        ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda y, _: "{:,.4g}".format(y)))
        ax.yaxis.set_minor_formatter(ticker.NullFormatter())
    handles, labs = axes[0].get_legend_handles_labels()
    h2, l2 = axes[1].get_legend_handles_labels()
    fig.legend(handles + h2[-1:], labs + l2[-1:], loc="lower center", ncol=8, frameon=False,
               bbox_to_anchor=(0.5, -0.04))
    fig.suptitle(title, fontsize=11)
    fig.tight_layout(rect=(0, 0.05, 1, 0.96))
    return common.save_figure(fig, "wire", directory)


#: the settings of a run, full and quick
MODES = {False: dict(sizes=SIZES, repeat=5, min_time=0.05, entry_budget=32768),
         True: dict(sizes=QUICK_SIZES, repeat=1, min_time=0.0, entry_budget=2048)}
MAX_RECORDS = 32768


def parse_args(argv=None):
    ap = common.arg_parser("python -m bench.wire", __doc__.split("\n")[0], "wire.json, wire.png")
    ap.add_argument("--sizes", type=lambda s: tuple(int(x) for x in s.split(",")),
                    help="comma-separated entries per vector (default %s)"
                    % ",".join(map(str, SIZES)))
    ap.add_argument("--repeat", type=int, help="repetitions, best kept (default 5)")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                    help="time the table and checks use (both are saved)")
    args = common.parse(ap, argv)
    for k, v in MODES[args.quick].items():
        if getattr(args, k, None) is None:
            setattr(args, k, v)
    if args.repeat < 1 or any(n < 1 for n in args.sizes):
        ap.error("--repeat and --sizes must be >= 1")
    return args


def report(rows, fits, checks, args, speedups):
    common.print_table(rows, TABLE, title="Wire formats, best of %d by %s time (mrcodecs "
                       "escaping: %s). Record bytes include framing; MB = 10^6 bytes of wire."
                       % (args.repeat, args.clock, speedups))
    if fits:
        common.print_table([{"format": k, **v} for k, v in fits.items()] + [{
            "format": "(target)", "per_record": TARGET_RECORD, "per_entry": TARGET_ENTRY}],
            [("format", "format"), ("per_record", "B/record (fit)", "{:.1f}"),
             ("per_entry", "B/entry (fit)", "{:.2f}")],
            title="Least-squares fit: record bytes = per_record + per_entry * n")
    common.print_checks(checks)


def main(argv=None):
    args, log = parse_args(argv), common.logger()
    speedups = "C (_mrcodecs_speedups)" if mrcodecs.SPEEDUPS else "pure Python"
    log("mrcodecs %s, escaping: %s; JSONProtocol is %s; %d repetition(s)"
        % (mrcodecs.__version__, speedups, JSONProtocol.__name__, args.repeat))
    rows = [r for n in args.sizes for r in measure_size(n, FORMATS, args, log)]
    fits, checks = fit_sizes(rows), evaluate_checks(rows)
    report(rows, fits, checks, args, speedups)
    settings = dict(quick=args.quick, repeat=args.repeat, clock=args.clock,
                    entry_budget=args.entry_budget, max_records=MAX_RECORDS, seed=SEED,
                    min_time_s=args.min_time, sizes=list(args.sizes), formats=list(FORMAT_NAMES),
                    mrcodecs_version=mrcodecs.__version__, speedups=bool(mrcodecs.SPEEDUPS),
                    json_protocol=JSONProtocol.__name__, mb=10**6,
                    target_bytes_per_record="%g + %g * n" % (TARGET_RECORD, TARGET_ENTRY),
                    method=__doc__.split("\n\n")[1])
    formats = {f.name: {"label": f.label, "description": f.description,
                        "framing_bytes": f.framing, "line_safe": f.line_safe} for f in FORMATS}
    common.finish("wire", {"settings": settings, "formats": formats, "results": rows,
                           "fits": fits, "checks": checks}, args, log,
                  lambda date: draw_chart(rows, args.sizes, args.out, "mrsparse wire format vs "
                                          "peers (%s; escaping: %s; best of %d, %s time)" % (
                                              date, speedups, args.repeat, args.clock)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
