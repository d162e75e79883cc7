"""What a run of :class:`~mrjobs.dot_products.MRSparseDotProducts` will cost,
before it runs: a dry run that reads the input's size and a sample of it.

Usage::

    python -m mrjobs.plan INPUT... [the job's options] --reducers 40 --reducer-memory 4096
    python -m mrjobs.plan INPUT... --vectors 10000000     # the same corpus, scaled up
    python -m mrjobs.plan INPUT... --compare              # run the job here, side by side
    python -m mrjobs.plan --calibrate                     # measure this machine's throughput

It prints the block count (what the job would choose, by its own code),
block pairs, bytes shuffled into each step, memory of a block-pair reducer,
the products (multiply-adds, Σdf(df-1)/2 over the kept features), the pairs
that share a feature, wall and CPU time, the peak memory of each kind of
process, the temporary disk of a local run and whether pruning pays.

The sample
----------
At most ``--sample-lines`` lines (default 5000), one after each of as many
evenly spaced byte offsets in the input files (in proportion to their
sizes): deterministic, and spread over the whole input.  The line *after*
an offset is taken, so a line's chance of being picked does not depend on
its own length.  An input of fewer lines than that is read whole.  The
number of vectors is the input's bytes divided by the sampled lines' mean
length (``--vectors N`` sets it, to extrapolate to a bigger corpus drawn
from the same distribution; under ``--queries`` it scales the corpus).

Estimators
----------
Vectors are taken as drawn independently from one distribution (a corpus
in random order, or a uniform sample of it), so a pair of sampled vectors
is a uniform sample of all pairs:

* products: Σ_f df_f(df_f - 1)/2 counts (pair, shared feature) triples;
  its unbiased estimate from ``n`` of ``N`` vectors is
  Σ_f d_f(d_f - 1)/2 · N(N-1)/(n(n-1)) with d_f the sample's df.  A feature
  seen once in the sample adds nothing (it adds nothing in expectation);
  the naive (d_f·N/n)²/2 would add (N/n)²/2 for each of them, an upward
  bias of about nnz·N/n for a small sample.
* the df-cut: a feature's df in the corpus is d_f·N/n (frequent features
  are resolved well); it is cut when that exceeds ``--max-df``.  When
  ``--max-df``·n/N is small (< 10), the cut falls among features seen a few
  times in the sample and the kept products are uncertain: the plan says so
  (sample more lines).
* pairs sharing a feature, each vector's neighbours (after
  ``--threshold``, scored by the job's own measure code): from a sub-sample
  of at most ``--pair-sample`` vectors (default 2000), scaled by
  N(N-1)/(m(m-1)) and (N-1)/(m-1).
* bytes: records built from the sample and encoded by the job's own wire
  protocol (escapes included); record counts from the buffers' flush rules
  (``--buffer-entries``) and ``--reducers`` reduce tasks a step.  ``--max-df``
  under blocks is planned in the form the job picks for ``-r`` and the block
  count (:func:`mrjobs.strategies.sizing.df_cut_form`): count tables to every block pair
  (three steps) or the df and regroup steps (five); without it, two steps (the
  mappers send the vectors to the block pairs).

Resources (:mod:`mrjobs.plan.resources`): wall and CPU seconds from each
step's CPU model (``k + c_bytes * bytes``, ``+ c_pairs * products computed``
on the block pairs, fitted per step on the calibration's runs, the share
``par`` of it spread over the slots), the peak memory of each kind of
process (launcher, the local runner's sort, the vectors step's tasks, a
block-pair reducer), the temporary disk of a local run (the largest of its
phases, see :mod:`mrjobs.runtime.localrunner`) and whether pruning pays (the
job's own bounds on the pair sub-sample).  The constants are measured by
``--calibrate`` (five runs of the job on generated corpora on the local
runner, CPU seconds so that a busy machine does not inflate them much, and
each process's peak memory), stored with the date and the machine in the
package data ``mrjobs/plan/calibration.json`` (``make bench`` refreshes it);
a constant a calibration lacks takes its default
(:data:`mrjobs.plan.resources.DEFAULTS`). A cluster's slot is taken to be as
fast as one core here.

Depends on the job's own sizing code (:mod:`mrjobs.strategies.sizing`): ``estimate_blocks``,
``pair_memory_bytes``, ``DEFAULT_BLOCK_ENTRIES``, ``INPUT_BYTES_PER_ENTRY``, ``bytes_per_entry``
and ``default_blocks``.

Modules: :mod:`~mrjobs.plan.sample` (reading the sample),
:mod:`~mrjobs.plan.estimates` (the estimates and the plan's dict),
:mod:`~mrjobs.plan.wirecost` (bytes of each step), :mod:`~mrjobs.plan.resources`
(time, memory, disk, pruning; reading a calibration), :mod:`~mrjobs.plan.render`
(the plan as text and JSON, and against a run), :mod:`~mrjobs.plan.cli` (the
planner's options, :func:`plan`, and the job's temporary disk), and above the
job -- they run it: :mod:`~mrjobs.plan.realruns` (``--compare`` and
``--calibrate``: :func:`~mrjobs.plan.realruns.measure_run`,
:func:`~mrjobs.plan.realruns.calibrate`), :mod:`~mrjobs.plan.procmem` (the peak
memory of a run's processes) and :mod:`mrjobs.plan.__main__` (the command
line's checks and ``main``).  This package holds the public names of the
modules below the job (the dot-products job calls :func:`plan` for its
temporary disk, so the package imports nothing that imports the job).
"""
from mrjobs.plan.sample import PlanError, Sample, SampleRead, input_files, read_sample
from mrjobs.plan.estimates import MAX_TASKS, POSTING_ENTRY_BYTES, estimate, job_args
from mrjobs.plan.render import as_json, comparison, format_comparison, format_plan
from mrjobs.plan.resources import CALIBRATION, CALIBRATION_BYTES, load_calibration
from mrjobs.plan.cli import MAX_PAIR_SAMPLE, MAX_VECTORS, plan

__all__ = ["Sample", "read_sample", "estimate", "format_plan", "PlanError",
           # the modules' other names, as the planner's one module had them
           "SampleRead", "input_files", "MAX_TASKS", "POSTING_ENTRY_BYTES", "job_args",
           "as_json", "format_comparison", "CALIBRATION", "CALIBRATION_BYTES",
           "comparison", "load_calibration", "MAX_PAIR_SAMPLE", "MAX_VECTORS", "plan"]
