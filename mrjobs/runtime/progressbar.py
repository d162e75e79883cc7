"""The progress monitor's bar on a terminal (:mod:`mrjobs.runtime.progress`):
a ``tqdm`` bar for the phase that runs, in place of the log lines.

A log record written to the same stream (mrjob's "Running step 2 of 3...",
the counters, our own notes) first clears the bar, which the next look
draws again below it, so that lines and bar never share a line.
"""
import logging
import threading

from tqdm import tqdm

__all__ = ["Bar"]

#: the loggers whose handlers may write to the terminal the bar is on
LOGGERS = ("", "mrjob", "mrjobs", "__main__")


class Bar:
    """One tqdm bar on ``stream``, for the phase the last :class:`~mrjobs.
    runtime.progress.View` shown names; a new bar for each phase."""

    def __init__(self, stream):
        self.stream = stream
        self.bar = self.key = None
        self.lock = threading.Lock()
        self.handlers = [h for name in LOGGERS for h in logging.getLogger(name).handlers
                         if getattr(h, "stream", None) is stream]
        for h in self.handlers:
            h.addFilter(self.clear)

    def clear(self, record=None):
        """Wipe the bar off the terminal (a log line is about to be written)."""
        with self.lock:
            if self.bar is not None:
                self.bar.clear()
        return True

    def show(self, view):
        """Draw ``view`` (None: no bar)."""
        with self.lock:
            if view is None or view.key != self.key:
                self._close()
            if view is None:
                return
            if self.bar is None:
                self.key = view.key
                self.bar = self._new(view)
            bar = self.bar
            bar.set_description_str(view.text, refresh=False)
            if view.total is not None and view.total != bar.total:
                bar.total = view.total
            if view.done > bar.n:
                bar.update(view.done - bar.n)  # (tqdm's rate and ETA: from its updates)
            bar.refresh()

    def _new(self, view):
        counted = view.total is not None or view.unit == "products"
        return tqdm(total=view.total, file=self.stream, leave=False, dynamic_ncols=True,
                    unit=" products" if view.unit == "products" else "B", unit_scale=True,
                    unit_divisor=1000, mininterval=0, miniters=1,
                    bar_format=None if counted else "{desc}")

    def _close(self):
        if self.bar is not None:
            self.bar.close()
        self.bar = self.key = None

    def close(self):
        for h in self.handlers:
            h.removeFilter(self.clear)
        with self.lock:
            self._close()
