"""How a run ends on a signal: Ctrl-C, SIGTERM and SIGHUP end it in order
(its tasks stopped, its temporary files removed), a closed stdout quietly;
and how it starts without its standard streams (``>&-``, ``2>&-``)."""
import os
import signal
import sys

__all__ = ["Stopped", "STOP_SIGNALS", "catch_stop_signals", "silence_stdout",
           "open_closed_stdio", "stdout_name"]


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
    its tasks and removes its temporary files; signals that come after the
    first are ignored until it is done.  A process forked from it without
    an exec ignores SIGINT and ends at once, without a word, on the others
    (its launcher ends it too).  Returns a function that
    restores the previous handlers."""
    launcher = os.getpid()
    stopping = []

    def handler(signum, frame):
        if os.getpid() == launcher:
            if stopping:  # already ending in order (a second TERM, Ctrl-C hammered):
                return    # another exception would cut short its cleanup and its count
            stopping.append(signum)
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


_STDIO = ("stdin", "stdout", "stderr")


def open_closed_stdio():
    """Open on the null device each standard stream the process was started
    without (``>&-``, ``2>&-``; cron and daemons close them): else the first
    file the run opens takes its number, and what goes to "stdout" goes into
    that file.  Python leaves ``sys.stdout`` (...) None for them; they become
    streams on the null device.

    Returns
    -------
    list of str
        The names of the streams that were closed ("stdin", "stdout", "stderr").
    """
    closed = []
    for fd, name in enumerate(_STDIO):
        if getattr(sys, name) is not None:
            continue
        mode = "r" if fd == 0 else "w"
        try:
            os.fstat(fd)
        except OSError:
            devnull = os.open(os.devnull, os.O_RDWR)  # the lowest free number: fd itself
            if devnull != fd:
                os.dup2(devnull, fd)
                os.close(devnull)
            setattr(sys, name, open(fd, mode, closefd=False))
        else:  # the number is taken by a file opened since: not ours to replace
            setattr(sys, name, open(os.devnull, mode))
        closed.append(name)
    return closed


def stdout_name():
    """`` (/dev/full)``: what stdout is, for a message (Linux's /proc), or ""."""
    try:
        return " (%s)" % os.readlink("/proc/self/fd/1")
    except OSError:
        return ""
