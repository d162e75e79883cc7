"""Run any MRJob class on in-memory input and get its decoded output.

For users who test their own jobs: :func:`run_job` writes the sample lines
to a temporary file, runs the job with mrjob's inline runner (or another
runner that works on this machine, such as ``"local"``), and returns the
output decoded by the job's own output protocol, in a deterministic order,
together with the job's counters.  A run leaves nothing behind, failed
or not: mrjob's temporary files go under the run's own temporary directory
(mrjob keeps them after a failure), and its setup wrapper's lock file,
``/tmp/wrapper.lock.<job key>`` (made by the tasks of the local and Hadoop
runners, removed by no one), goes with them.

Examples
--------
A pytest test of a word-count job (``python -m pytest test_wordcount.py``)::

    from mrjob.job import MRJob
    from mrjobs.testing import run_job

    class MRWordCount(MRJob):
        def mapper(self, _, line):
            for word in line.split():
                yield word, 1

        def reducer(self, word, counts):
            yield word, sum(counts)

    def test_word_count():
        result = run_job(MRWordCount, ["a b", "b"])
        assert dict(result.output) == {"a": 1, "b": 2}

>>> from mrjobs.dot_products import MRSparseDotProducts
>>> lines = ['{"id": "00000000-0000-0000-0000-000000000001", "features": {"00000000-0000-0000-0000-00000000000f": 2}}',
...          '{"id": "00000000-0000-0000-0000-000000000002", "features": {"00000000-0000-0000-0000-00000000000f": 3}}']
>>> result = run_job(MRSparseDotProducts, lines)
>>> [(str(k)[-1], {str(n)[-1]: s for n, s in v.items()}) for k, v in result.output]
[('1', {'2': 6.0}), ('2', {'1': 6.0})]
"""
import inspect
import os
import sys
import tempfile
from dataclasses import dataclass, field

from mrjob.util import to_lines

__all__ = ["run_job", "JobRun", "write_lines"]


@dataclass
class JobRun:
    """What :func:`run_job` returns.

    Attributes
    ----------
    output : list of (key, value)
        The job's output decoded by its output protocol, ordered by the
        encoded output lines (part files come back in no fixed order).
    counters : dict
        ``{group: {counter name: total over all steps}}``.
    lines : list of bytes
        The raw output lines (without ``\\n``), in the same order.
    """

    output: list
    counters: dict = field(default_factory=dict)
    lines: list = field(default_factory=list)


def write_lines(path, lines):
    """Write str or bytes lines to ``path``, each ended by ``\\n``."""
    with open(path, "wb") as f:
        for line in lines:
            f.write(line if isinstance(line, bytes) else line.encode("utf-8"))
            f.write(b"\n")


def run_job(job_class, input_lines=None, args=(), runner="inline", input_paths=()):
    """Run ``job_class`` on sample input and return its decoded output.

    Parameters
    ----------
    job_class : type
        A subclass of :class:`mrjob.job.MRJob`.
    input_lines : iterable of str or bytes, optional
        Input lines (without line endings); written to a temporary file
        that the job reads.
    args : sequence of str
        Further command-line arguments (job options, mrjob options).
    runner : str
        ``"inline"`` (default, in-process, fast) or ``"local"`` (separate
        task processes, closer to Hadoop; they run a small script that
        imports ``job_class`` from its module, so a job class defined in a
        test module works too).
    input_paths : sequence of str
        Input files to read besides (or instead of) ``input_lines``.

    Returns
    -------
    JobRun

    Notes
    -----
    mrjob's temporary files go under a temporary directory of the run's own
    (``--local-tmp-dir``; one in ``args`` wins), removed when the run ends.
    """
    with tempfile.TemporaryDirectory(prefix="mrjobs-testing-") as tmp:
        paths = list(input_paths)
        if input_lines is not None:
            path = os.path.join(tmp, "input.txt")
            write_lines(path, input_lines)
            paths.append(path)
        # mrjob's temp dir inside ours: a failed run keeps it (mrjob's
        # cleanup_on_failure), and it then goes with ours
        argv = ["-r", runner, "--no-conf", "--local-tmp-dir",
                os.path.join(tmp, "mrjob")] + list(args) + paths
        job = job_class(argv)
        if runner != "inline":
            # tasks run the job's script as a program: a job class defined in
            # a module without ``if __name__ == "__main__": Job.run()`` (a test
            # module) would run nothing, and the job would output nothing
            script = _task_script(job_class, tmp)
            if script:
                job.mr_job_script = lambda: script
        lines, counters = _run(job)
        protocol = job.output_protocol()
        return JobRun([protocol.read(line) for line in lines], counters, lines)


def _run(job):
    """The output lines (sorted) and counters of a run of ``job``, as the
    launcher runs it: with the runs before its own (the prefix strategy's df
    count, whose counters are left out) and after it, over its output
    (``--ids any``'s second run, whose counters are added)."""
    getattr(job, "set_up_runs", lambda: None)()
    return _runs(job, [])


def _runs(job, counters):
    with job.make_runner() as r:
        try:
            r.run()
            if not getattr(job, "preliminary_run", lambda: False)():
                counters = counters + r.counters()
            if getattr(job, "second_run", lambda: False)():
                job.start_second_run(r)
                return _runs(job, counters)
            return _lines(r), _counters(counters)
        finally:
            _remove_setup_lock(r)


def _lines(runner):
    return sorted(line.rstrip(b"\r\n") for line in to_lines(runner.cat_output()))


def _counters(steps):
    """``{group: {name: total over the steps}}`` of a run's ``runner.counters()``."""
    counters = {}
    for step in steps:
        for group, names in step.items():
            g = counters.setdefault(group, {})
            for name, n in names.items():
                g[name] = g.get(name, 0) + n
    return counters


def _remove_setup_lock(runner):
    """Remove mrjob's setup wrapper lock of ``runner``'s run,
    ``/tmp/wrapper.lock.<job key>`` (the path is written into mrjob.bin's
    wrapper script, whatever TMPDIR says): each task of a run that ships
    files -- every local run, which ships mrjob itself -- makes it, and
    nothing removes it."""
    try:
        os.remove("/tmp/wrapper.lock.%s" % runner.get_job_key())
    except OSError:  # none: no task ran a wrapper
        pass


def _task_script(job_class, directory):
    """A script that runs ``job_class`` when executed (tasks of the local and
    Hadoop runners run ``python <script> --mapper ...``), importing the class
    from its module; None when the class lives in ``__main__``."""
    module = job_class.__module__
    if module == "__main__":
        return None
    source = inspect.getsourcefile(sys.modules[module])
    root = os.path.dirname(os.path.abspath(source))
    for _ in range(module.count(".")):
        root = os.path.dirname(root)
    path = os.path.join(directory, "run_%s.py" % job_class.__name__)
    with open(path, "w") as f:
        f.write("import sys\nsys.path.insert(0, %r)\nfrom %s import %s\n"
                "if __name__ == '__main__':\n    %s.run()\n"
                % (root, module, job_class.__qualname__, job_class.__qualname__))
    return path
