"""The wire benchmark's plumbing and byte counts (never its speed).

One quick run of ``python -m bench.wire --quick`` is shared by the tests that
read its JSON; the MapWritable and base64 codecs the benchmark brings along
are tested on their own, with literal bytes for the MapWritable layout.
"""
import json
import re
import struct
import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
if str(REPO_ROOT) not in sys.path:  # ``bench`` is a folder of the repo, not installed
    sys.path.insert(0, str(REPO_ROOT))

from bench import common, wire  # noqa: E402
from tests.bench_helpers import QuickRun, quick_run_fixture  # noqa: E402
from mrcodecs import SparseVector, VectorProtocol  # noqa: E402

ROW_FIELDS = {
    "format", "n", "records", "wire_bytes", "bytes_per_record", "min_record_bytes",
    "max_record_bytes", "bytes_per_entry", "target_bytes_per_record", "vs_target",
    "encode_s", "decode_s", "encode_wall_s_all", "encode_cpu_s_all", "decode_wall_s_all",
    "decode_cpu_s_all", "encode_passes",
    "decode_passes", "encode_MBps", "decode_MBps", "encode_records_per_s",
    "decode_records_per_s", "encode_us_per_record", "decode_us_per_record",
}


quick_run = quick_run_fixture("wire")


def _rows(result):
    return {(r["format"], r["n"]): r for r in result["results"]}


def _vector(rng, n, dtype=np.float64):
    return SparseVector.from_dict(
        {uuid.UUID(bytes=rng.bytes(16)): float(w) for w in rng.random(n)}, dtype=dtype)


# -- the quick run --------------------------------------------------------------

@pytest.mark.slow
def test_quick_run_writes_json_with_machine_settings_formats(quick_run):
    out, result, _ = quick_run.get()
    assert result["benchmark"] == "wire"
    machine = result["machine"]
    for key in ("cpu_model", "cpu_count", "python", "date", "git_commit", "loadavg"):
        assert key in machine
    assert machine["versions"]["numpy"] == np.__version__
    settings = result["settings"]
    assert settings["quick"] is True
    assert settings["sizes"] == list(wire.QUICK_SIZES)
    assert isinstance(settings["speedups"], bool)
    assert settings["json_protocol"] == "UltraJSONProtocol"
    assert list(result["formats"]) == list(wire.FORMAT_NAMES)
    assert (out / "wire.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_quick_run_has_one_complete_row_per_format_and_size(quick_run):
    _, result, _ = quick_run.get()
    settings = result["settings"]
    assert settings["clock"] == "cpu"
    rows = _rows(result)
    assert len(rows) == len(result["results"])
    assert set(rows) == {(f, n) for f in wire.FORMAT_NAMES for n in wire.QUICK_SIZES}
    for r in result["results"]:
        assert set(r) == ROW_FIELDS
        assert r["encode_s"] == min(r["encode_cpu_s_all"]) > 0  # default clock: cpu
        assert r["decode_s"] == min(r["decode_cpu_s_all"]) > 0
        assert len(r["encode_wall_s_all"]) == len(r["decode_cpu_s_all"]) == settings["repeat"]
        assert r["encode_MBps"] == pytest.approx(r["wire_bytes"] / r["encode_s"] / 1e6)
        assert r["decode_records_per_s"] == pytest.approx(r["records"] / r["decode_s"])
        assert r["bytes_per_entry"] == pytest.approx(r["bytes_per_record"] / r["n"])
        assert r["target_bytes_per_record"] == 24 + 24.5 * r["n"]


@pytest.mark.slow
def test_quick_run_reports_each_target(quick_run):
    _, result, stdout = quick_run.get()
    assert [c["id"] for c in result["checks"]] == ["a", "b", "c", "d"]
    for c in result["checks"]:
        assert isinstance(c["pass"], bool) and c["measured"]
        assert re.search(r"^%s\s+%s\s" % (c["id"], common.pass_fail(c["pass"])), stdout, re.M)


@pytest.mark.slow
def test_mrsparse_bytes_per_record_are_the_encoded_lines_plus_newline(quick_run):
    _, result, _ = quick_run.get()
    rows = _rows(result)
    protocol = VectorProtocol()
    for n in wire.QUICK_SIZES:
        row = rows["mrsparse-f64", n]
        data = wire.Data(n, row["records"], result["settings"]["seed"])
        lengths = [len(protocol.write(k, v)) + 1 for k, v in zip(data.keys, data.vectors64)]
        assert row["wire_bytes"] == sum(lengths)
        assert row["bytes_per_record"] == pytest.approx(sum(lengths) / len(lengths), abs=1e-9)
        assert (row["min_record_bytes"], row["max_record_bytes"]) == (min(lengths), max(lengths))
        f32 = [len(protocol.write(k, v)) + 1 for k, v in zip(data.keys, data.vectors32)]
        assert rows["mrsparse-f32", n]["wire_bytes"] == sum(f32)


@pytest.mark.slow
def test_every_format_counts_exactly_its_encoded_bytes(quick_run):
    _, result, _ = quick_run.get()
    rows = _rows(result)
    n = wire.QUICK_SIZES[1]
    records = rows["json", n]["records"]
    data = wire.Data(n, records, result["settings"]["seed"])
    for f in wire.FORMATS:
        encode, _ = f.make()
        total = sum(len(encode(k, v)) + f.framing for k, v in f.inputs(data))
        assert rows[f.name, n]["wire_bytes"] == total, f.name


@pytest.mark.slow
def test_fixed_layouts_have_exact_sizes(quick_run):
    _, result, _ = quick_run.get()
    rows = _rows(result)
    for n in wire.QUICK_SIZES:
        # SequenceFile header 8, key 20, class table 39, count 4; 30 per entry
        assert rows["mapwritable", n]["bytes_per_record"] == 71 + 30 * n
        # b64(16) = 24, TAB, b64(24 n) = 32 n, newline
        assert rows["base64", n]["bytes_per_record"] == 26 + 32 * n
    assert result["fits"]["mapwritable"] == pytest.approx({"per_record": 71, "per_entry": 30})
    assert result["fits"]["base64"] == pytest.approx({"per_record": 26, "per_entry": 32})


# -- the MapWritable equivalent ---------------------------------------------------------

def test_mapwritable_literal_bytes():
    key = uuid.UUID("00112233-4455-6677-8899-aabbccddeeff")
    vid = uuid.UUID(int=0x0A)
    rec = wire.mapwritable_encode(key, SparseVector.from_dict({vid: 0.5}))
    expected = (
        struct.pack(">ii", 20 + 43 + 30, 20)          # SequenceFile recordLength, keyLength
        + b"\x00\x00\x00\x10" + key.bytes            # BytesWritable key
        + b"\x01" + b"\x01" + b"\x00\x23"             # newClasses=1, id 1, writeUTF length 35
        + b"org.apache.hadoop.io.DoubleWritable"
        + b"\x00\x00\x00\x01"                         # map size
        + b"\x83" + b"\x00\x00\x00\x10" + vid.bytes  # id -125 BytesWritable(16)
        + b"\x01" + b"\x3f\xe0\x00\x00\x00\x00\x00\x00"  # id 1 DoubleWritable 0.5 big-endian
    )
    assert rec == expected
    assert len(rec) == wire.MW_RECORD_OVERHEAD + 30 == 101


@pytest.mark.parametrize("n", [0, 1, 2, 8, 300, 4096])
def test_mapwritable_round_trips(n):
    rng = np.random.default_rng(n)
    key = uuid.UUID(bytes=rng.bytes(16))
    v = _vector(rng, n) if n else SparseVector.empty()
    rec = wire.mapwritable_encode(key, v)
    assert len(rec) == 71 + 30 * n
    k, (ids, weights) = wire.mapwritable_decode(rec)
    assert k == key
    assert ids.dtype == np.dtype("S16") and weights.dtype == np.float64
    assert ids.tobytes() == v.ids.tobytes()
    assert np.array_equal(weights, v.weights)


@pytest.mark.parametrize("n", [8, 9, 100])  # 8: struct path; 9, 100: numpy path
def test_mapwritable_entries_are_hadoops_layout_on_both_paths(n):
    rng = np.random.default_rng(50 + n)
    v = _vector(rng, n)
    rec = wire.mapwritable_encode(uuid.UUID(int=4), v)
    ids = v.ids.tobytes()
    expected = b"".join(
        b"\x83" + struct.pack(">i", 16) + ids[16 * i:16 * i + 16] + b"\x01" + struct.pack(">d", w)
        for i, w in enumerate(v.weights.tolist()))
    assert rec[71:] == expected


def test_mapwritable_round_trips_float32_weights_as_doubles():
    rng = np.random.default_rng(7)
    v = _vector(rng, 5, np.float32)
    _, (_, weights) = wire.mapwritable_decode(wire.mapwritable_encode(uuid.UUID(int=3), v))
    assert np.array_equal(weights, v.weights.astype(np.float64))


def test_mapwritable_refuses_another_class_table():
    # Hadoop numbers new classes in the order put() meets them: a map that met
    # some other class first has DoubleWritable as id 2, which this reader refuses
    other = b"org.example.Other"
    table = (b"\x02" + b"\x01" + struct.pack(">H", len(other)) + other
             + b"\x02" + struct.pack(">H", 35) + b"org.apache.hadoop.io.DoubleWritable")
    value = (table + struct.pack(">i", 1) + b"\x83" + struct.pack(">i", 16) + bytes(16)
             + b"\x02" + struct.pack(">d", -1.25))
    rec = struct.pack(">ii", 20 + len(value), 20) + struct.pack(">i", 16) + bytes(16) + value
    with pytest.raises(wire.MapWritableError, match=r"expected the class table .* at byte "
                       r"offset 28"):
        wire.mapwritable_decode(rec)


def _reframe(rec):
    """Rewrite the SequenceFile recordLength to match, so the damage inside is reached."""
    return struct.pack(">i", len(rec) - 8) + rec[4:]


# offsets in the 101-byte record of one entry: 0 recordLength, 4 keyLength,
# 8 key size, 12 key, 28 newClasses, 29 class id, 30 name length, 32 name,
# 67 map size, 71 key class id, 72 key size, 76 id, 92 value class id, 93 double
@pytest.mark.parametrize("mangle", [
    lambda r: _reframe(r[:-1]),                     # truncated entry
    lambda r: _reframe(r[:40]),                     # truncated class table
    lambda r: _reframe(r[:69]),                     # truncated map size
    lambda r: _reframe(r[:20]),                     # shorter than any record
    lambda r: r[:-1],                               # recordLength disagrees with the bytes
    lambda r: r[:4] + struct.pack(">i", 21) + r[8:],  # keyLength 21
    lambda r: r[:11] + b"\x0f" + r[12:],            # key BytesWritable of 15 bytes
    lambda r: r[:71] + b"\x84" + r[72:],            # key class FloatWritable, not BytesWritable
    lambda r: r[:92] + b"\x02" + r[93:],            # value class id 2: not in the table
    lambda r: r[:75] + b"\x11" + r[76:],            # map key BytesWritable of 17 bytes
    lambda r: r[:70] + b"\x02" + r[71:],            # map size 2, one entry's bytes
    lambda r: r[:32] + b"X" + r[33:],               # class 1 is not DoubleWritable
])
def test_mapwritable_rejects_malformed_records(mangle):
    rec = wire.mapwritable_encode(uuid.UUID(int=1),
                                  SparseVector.from_dict({uuid.UUID(int=2): 0.5}))
    assert len(rec) == 101 and wire.mapwritable_decode(rec)[0] == uuid.UUID(int=1)
    with pytest.raises(wire.MapWritableError, match="expected .* at byte offset"):
        wire.mapwritable_decode(mangle(rec))


# -- base64 ---------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [0, 1, 8, 513])
def test_base64_round_trips_and_is_line_safe(n):
    rng = np.random.default_rng(100 + n)
    key = uuid.UUID(bytes=rng.bytes(16))
    v = _vector(rng, n) if n else SparseVector.empty()
    line = wire.base64_encode(key, v)
    assert len(line) == 24 + 1 + 32 * n
    assert line.count(b"\t") == 1 and b"\n" not in line and b"\r" not in line
    k, (ids, weights) = wire.base64_decode(line)
    assert k == key and ids.tobytes() == v.ids.tobytes()
    assert np.array_equal(weights, v.weights)


# -- plumbing --------------------------------------------------------------------------------

def test_script_form_runs():
    proc = subprocess.run([sys.executable, str(REPO_ROOT / "bench" / "wire.py"), "--help"],
                          cwd=REPO_ROOT / "tests", capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "--quick" in proc.stdout


def test_write_results_is_strict_json(tmp_path):
    path = common.write_results("x", {"a": np.float64(1.5), "b": [float("nan")],
                                      "c": np.arange(2)}, tmp_path)
    result = json.loads(path.read_text())
    assert path == tmp_path / "x.json"
    assert (result["benchmark"], result["a"], result["b"], result["c"]) == ("x", 1.5, [None], [0, 1])
    assert "cpu_model" in result["machine"]


def test_format_table_aligns_and_marks_pass_fail():
    text = common.format_table(
        [{"k": "a", "v": 1.0, "ok": True}, {"k": "bbb", "v": 22.5, "ok": False},
         {"k": "c", "v": None, "ok": None}],
        [("k", "key"), ("v", "value", "{:.1f}"), ("ok", "result")])
    assert text.splitlines() == [
        "key  value  result",
        "---  -----  ------",
        "a      1.0  PASS",
        "bbb   22.5  FAIL",
        "c        -  -",
    ]


def test_a_failed_quick_run_fails_once_then_skips_and_is_removed(tmp_path):
    out = tmp_path / "out"
    (out / "work").mkdir(parents=True)
    (out / "work" / "left-over").write_bytes(b"x" * 1000)
    run = QuickRun("wire", out, "--sizes", "0")  # refused by the argument parser
    with pytest.raises(pytest.fail.Exception, match=r"exited 2; its output ends:(.|\n)*--sizes"):
        run.get()
    for _ in range(2):  # once reported, the others skip with one line
        with pytest.raises(pytest.skip.Exception, match="reported once"):
            run.get()
    run.close()
    assert not out.exists()


def test_no_benchmark_function_is_longer_than_60_lines():
    import ast

    long = []
    for path in sorted((REPO_ROOT / "bench").glob("**/*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if node.end_lineno - node.lineno + 1 > 60:
                    long.append("%s:%s" % (path.name, node.name))
    assert long == []
