"""How a run ends on a signal: Ctrl-C, SIGTERM and SIGHUP end it in order
(its tasks stopped, its temporary files removed), a closed stdout quietly."""
import os
import signal
import sys

__all__ = ["Stopped", "STOP_SIGNALS", "catch_stop_signals", "silence_stdout"]


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP in the launcher: ends the run as Ctrl-C does (a
    :class:`KeyboardInterrupt`, so mrjob's runners and ours unwind alike)."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


#: the signals that end a run in order: Ctrl-C; kill, timeout, a container's
#: or a CI's stop; a closed terminal
STOP_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


def catch_stop_signals():
    """Ctrl-C, SIGTERM and SIGHUP raise :class:`KeyboardInterrupt` (SIGTERM and
    SIGHUP: :class:`Stopped`) in the launcher only: the launcher then ends
    its tasks and removes its temporary files.  The processes forked from it
    (mrjob's pool workers) ignore SIGINT and end at once, without a word, on
    the others (their launcher ends them too).  Returns a function that
    restores the previous handlers."""
    launcher = os.getpid()

    def handler(signum, frame):
        if os.getpid() == launcher:
            if signum == signal.SIGINT:
                raise KeyboardInterrupt
            raise Stopped(signum)
        if signum != signal.SIGINT:
            os._exit(128 + signum)
    previous = {}
    try:
        for name in STOP_SIGNALS:
            sig = getattr(signal, name, None)
            if sig is not None:
                previous[sig] = signal.signal(sig, handler)
    except ValueError:  # not the main thread
        pass

    def restore():
        for sig, old in previous.items():
            signal.signal(sig, old)
    return restore


def silence_stdout():
    """After a closed pipe: point stdout at /dev/null so that Python's flush
    at exit does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
