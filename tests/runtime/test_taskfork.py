"""Tasks forked from a server that has done their imports
(:mod:`mrjobs.runtime.taskfork`): each does what a fresh interpreter running
its script does, ends as one ends, and is ended as the runner ends a process."""
import os
import resource
import signal
import subprocess
import sys
import textwrap

import pytest

from mrjobs.runtime import taskfork
from mrjobs.runtime.taskfork import TaskForker
from mrjobs.testing import write_lines
from tests.jobs_helpers import corpus

pytestmark = [pytest.mark.versions,
              pytest.mark.skipif(not taskfork.enabled({taskfork.ENV: "1"}),
                                 reason="no fork on this platform")]

#: a script that shows what a task sees: arguments, place, environment,
#: sys.path[0], its streams, threads and atexit at its end
SCRIPT = textwrap.dedent("""\
    import atexit, os, sys, threading
    out = sys.stdout
    print("name", __name__)
    print("argv", sys.argv)
    print("cwd", os.getcwd())
    print("env", os.environ.get("TASKFORK_TEST"), "TASKFORK_GONE" in os.environ)
    print("path0", sys.path[0])
    print("streams", sys.stdin.encoding, sys.stdout.errors, sys.stderr.line_buffering)
    out.flush()
    sys.stdout.buffer.write(sys.stdin.buffer.read().upper())
    sys.stderr.write("to stderr\\n")
    done = threading.Event()
    def late():
        done.wait()
        print("thread joined")
    threading.Thread(target=late).start()
    atexit.register(lambda: print("atexit ran"))
    done.set()
    {end}
    """)


def write_script(directory, end=""):
    real = directory / "real"
    real.mkdir(exist_ok=True)
    (real / "task.py").write_text(SCRIPT.format(end=end))
    wd = directory / "wd"
    wd.mkdir(exist_ok=True)
    link = wd / "task.py"
    if not link.exists():
        link.symlink_to(real / "task.py")  # (mrjob's working dir links its files)
    (wd / "input").write_bytes(b"some input\nlines\n")
    return wd


@pytest.fixture
def forker():
    env = dict(os.environ, TASKFORK_GONE="1")
    f = TaskForker(sys.executable, env, ["json"])
    yield f
    f.close()


def run(tmp_path, start, name, args=(), stdin=None, env=None):
    """Start the task with ``start`` (a forker's, or Popen); its returncode,
    stdout and stderr."""
    wd = tmp_path / "wd"
    env = {k: v for k, v in (env or os.environ).items() if k != "TASKFORK_GONE"}
    env["TASKFORK_TEST"] = "given"
    cmd = [sys.executable, "task.py", "--step-num=0", "--mapper"] + list(args)
    with open(stdin or wd / "input", "rb") as i, open(tmp_path / (name + ".out"), "wb") as o, \
            open(tmp_path / (name + ".err"), "wb") as e:
        proc = start(cmd, i, o, e, str(wd), env)
        assert proc is not None
        code = proc.wait()
    return (code, (tmp_path / (name + ".out")).read_text(),
            (tmp_path / (name + ".err")).read_text())


def fresh(cmd, stdin, stdout, stderr, cwd, env):
    return subprocess.Popen(cmd, stdin=stdin, stdout=stdout, stderr=stderr, cwd=cwd, env=env)


def test_a_forked_task_sees_and_writes_what_a_fresh_interpreter_does(tmp_path, forker):
    write_script(tmp_path)
    forked = run(tmp_path, forker.start, "forked")
    alone = run(tmp_path, fresh, "fresh")
    assert forked == alone
    code, out, err = forked
    assert code == 0 and err == "to stderr\n"
    assert "name __main__\n" in out and "env given False\n" in out
    assert "path0 %s\n" % (tmp_path / "real") in out
    assert out.endswith("SOME INPUT\nLINES\nthread joined\natexit ran\n")


@pytest.mark.parametrize("end", [
    "sys.exit(3)", "sys.exit('it went wrong')", "raise ValueError('bad input')",
    "os.kill(os.getpid(), 9)", "sys.stdout.flush(); os._exit(4)"])
def test_a_forked_task_ends_as_a_fresh_interpreter_ends(tmp_path, forker, end):
    write_script(tmp_path, end)
    code, out, err = run(tmp_path, forker.start, "forked")
    assert (code, out, err) == run(tmp_path, fresh, "fresh")
    assert code != 0


def test_a_forked_task_is_ended_as_a_process_is(tmp_path, forker):
    write_script(tmp_path)
    read, write = os.pipe()  # (input that never ends: the task waits on it)
    wd = tmp_path / "wd"
    with open(read, "rb") as i, open(tmp_path / "o", "wb") as o, open(tmp_path / "e", "wb") as e:
        proc = forker.start([sys.executable, "task.py"], i, o, e, str(wd), dict(os.environ))
        assert proc.poll() is None
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(timeout=0.01)
        proc.terminate()
        assert proc.wait() == -signal.SIGTERM
        assert proc.poll() == -signal.SIGTERM
        proc.kill()  # (ended: nothing to do)
    os.close(write)


def test_a_forked_task_whose_place_is_gone_fails_and_says_why(tmp_path, forker):
    write_script(tmp_path)
    wd = tmp_path / "wd"
    with open(wd / "input", "rb") as i, open(tmp_path / "o", "wb") as o, \
            open(tmp_path / "e", "wb") as e:
        proc = forker.start([sys.executable, "task.py"], i, o, e, str(tmp_path / "gone"),
                            dict(os.environ))
        assert proc.wait() == 1
    assert "No such file or directory" in (tmp_path / "e").read_text()


def test_under_pythonsafepath_neither_puts_the_scripts_directory_first(tmp_path):
    write_script(tmp_path)
    env = dict(os.environ, PYTHONSAFEPATH="1")
    forker = TaskForker(sys.executable, env, [])
    try:
        forked = run(tmp_path, forker.start, "forked", env=env)
    finally:
        forker.close()
    assert forked == run(tmp_path, fresh, "fresh", env=env)
    assert "path0 %s\n" % (tmp_path / "real") not in forked[1]


def test_what_it_cannot_fork_is_left_to_a_fresh_interpreter(tmp_path, forker):
    write_script(tmp_path)
    wd = tmp_path / "wd"
    with open(wd / "input", "rb") as i, open(tmp_path / "o", "wb") as o, \
            open(tmp_path / "e", "wb") as e:
        for cmd in (["python3.0", "task.py"], [sys.executable, "-m", "task"],
                    ["sh", "-ex", "setup-wrapper.sh", sys.executable, "task.py"]):
            assert forker.start(cmd, i, o, e, str(wd), dict(os.environ)) is None, cmd
        forker._server.kill()  # (as a signal to the process group ends it)
        forker._server.wait()
        assert forker.start([sys.executable, "task.py"], i, o, e, str(wd),
                            dict(os.environ)) is None


def test_a_forked_tasks_cpu_counts_in_the_runs(tmp_path):
    """The server tells the CPU of the tasks that ended (the planner's step
    CPU), and once it ends, the waiters and the server are reaped: the tasks'
    CPU reaches the runner's children's usage, as ``time`` and the benchmarks
    read it."""
    write_script(tmp_path, "sum(range(3 * 10 ** 7))")
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    forker = TaskForker(sys.executable, dict(os.environ), [])
    try:
        first = forker.usage()
        assert run(tmp_path, forker.start, "forked")[0] == 0
        assert forker.usage() - first >= 0.1
    finally:
        forker.close()
    assert resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before >= 0.1
    assert forker.usage() == 0.0  # (the server is gone)


@pytest.mark.parametrize("value,linux,elsewhere", [
    (None, True, False), ("1", True, True), ("0", False, False), ("no", False, False),
    ("off", False, False), ("false", False, False)])
def test_the_variable_turns_it_off_or_on(value, linux, elsewhere):
    environ = {} if value is None else {taskfork.ENV: value}
    assert taskfork.enabled(environ, "linux") is linux
    assert taskfork.enabled(environ, "darwin") is elsewhere


def test_the_server_imports_a_job_of_the_package_and_the_usual_modules():
    import mrjobs.dot_products
    script = mrjobs.dot_products.__file__
    assert taskfork.preload_modules(script)[-1] == "mrjobs.dot_products"
    assert "numpy" in taskfork.preload_modules(script)
    assert taskfork.preload_modules("/elsewhere/my_job.py") == list(taskfork.BASE_MODULES)


def local_run(tmp_path, *args):
    """The dot products job on the local runner: its output and the run's
    :class:`~mrjobs.runtime.taskprocesses.TaskProcesses`."""
    from mrjobs.dot_products import MRSparseDotProducts
    path = tmp_path / "corpus.jsonl"
    if not path.exists():
        write_lines(path, corpus(n=120, seed=3))
    job = MRSparseDotProducts(["-r", "local", "--no-conf", "--measure", "cosine", "--top-k", "4",
                               "--blocks", "3", "--jobconf", "mapreduce.job.reduces=2",
                               str(path)] + list(args))
    with job.make_runner() as runner:
        runner.run()
        if runner._setup_wrapper_script_path:
            pytest.skip("the tasks run through mrjob's setup wrapper (the package shipped "
                        "as a zip to an interpreter without it): never forked")
        out = b"".join(runner.cat_output())
        return out, runner._task_processes()


@pytest.mark.slow
@pytest.mark.smoke
@pytest.mark.skipif(not taskfork.enabled(), reason="tasks are forked on Linux")
def test_a_local_run_forks_its_tasks_and_writes_the_same_bytes(tmp_path):
    forked, tasks = local_run(tmp_path)
    assert tasks.forked >= 4 and tasks.fresh == 0
    fresh, tasks = local_run(tmp_path, "--cmdenv", "%s=0" % taskfork.ENV)
    assert tasks.forked == 0 and tasks.fresh >= 4
    assert forked == fresh and forked.count(b"\n") >= 120
