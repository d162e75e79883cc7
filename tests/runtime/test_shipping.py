"""The jobs ship mrcodecs and mrjobs to their tasks themselves (mrsparse.zip
in mrjob's py_files): a task interpreter with the jobs' requirements alone
(numpy, scipy) runs them.

The interpreter is a real, separate virtualenv (``python -m venv`` + ``pip
install numpy scipy``, cached in .cache/task-venv).  The same shipping on
real Hadoop is tested in tests/engines/test_hadoop.py.
"""
import logging
import re
import zipfile

import pytest
from mrjob.job import MRJob
from mrjob.step import StepFailedException

from mrjobs import job as base
from mrjobs.runtime.shipping import package_zip
from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.testing import run_job
from tests.engines.support import mrsparse_counters
from tests.jobs_helpers import assert_scores_close

#: the fixtures (streaming_jar, task_python, corpus_files, ...)
pytest_plugins = ["tests.engines.fixtures"]
pytestmark = [pytest.mark.engines, pytest.mark.usefixtures("engine_env")]

ARGS = ["--measure", "jaccard", "--threshold", "0.2"]


def test_zip_holds_both_packages_and_no_extension():
    names = zipfile.ZipFile(package_zip()).namelist()
    assert {"mrcodecs/__init__.py", "mrjobs/__init__.py", "mrjobs/dot_products.py",
            "mrjobs/job.py"} <= set(names)
    assert not [n for n in names if n.endswith((".so", ".pyc"))]


@pytest.mark.smoke
def test_local_runner_with_task_python(corpus_files, task_python):
    corpus, _ = corpus_files
    run = run_job(MRSparseDotProducts, None, ARGS + ["--python-bin", task_python],
                  runner="local", input_paths=[corpus])
    inline = run_job(MRSparseDotProducts, None, ARGS, input_paths=[corpus])
    assert len(inline.output) > 100
    assert_scores_close(dict(run.output), dict(inline.output), rtol=1e-12)
    assert mrsparse_counters(run.counters) == mrsparse_counters(inline.counters)


def test_without_the_zip_the_tasks_fail(corpus_files, task_python, monkeypatch,
                                        caplog):
    # the control: the same run without mrsparse.zip cannot import our packages,
    # so it is the zip (not some path on the machine) that makes the run work
    monkeypatch.setattr(base.SparseJob, "_runner_kwargs", MRJob._runner_kwargs)
    corpus, _ = corpus_files
    caplog.set_level(logging.INFO, logger="mrjob")
    with pytest.raises(StepFailedException):
        run_job(MRSparseDotProducts, None, ARGS + ["--python-bin", task_python],
                runner="local", input_paths=[corpus])
    assert re.search(r"ModuleNotFoundError: No module named 'mr(codecs|jobs)'", caplog.text)
