"""A real pseudo-distributed Hadoop for the tests and for trying jobs by hand:
HDFS (NameNode + DataNode) and YARN (ResourceManager + NodeManagers running
MapReduce tasks in containers) plus the JobHistory server, all in one JVM
(Hadoop's CLI MiniCluster, ``org.apache.hadoop.mapreduce.MiniHadoopClusterManager``)
built from the Maven artifacts that ``tests/engines/fetch-jars.sh`` puts in
``.cache/engines/cluster`` (``lib/`` jars, ``classes/`` the stop-on-signal
wrapper ``tests/engines/minicluster/MiniCluster.java``).

:class:`Cluster` starts it, waits until it is ready, writes a client conf
dir (``HADOOP_CONF_DIR``) that ``tests/engines/hadoop`` and mrjob's ``-r hadoop``
use unchanged, and stops it: cleanly by a signal to the wrapper, else by
killing its process group and every process left in its work dir
(containers run in sessions of their own).  For the tests that inject
faults it also stops one NodeManager on request (:meth:`Cluster.stop_nodemanager`)
and tells which NodeManager runs a container's process (:meth:`Cluster.nodemanager_of`).

By hand (``make cluster``)::

    python -m tests.engines.cluster [--nodemanagers N] [--workdir DIR]

runs a cluster in the foreground until Ctrl-C and prints how to point mrjob at it.
"""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

from tests.engines.support import CACHE, FETCH, HERE, LAUNCHER, REPO

CLUSTER_JARS = os.path.join(CACHE, "cluster")
LOG4J = os.path.join(HERE, "minicluster", "log4j-cluster.properties")
MAIN_CLASS = "MiniCluster"

#: container sizes that fit 2 NodeManagers on a small machine (MB, heap)
TASK_MEMORY = {
    "yarn.app.mapreduce.am.resource.mb": "768",
    "yarn.app.mapreduce.am.command-opts": "-Xmx512m",
    "mapreduce.map.memory.mb": "512",
    "mapreduce.map.java.opts": "-Xmx256m",
    "mapreduce.reduce.memory.mb": "512",
    "mapreduce.reduce.java.opts": "-Xmx256m",
}


#: a test cluster's latency (job settings, in the client's mapred-site): the
#: AppMaster asks for containers every 250 ms (1 s by default), and the
#: AppMaster and task JVMs -- short-lived here, and many on two cores --
#: compile with C1 alone and collect with the serial GC (the admin opts come
#: before a job's own java.opts, which keep their -Xmx); a map task's sort
#: buffer is 32 MB (100 MB by default, zeroed by each task)
LATENCY = {
    "yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms": "250",
    "yarn.app.mapreduce.am.admin-command-opts": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
    "mapreduce.admin.map.child.java.opts": "-Djava.net.preferIPv4Stack=true "
    "-Dhadoop.metrics.log.level=WARN -XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
    "mapreduce.admin.reduce.child.java.opts": "-Djava.net.preferIPv4Stack=true "
    "-Dhadoop.metrics.log.level=WARN -XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
    "mapreduce.task.io.sort.mb": "32",
}


class ClusterError(RuntimeError):
    """The cluster did not start or did not stop; the message holds its log's end."""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _site(path, props):
    root = ET.Element("configuration")
    for name, value in props.items():
        p = ET.SubElement(root, "property")
        ET.SubElement(p, "name").text = name
        ET.SubElement(p, "value").text = str(value)
    ET.indent(root)
    with open(path, "wb") as f:
        f.write(b'<?xml version="1.0"?>\n<!-- written by tests/engines/cluster.py -->\n')
        f.write(ET.tostring(root))
        f.write(b"\n")


def _read_site(path):
    return {p.findtext("name"): p.findtext("value")
            for p in ET.parse(path).getroot().iter("property")}


def _pids():
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def _parent(pid):
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            stat = f.read()
    except OSError:
        return None
    return int(stat[stat.rindex(b")") + 2:].split()[1])


def _cwd(pid):
    try:
        return os.readlink("/proc/%d/cwd" % pid)
    except OSError:
        return None


def _cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        return ""


class Cluster:
    """One pseudo-distributed Hadoop: start, client conf, stop.

    Parameters
    ----------
    workdir : str
        An empty or missing directory of its own: HDFS and YARN keep their
        data under ``workdir/target``, the client conf goes to ``workdir/conf``,
        the cluster's log to ``workdir/cluster.log``.
    nodemanagers : int
        YARN NodeManagers (each runs containers; 2 exercise a real shuffle
        between nodes).
    stop_with_parent : bool
        The cluster also stops when this process dies (its stdin pipe closes),
        for a test session killed with SIGKILL.
    """

    def __init__(self, workdir, nodemanagers=2, stop_with_parent=True, memory_mb=4096):
        self.workdir = os.path.abspath(workdir)
        self.nodemanagers = nodemanagers
        self.stop_with_parent = stop_with_parent
        self.memory_mb = memory_mb
        self.conf_dir = os.path.join(self.workdir, "conf")
        self.log_path = os.path.join(self.workdir, "cluster.log")
        #: where the wrapper takes requests (stop-nodemanager-I) and answers them
        self.control_dir = os.path.join(self.workdir, "control")
        self.proc = None
        self.ports = {}
        self.start_seconds = self.stop_seconds = None
        self.stopped_cleanly = None
        #: processes still alive after the stop that had to be killed (pid, cmdline)
        self.leftovers = []
        #: dirs holding ``userlogs/`` (links to the NodeManagers' task logs),
        #: for mrjob's ``--hadoop-log-dirs``
        self.log_dirs = []

    # -- start ---------------------------------------------------------------

    def classpath(self):
        lib = os.path.join(CLUSTER_JARS, "lib")
        classes = os.path.join(CLUSTER_JARS, "classes")
        if not os.path.isfile(os.path.join(classes, MAIN_CLASS + ".class")):
            raise ClusterError("no cluster jars in %s: run `make engines` (or %s)" % (
                CLUSTER_JARS, FETCH))
        return "%s:%s/*" % (classes, lib)

    def command(self):
        p = self.ports
        conf = {
            # the cluster's own settings (see /work notes: verified values)
            "yarn.nodemanager.vmem-check-enabled": "false",
            "yarn.nodemanager.pmem-check-enabled": "false",
            "yarn.minicluster.yarn.nodemanager.resource.memory-mb": str(self.memory_mb),
            "yarn.scheduler.minimum-allocation-mb": "256",
            "dfs.replication": "1",
            # NodeManagers talk to the ResourceManager over RPC, as on a real
            # cluster (the in-process shortcut ignores a stopping NodeManager's
            # unregistration: the node would look alive for 10 minutes)
            "yarn.minicluster.use-rpc": "true",
            # a NodeManager's stop waits this + 1.25 s for containers (default 5 s)
            "yarn.nodemanager.process-kill-wait.ms": "1000",
            # NodeManagers report (and get containers) every 250 ms (default 1 s)
            "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms": "250",
            # every port chosen here: no clash with another program's defaults
            "yarn.resourcemanager.scheduler.address": "localhost:%d" % p["scheduler"],
            "yarn.resourcemanager.resource-tracker.address": "localhost:%d" % p["tracker"],
            "yarn.resourcemanager.admin.address": "localhost:%d" % p["rmadmin"],
            "yarn.resourcemanager.webapp.address": "localhost:%d" % p["rmweb"],
            "mapreduce.jobhistory.webapp.address": "localhost:%d" % p["jhsweb"],
            "mapreduce.jobhistory.admin.address": "localhost:%d" % p["jhsadmin"],
        }
        java = os.path.join(os.environ["JAVA_HOME"], "bin", "java")
        cmd = [java, "-Xmx768m", "-XX:+UseSerialGC",
               "-Dlog4j.configuration=file:" + LOG4J,
               "-Dmrsparse.stopOnStdinEof=%s" % str(self.stop_with_parent).lower(),
               "-Dmrsparse.userlogs=" + os.path.join(self.workdir, "logs", "userlogs"),
               "-Dmrsparse.control=" + self.control_dir,
               "-cp", self.classpath(), MAIN_CLASS,
               "-format", "-nnport", str(p["nn"]), "-nnhttpport", str(p["nnhttp"]),
               "-rmport", str(p["rm"]), "-jhsport", str(p["jhs"]),
               "-datanodes", "1", "-nodemanagers", str(self.nodemanagers),
               "-writeConfig", os.path.join(self.workdir, "cluster-conf.xml"),
               "-writeDetails", os.path.join(self.workdir, "cluster-details.json")]
        for name, value in conf.items():
            cmd += ["-D", "%s=%s" % (name, value)]
        return cmd

    def start(self, timeout=300):
        """Start the cluster and wait until it is ready (or raise ClusterError)."""
        if self.proc is not None:
            raise ClusterError("already started")
        os.makedirs(self.workdir, exist_ok=True)
        if os.listdir(self.workdir):
            raise ClusterError("work dir %s is not empty" % self.workdir)
        if not os.environ.get("JAVA_HOME"):
            # the NodeManagers start containers with $JAVA_HOME/bin/java
            java = shutil.which("java")
            if not java:
                raise ClusterError("no java on PATH and JAVA_HOME unset")
            os.environ["JAVA_HOME"] = os.path.dirname(os.path.dirname(os.path.realpath(java)))
        self.ports = {k: free_port() for k in (
            "nn", "nnhttp", "rm", "jhs", "scheduler", "tracker", "rmadmin", "rmweb",
            "jhsweb", "jhsadmin")}
        cmd = self.command()
        t0 = time.monotonic()
        self._log = open(self.log_path, "ab")
        # a session of its own: a Ctrl-C on the terminal reaches the test run,
        # which stops the cluster in order, and the group can be killed whole
        self.proc = subprocess.Popen(
            cmd, cwd=self.workdir, stdin=subprocess.PIPE if self.stop_with_parent else
            subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
            start_new_session=True)
        details = os.path.join(self.workdir, "cluster-details.json")
        conf = os.path.join(self.workdir, "cluster-conf.xml")
        try:
            while not (os.path.exists(details) and os.path.exists(conf)):
                if self.proc.poll() is not None:
                    raise ClusterError("the cluster exited with status %s while starting"
                                       % self.proc.returncode)
                if "Exception in thread \"main\"" in self.log_tail(200000):
                    raise ClusterError("the cluster failed while starting")
                if time.monotonic() - t0 > timeout:
                    raise ClusterError("the cluster was not ready after %d s" % timeout)
                time.sleep(0.5)
            time.sleep(0.5)   # both files are written by then; let the writes finish
            self._write_client_conf(_read_site(conf), json.load(open(details)))
        except BaseException as e:
            self.stop()
            if isinstance(e, ClusterError):
                raise ClusterError("%s; the end of %s:\n%s" % (
                    e, self.log_path, self.log_tail())) from None
            raise
        self.start_seconds = time.monotonic() - t0
        return self

    def _write_client_conf(self, written, details):
        # the file -writeConfig writes is the manager's own Configuration (it
        # still says mapreduce.framework.name=local): the client conf is ours
        host = written["yarn.resourcemanager.address"].rsplit(":", 1)[0]
        assert int(details["namenode_port"]) == self.ports["nn"], details
        self.fs_uri = "hdfs://localhost:%d" % self.ports["nn"]
        os.makedirs(self.conf_dir)
        _site(os.path.join(self.conf_dir, "core-site.xml"), {"fs.defaultFS": self.fs_uri})
        # in core-site this would be overridden by hdfs-default.xml
        _site(os.path.join(self.conf_dir, "hdfs-site.xml"), {"dfs.replication": "1"})
        p = self.ports
        _site(os.path.join(self.conf_dir, "yarn-site.xml"), {
            "yarn.resourcemanager.address": "%s:%d" % (host, p["rm"]),
            "yarn.resourcemanager.scheduler.address": "localhost:%d" % p["scheduler"],
            "yarn.resourcemanager.webapp.address": "localhost:%d" % p["rmweb"],
            # the job client then gives its own classpath to the AppMaster and
            # the tasks (without it: "Could not find or load main class MRAppMaster")
            "yarn.is.minicluster": "true",
        })
        _site(os.path.join(self.conf_dir, "mapred-site.xml"), dict(TASK_MEMORY, **LATENCY, **{
            "mapreduce.framework.name": "yarn",
            "mapreduce.jobhistory.address": "localhost:%d" % p["jhs"],
            "mapreduce.jobhistory.webapp.address": "localhost:%d" % p["jhsweb"],
        }))
        # sourced by tests/engines/hadoop, as bin/hadoop sources it: the client
        # must use the unshaded cluster jars (the shaded client jars of local mode lack
        # MRAppMaster and YarnChild, which the containers load from its classpath)
        with open(os.path.join(self.conf_dir, "hadoop-env.sh"), "w") as f:
            f.write("# written by tests/engines/cluster.py\n"
                    "MRSPARSE_HADOOP_JARS=cluster\n")
        # mrjob looks for task logs in LOG_DIR/userlogs/APPLICATION/CONTAINER:
        # the wrapper keeps links there (-Dmrsparse.userlogs)
        self.log_dirs = [os.path.join(self.workdir, "logs")]
        # mrjob options for this cluster (JSON is YAML too): combine with a
        # user's conf, e.g. -c examples/conf/hadoop.mrjob.conf -c THIS
        with open(os.path.join(self.conf_dir, "mrjob.conf"), "w") as f:
            json.dump({"runners": {"hadoop": {
                "hadoop_bin": LAUNCHER,
                "hadoop_streaming_jar": os.path.join(CACHE, "hadoop-streaming.jar"),
                "hadoop_log_dirs": self.log_dirs}}}, f, indent=2)
            f.write("\n")

    @property
    def env(self):
        """What a client needs in its environment."""
        return {"HADOOP_CONF_DIR": self.conf_dir, "JAVA_HOME": os.environ["JAVA_HOME"]}

    def log_tail(self, n=6000):
        try:
            with open(self.log_path, "rb") as f:
                f.seek(max(0, os.path.getsize(self.log_path) - n))
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    # -- faults --------------------------------------------------------------

    def stop_nodemanager(self, index, timeout=600):
        """Stop NodeManager ``index`` (from 0) while the rest of the cluster
        runs on: it unregisters from the ResourceManager and its containers
        are killed.  Returns its service state after the stop ("STOPPED");
        raises ClusterError if the wrapper failed to stop it or did not answer
        within ``timeout`` s (a bound against hanging, not a deadline)."""
        answers = {o: os.path.join(self.control_dir, "nodemanager-%d.%s" % (index, o))
                   for o in ("stopped", "failed")}
        if any(os.path.exists(p) for p in answers.values()):
            raise ClusterError("NodeManager %d was stopped already" % index)
        request = os.path.join(self.control_dir, "stop-nodemanager-%d" % index)
        with open(request + ".tmp", "w"):
            pass
        os.replace(request + ".tmp", request)
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            for outcome, path in answers.items():
                if os.path.exists(path):
                    with open(path) as f:
                        answer = f.read()
                    if outcome == "failed":
                        raise ClusterError("NodeManager %d did not stop: %s" % (index, answer))
                    return answer
            if self.proc is None or self.proc.poll() is not None:
                raise ClusterError("the cluster is not running")
            time.sleep(0.5)
        raise ClusterError("no answer to stopping NodeManager %d after %d s; the end of %s:\n%s"
                           % (index, timeout, self.log_path, self.log_tail()))

    def nodemanager_of(self, pid):
        """The index of the NodeManager whose container runs process ``pid``
        (from the container's working dir, which lies in one of that
        NodeManager's local dirs), or None."""
        cwd = _cwd(pid) or ""
        if not (cwd + os.sep).startswith(self.workdir + os.sep):
            return None
        m = re.search(r"-localDir-nm-(\d+)_\d+/", cwd + "/")
        return int(m.group(1)) if m else None

    # -- stop ----------------------------------------------------------------

    def processes(self):
        """Live processes of this cluster: the JVM, its descendants, and any
        process working in the work dir (containers run in sessions of their
        own and outlive a killed NodeManager).  [(pid, cmdline)]"""
        pids = _pids()
        found = set()
        if self.proc is not None and self.proc.poll() is None:
            found.add(self.proc.pid)
        parents = {pid: _parent(pid) for pid in pids}
        changed = True
        while changed:
            changed = False
            for pid, ppid in parents.items():
                if ppid in found and pid not in found:
                    found.add(pid)
                    changed = True
        prefix = self.workdir + os.sep
        for pid in pids:
            cwd = _cwd(pid)
            if cwd and (cwd + os.sep).startswith(prefix) and pid != os.getpid():
                found.add(pid)
        out = []
        for pid in sorted(found):
            try:
                with open("/proc/%d/stat" % pid, "rb") as f:
                    if f.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                        continue      # a zombie: dead, waiting for its parent
            except OSError:
                continue
            out.append((pid, _cmdline(pid)))
        return out

    def stop(self, timeout=120):
        """Stop the cluster: SIGTERM to the wrapper (a clean stop of YARN and
        HDFS), then, after ``timeout`` s or for anything left, SIGKILL to its
        process group and to every process of :meth:`processes`.  Idempotent."""
        if self.proc is None:
            return
        t0 = time.monotonic()
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGTERM)
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                pass
        self.stopped_cleanly = self.proc.poll() == 0
        # the last resort: the group, then whatever still works in our dir
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        for _ in range(3):
            left = self.processes()
            if not left:
                break
            self.leftovers += left
            for pid, _ in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.5)
        if self.proc.stdin:
            self.proc.stdin.close()
        self._log.close()
        self.stop_seconds = time.monotonic() - t0

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def hadoop(cluster, *args, check=True, timeout=300):
    """Run ``tests/engines/hadoop ARGS`` against ``cluster``; CompletedProcess (text)."""
    env = dict(os.environ, **cluster.env)
    return subprocess.run([LAUNCHER] + list(args), env=env, check=check, timeout=timeout,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python -m tests.engines.cluster",
        description="Run a pseudo-distributed Hadoop (HDFS + YARN) in the foreground "
                    "until Ctrl-C.")
    ap.add_argument("--nodemanagers", type=int, default=2)
    ap.add_argument("--workdir", help="an empty dir for the cluster's data "
                    "(default: a new temporary dir, removed afterwards)")
    args = ap.parse_args(argv)
    if args.nodemanagers < 1:
        ap.error("--nodemanagers must be at least 1")
    workdir = args.workdir or tempfile.mkdtemp(prefix="mrsparse-cluster-")
    cluster = Cluster(workdir, args.nodemanagers, stop_with_parent=True)
    stop = {}

    def on_signal(signum, _frame):
        stop["signal"] = signum
        raise KeyboardInterrupt

    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)
    print("starting HDFS + YARN (%d NodeManagers) in %s ..." % (args.nodemanagers, workdir),
          flush=True)
    try:
        cluster.start()
        hadoop(cluster, "fs", "-mkdir", "-p", "/user/%s" % _user())
        conf = cluster.conf_dir
        print(USAGE.format(seconds=cluster.start_seconds, conf=conf, fs=cluster.fs_uri,
                           launcher=os.path.relpath(LAUNCHER), log=cluster.log_path,
                           rmweb=cluster.ports["rmweb"], python=_python()),
              flush=True)
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    except ClusterError as e:
        print(str(e), file=sys.stderr)
        return 1
    finally:
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, signal.SIG_IGN)   # a second Ctrl-C must not cut the stop short
        if cluster.proc is not None:
            print("\nstopping the cluster ...", flush=True)
            cluster.stop()
            print("stopped in %.0f s (%s)%s" % (
                cluster.stop_seconds, "cleanly" if cluster.stopped_cleanly else "killed",
                "; killed leftovers: %r" % cluster.leftovers if cluster.leftovers else ""))
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


def _user():
    import getpass
    return getpass.getuser()


def _python():
    return os.path.relpath(sys.executable) if sys.executable.startswith(REPO) else sys.executable


USAGE = """
HDFS + YARN are up (started in {seconds:.0f} s). HDFS: {fs}  YARN web UI: http://localhost:{rmweb}
Cluster log: {log}

Point Hadoop clients at it with its conf dir (the launcher stands in for bin/hadoop):

    export HADOOP_CONF_DIR={conf}
    {launcher} fs -ls /

and mrjob's hadoop runner with the mrjob.conf beside it (launcher, streaming
jar, task logs for error reports), after your own:

    HADOOP_CONF_DIR={conf} {python} -m mrjobs.dot_products -r hadoop \\
        -c examples/conf/hadoop.mrjob.conf -c {conf}/mrjob.conf \\
        --python-bin "$PWD/{python}" -D mapreduce.job.reduces=2 \\
        examples/sample.jsonl --measure cosine --top-k 3

Ctrl-C stops the cluster.
"""

if __name__ == "__main__":
    sys.exit(main())
