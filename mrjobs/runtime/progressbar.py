"""The progress monitor's bar on a terminal (:mod:`mrjobs.runtime.progress`):
a ``tqdm`` bar for the phase that runs, in place of the log lines.

A log record written to the same stream (mrjob's "Running step 2 of 3...",
the counters, our own notes) first clears the bar, which the next look
draws again below it, so that lines and bar never share a line.
"""
import logging
import os
import threading

from tqdm import tqdm

__all__ = ["Bar"]

#: a bar that counts: no rate (a wide number), the time left where it matters
COUNTED = "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt}{unit} [{elapsed}<{remaining}]"
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
        try:
            with self.lock:
                if self.bar is not None:
                    self.bar.clear()
        except Exception:  # the record is written all the same
            pass
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
            bar.set_description_str(view.label or view.text, refresh=False)
            if view.total is not None and view.total != bar.total:
                bar.total = view.total
            if view.done > bar.n:
                bar.update(view.done - bar.n)  # (tqdm's rate and ETA: from its updates)
            bar.refresh()

    def _new(self, view):
        counted = view.total is not None or view.unit == "products"
        sized = _columns(self.stream) > 0  # (else 80 columns: a terminal that tells none)
        return tqdm(total=view.total, file=self.stream, desc=view.label or view.text,
                    leave=False, dynamic_ncols=sized,
                    ncols=None if sized else 80,
                    unit=" products" if view.unit == "products" else "B", unit_scale=True,
                    unit_divisor=1000, mininterval=0, miniters=1, smoothing=0,
                    bar_format=COUNTED if counted else "{desc}")

    def _close(self):
        if self.bar is not None:
            self.bar.close()
        self.bar = self.key = None

    def close(self):
        for h in self.handlers:
            h.removeFilter(self.clear)
        with self.lock:
            self._close()


def _columns(stream):
    """The width of the terminal ``stream`` is on, or 0 if it tells none."""
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except Exception:  # (not a file, or no size)
        return 0
