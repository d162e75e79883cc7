"""MRSparseDotProducts submitted to EMR with examples/conf/emr.mrjob.conf,
against moto's in-process AWS mock (EMR itself cannot be reached from here).

What is checked is what EMR would be told: the cluster (release, instance
types and counts, applications), its bootstrap (numpy and scipy installed for
the task Python), one Hadoop Streaming step per job step with the conf's Python,
the map-output compression settings and mrsparse.zip among the files, and
the setup script that puts mrsparse.zip on the tasks' PYTHONPATH.

moto never runs steps, so a thread plays the cluster: it marks each step
mrjob submits as completed, after leaving a part file in the last step's S3
output.  On EMR >= 5.28 mrjob submits a step only when the previous one is
done, so the whole run is played to see every step's arguments.
"""
import os
import re
import threading

import pytest
import yaml

from mrjobs.dot_products import MRSparseDotProducts
from tests.engines.support import EXAMPLE_CONF

# moto and boto3 are part of `make test` (extra "emr"): missing is a failure
import boto3  # noqa: E402
from moto.core import DEFAULT_ACCOUNT_ID  # noqa: E402
from moto.emr.models import emr_backends  # noqa: E402
from moto.server import ThreadedMotoServer  # noqa: E402

pytestmark = pytest.mark.engines

CONF = os.path.join(EXAMPLE_CONF, "emr.mrjob.conf")


@pytest.fixture
def aws(monkeypatch):
    """An in-process moto server; yields its URL."""
    for k, v in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                 "AWS_SESSION_TOKEN": "testing", "AWS_DEFAULT_REGION": "us-east-1",
                 "MOTO_IAM_LOAD_MANAGED_POLICIES": "true"}.items():
        monkeypatch.setenv(k, v)
    for k in ("AWS_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"):
        monkeypatch.delenv(k, raising=False)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield "http://%s:%d" % (host, port)
    server.stop()


#: what the played cluster writes as each step's output
FAKE_OUTPUT = b'"%s"\t{"%s": 0.5}\n' % (b"1" * 32, b"2" * 32)


class PlayedCluster(threading.Thread):
    """Completes every step moto holds, after writing a part file to its -output."""

    def __init__(self, url):
        super().__init__(daemon=True)
        self.s3 = boto3.client("s3", endpoint_url=url, region_name="us-east-1")
        self.done = threading.Event()
        self.steps = []
        self.error = None

    def run(self):
        backend = emr_backends[DEFAULT_ACCOUNT_ID]["us-east-1"]
        while not self.done.wait(0.2):
            for cluster in list(backend.clusters.values()):
                for st in list(cluster.steps):
                    if st.state in ("PENDING", "RUNNING"):
                        try:
                            self._complete(list(st.args))
                            st.state = "COMPLETED"
                        except Exception as e:   # fail the step: mrjob must not wait
                            self.error = e
                            st.state = "FAILED"

    def _complete(self, args):
        self.steps.append(args)
        out = args[args.index("-output") + 1]
        if out.startswith("s3://"):        # the last step's; the others are on HDFS
            bucket, key = re.match(r"s3://([^/]+)/(.*)", out).groups()
            self.s3.put_object(Bucket=bucket, Key=key.rstrip("/") + "/part-00000",
                               Body=FAKE_OUTPUT)


def _s3_text(s3, uri):
    bucket, key = re.match(r"s3://([^/]+)/(.*)", uri).groups()
    return s3.get_object(Bucket=bucket, Key=key)["Body"].read().decode()


@pytest.mark.smoke
def test_submission_matches_the_example_conf(aws, tmp_path):
    conf = yaml.safe_load(open(CONF))["runners"]["emr"]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "%s", "features": {"%s": 1.0}}\n' % ("1" * 32, "2" * 32))
    endpoints = []
    for opt in ("--emr-endpoint", "--s3-endpoint", "--iam-endpoint", "--ec2-endpoint"):
        endpoints += [opt, aws]
    job = MRSparseDotProducts(
        ["-r", "emr", "-c", CONF] + endpoints + [
            # moto's EMR needs the application named (else mrjob hits KeyError 'Name')
            "--application", "Hadoop", "--check-cluster-every", "1",
            "--cloud-fs-sync-secs", "0", "--no-read-logs",
            "--measure", "cosine", "--top-k", "5", str(corpus)])
    n_steps = len(job.steps())
    played = PlayedCluster(aws)
    played.start()
    try:
        with job.make_runner() as runner:
            runner.run()
            assert b"".join(runner.cat_output()) == FAKE_OUTPUT
            # before the runner's cleanup deletes the uploaded scripts
            check_cluster(aws, runner.get_cluster_id(), conf, n_steps)
    finally:
        played.done.set()
        played.join()
    assert played.error is None, played.error
    assert len(played.steps) == n_steps


def check_cluster(aws, cluster_id, conf, n_steps):
    """What EMR was asked to do matches the conf and the job."""
    emr = boto3.client("emr", endpoint_url=aws, region_name="us-east-1")
    s3 = boto3.client("s3", endpoint_url=aws, region_name="us-east-1")
    cluster = emr.describe_cluster(ClusterId=cluster_id)["Cluster"]
    assert cluster["ReleaseLabel"] == conf["release_label"]
    assert "Hadoop" in {a["Name"] for a in cluster["Applications"]}
    groups = {g["InstanceGroupType"]: g for g in
              emr.list_instance_groups(ClusterId=cluster_id)["InstanceGroups"]}
    assert groups["CORE"]["RequestedInstanceCount"] == conf["num_core_instances"]
    assert {g["InstanceType"] for g in groups.values()} == {conf["instance_type"]}

    # bootstrap: mrjob's master script runs the conf's commands on every node
    actions = emr.list_bootstrap_actions(ClusterId=cluster_id)["BootstrapActions"]
    assert len(actions) == 1
    script = _s3_text(s3, actions[0]["ScriptPath"])
    for cmd in conf["bootstrap"]:
        assert cmd in script
    assert "sudo python3.11 -m pip install numpy scipy" in script

    # steps: one Hadoop Streaming step per job step, in order
    steps = emr.list_steps(ClusterId=cluster_id)["Steps"][::-1]   # newest first
    # one block and --top-k: the block pair (the mappers feed it) writes the rows
    assert len(steps) == n_steps == 1
    python_bin = conf["python_bin"]
    for num, step in enumerate(steps):
        args = step["Config"]["Args"]
        assert step["Config"]["Jar"] == "command-runner.jar"
        assert args[0] == "hadoop-streaming"
        files = args[args.index("-files") + 1].split(",")
        # mrjob and mrsparse travel with every step (no install on the nodes)
        assert any(f.endswith("/mrsparse.zip#mrsparse.zip") for f in files)
        assert any(f.endswith("/mrjob.zip#mrjob.zip") for f in files)
        assert any(f.endswith("#dot_products.py") for f in files)
        defines = {args[i + 1] for i, a in enumerate(args) if a == "-D"}
        for name, value in conf["jobconf"].items():
            value = str(value).lower() if isinstance(value, bool) else str(value)
            assert "%s=%s" % (name, value) in defines
        reducer = args[args.index("-reducer") + 1]
        assert re.search(r"\b%s dot_products\.py --step-num=%d --reducer" % (
            re.escape(python_bin), num), reducer), reducer
        assert "--measure cosine --top-k 5" in reducer
        if num:   # each step reads the previous one's output
            prev = steps[num - 1]["Config"]["Args"]
            assert args[args.index("-input") + 1] == prev[prev.index("-output") + 1]

    # the setup wrapper the tasks run puts both zips on PYTHONPATH
    wrapper = next(f for f in files if f.endswith("#setup-wrapper.sh")).split("#")[0]
    text = _s3_text(s3, wrapper)
    assert re.search(r"export PYTHONPATH=.*mrsparse\.zip", text), text
    assert re.search(r"export PYTHONPATH=.*mrjob\.zip", text), text
