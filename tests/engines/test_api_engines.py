"""mrjobs.neighbours on the real engines: Hadoop Streaming in local mode and
Spark give the inline runner's lines, a scipy matrix with string ids in and
out."""
import numpy as np
import pytest
import scipy.sparse as sp

import mrjobs
from tests.engines.support import LAUNCHER, PYTHON, SPARK_LOG4J

#: the fixtures (streaming_jar, hadoop_tmp, ...)
pytest_plugins = ["tests.engines.fixtures"]
pytestmark = [pytest.mark.engines, pytest.mark.usefixtures("engine_env")]


def matrix():
    m = sp.random(150, 60, density=0.1, random_state=11, format="csr")
    m.data = np.round(m.data * 8 + 1) / 4
    return m, ["doc %d" % i for i in range(150)]


@pytest.mark.smoke
def test_hadoop_local_mode_gives_the_inline_neighbours(streaming_jar, hadoop_tmp):
    m, ids = matrix()
    inline = mrjobs.neighbours(m, ids, measure="cosine", top_k=3, max_df=40)
    hadoop = mrjobs.neighbours(
        m, ids, measure="cosine", top_k=3, max_df=40, runner="hadoop", no_conf=True,
        hadoop_bin=LAUNCHER, hadoop_streaming_jar=streaming_jar,
        hadoop_tmp_dir="file://%s" % (hadoop_tmp / "api"), python_bin=PYTHON,
        sh_bin="/bin/sh -e")
    assert sorted(hadoop.lines) == sorted(inline.lines) and inline.lines
    assert hadoop.rows() == inline.rows() and hadoop.ids == ids


@pytest.mark.smoke
def test_spark_gives_the_inline_neighbours():
    m, ids = matrix()
    inline = mrjobs.neighbours(m, ids, measure="jaccard", threshold=0.2)
    spark = mrjobs.neighbours(
        m, ids, measure="jaccard", threshold=0.2, runner="spark", no_conf=True,
        spark_master="local[2]", python_bin=PYTHON,
        jobconf=["spark.ui.enabled=false",
                 "spark.driver.extraJavaOptions=-Dlog4j2.configurationFile=file:" + SPARK_LOG4J])
    assert sorted(spark.lines) == sorted(inline.lines) and inline.lines
    assert (spark.matrix != inline.matrix).nnz == 0
