"""A task's status line: what it has read and, in the blocks strategy's pair
step, the products it has done.

Every task of the mrsparse jobs tells, every few seconds
(:data:`STATUS_EVERY`), a Hadoop Streaming status line, which Hadoop shows
as the task's status and the inline and local runners' progress monitor
(:mod:`mrjobs.runtime.progress`) reads back from the task's stderr::

    reporter:status:mrsparse running: 1204 lines, 12300000 bytes
    reporter:status:mrsparse running: 6 lines, 18400000 bytes; products 52000000 of 81000000 in block-pair shares 3 of 16

``done`` instead of ``running`` once the task has ended.  The products are
the multiply-adds of the pair product (:func:`mrjobs.pairs.chunks.row_products`):
done so far, and planned in the block pairs the task has begun, each pair's
planned exactly before it multiplies.  A block pair's *share* is what it
is expected to hold of the step's products, in units of 1/B² (B blocks):
a diagonal pair 1, another pair 2 (under ``--queries``, every pair 1), B²
in all, the blocks being a uniform hash partition of the vectors.
"""
import re
import time

__all__ = ["TaskStatus", "status_text", "parse_status", "STATUS_EVERY"]

#: seconds between a task's status lines
STATUS_EVERY = 3.0

_STATUS = re.compile(rb"reporter:status:mrsparse (running|done): (\d+) lines, (\d+) bytes"
                     rb"(?:; products (\d+) of (\d+) in block-pair shares (\d+) of (\d+))?")


def status_text(done, lines, nbytes, work=None):
    """The status line of a task (parsed back by :func:`parse_status`);
    ``work``: (products done, planned, shares begun, shares in all) or None.

    >>> status_text(False, 3, 120)
    'mrsparse running: 3 lines, 120 bytes'
    >>> status_text(True, 3, 120, (10, 40, 1, 4))
    'mrsparse done: 3 lines, 120 bytes; products 10 of 40 in block-pair shares 1 of 4'
    """
    text = "mrsparse %s: %d lines, %d bytes" % ("done" if done else "running", lines, nbytes)
    if work is not None:
        text += "; products %d of %d in block-pair shares %d of %d" % tuple(work)
    return text


def parse_status(tail):
    """The last status line in ``tail`` (bytes of a task's stderr) as
    ``(done, lines, bytes, work)``, ``work`` as :func:`status_text` takes
    it (or None); None if there is none.

    >>> parse_status(b"x\\nreporter:status:mrsparse done: 3 lines, 120 bytes\\n")
    (True, 3, 120, None)
    """
    found = _STATUS.findall(tail)
    if not found:
        return None
    state, lines, nbytes, *work = found[-1]
    return (state == b"done", int(lines), int(nbytes),
            tuple(int(w) for w in work) if work[0] else None)


class TaskStatus:
    """The status of one task, written through ``write`` (the job's
    ``set_status``) at most every ``every`` seconds, and when the task ends.

    The calls cost a clock read, so that they can come from the task's
    inner loops (each input line, each chunk of a pair product).
    """

    def __init__(self, write, every=STATUS_EVERY, clock=time.monotonic, on=True):
        self.write, self.every, self.clock = write, every, clock
        self.on = on  # off: nothing is written (until start)
        self.reset()

    def start(self):
        """A task that reads its input as Hadoop Streaming gives it: from now
        on its status is written (tasks run otherwise, as Spark's, stay quiet)."""
        self.on = True
        self.reset()

    def reset(self):
        """A new task: nothing read, no products."""
        self.lines = self.nbytes = 0
        self.work = None  # [products done, planned, shares begun, shares in all]
        self._pair = None  # the current pair: [done, planned or None, share not counted]
        self._next = self.clock() + self.every

    def read(self, nbytes):
        """One input line of ``nbytes`` bytes read."""
        self.lines += 1
        self.nbytes += nbytes
        if self.clock() >= self._next:
            self.tell()

    def begin_pair(self, share, shares):
        """A block pair begun, worth ``share`` of ``shares`` (see the module);
        its share counts once its products are planned (or the next pair
        begins, or the task ends: a pair with nothing to multiply)."""
        self._settle()
        if self.work is None:
            self.work = [0, 0, 0, shares]
        self.work[3] = shares
        self._pair = [0, None, share]
        self.tick()

    def pair_products(self, done, planned):
        """The current pair's products: ``done`` of its ``planned`` (the
        pair product's ``progress`` callback)."""
        pair = self._pair
        if pair is None:
            return
        if pair[1] is None:
            pair[1] = planned
            self.work[1] += planned
            self._settle()
        self.work[0] += done - pair[0]
        pair[0] = done
        self.tick()

    def _settle(self):
        """Count the current pair's share (once)."""
        if self._pair is not None and self._pair[2]:
            self.work[2] += self._pair[2]
            self._pair[2] = 0

    def tick(self):
        """Write the status if ``every`` seconds have passed since the last."""
        if self.clock() >= self._next:
            self.tell()

    def tell(self, done=False):
        """Write the status now (``done``: the task has ended)."""
        if done:
            self._settle()
        self._next = self.clock() + self.every
        if self.on:
            self.write(status_text(done, self.lines, self.nbytes, self.work))
