"""pyte does not know REP (CSI n b: repeat the last printed character n times), which
ncurses uses on terminals whose terminfo has `rep` (xterm-256color does): without it the
rest of a line shifts left and a test reads a garbled screen that the terminal never shows.
Importing this module teaches every pyte Screen and Stream made afterwards to repeat."""
import pyte
from pyte import streams

_draw = pyte.Screen.draw


def _draw_tracking(self, data):
    _draw(self, data)
    if data:
        self._rd_last_char = data[-1]


def _repeat_last(self, count=1, *rest, **kwargs):
    last = getattr(self, "_rd_last_char", None)
    if last and not kwargs.get("private"):
        _draw(self, last * max(int(count or 1), 1))


if "b" not in streams.Stream.csi:
    pyte.Screen.draw = _draw_tracking
    pyte.Screen.repeat_last = _repeat_last
    streams.Stream.csi = dict(streams.Stream.csi, b="repeat_last")
