"""Sequences ncurses sends on xterm-256color that pyte does not know, taught to every pyte
Screen and Stream made after this module is imported (without them a test reads a garbled
screen that the terminal never shows):
- REP (CSI n b): repeat the last printed character n times (terminfo `rep`); without it the
  rest of a line shifts left.
- SU and SD (CSI n S, CSI n T): scroll the scrolling region up or down n lines, the cursor
  staying where it is (terminfo `indn`, `rin`: ncurses' scroll optimizer moves a block of
  unchanged lines with them); without them the old rows stay where they were and what
  ncurses then draws around them (only the cells it believes changed) mixes two frames."""
import pyte
from pyte import streams
from pyte.screens import Margins

_draw = pyte.Screen.draw


def _draw_tracking(self, data):
    _draw(self, data)
    if data:
        self._rd_last_char = data[-1]


def _repeat_last(self, count=1, *rest, **kwargs):
    last = getattr(self, "_rd_last_char", None)
    if last and not kwargs.get("private"):
        _draw(self, last * max(int(count or 1), 1))


def _scroll(self, count, up):
    top, bottom = self.margins or Margins(0, self.lines - 1)
    n = min(max(int(count or 1), 1), bottom - top + 1)
    self.dirty.update(range(self.lines))
    rows = [self.buffer[y] for y in range(top, bottom + 1)]
    for y in range(top, bottom + 1):
        self.buffer.pop(y, None)                  # a missing row reads as blank
    for i, row in enumerate(rows):
        y = top + i + (-n if up else n)
        if top <= y <= bottom:
            self.buffer[y] = row


def _scroll_up(self, count=1, *rest, **kwargs):
    if not kwargs.get("private"):
        _scroll(self, count, True)


def _scroll_down(self, count=1, *rest, **kwargs):
    if not kwargs.get("private") and not rest:   # CSI with more parameters: xterm's mouse tracking
        _scroll(self, count, False)


if "b" not in streams.Stream.csi:
    pyte.Screen.draw = _draw_tracking
    pyte.Screen.repeat_last = _repeat_last
    streams.Stream.csi = dict(streams.Stream.csi, b="repeat_last")
if "S" not in streams.Stream.csi:
    pyte.Screen.scroll_up = _scroll_up
    pyte.Screen.scroll_down = _scroll_down
    streams.Stream.csi = dict(streams.Stream.csi, S="scroll_up", T="scroll_down")
