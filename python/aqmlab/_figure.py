"""The Figure class of aqmlab's figures, apart from `plots` so that importing `plots` does not
import matplotlib (it is slow to import: `plots.new_figure` imports this module on first use)."""

from __future__ import annotations

import io

import matplotlib.figure


class Figure(matplotlib.figure.Figure):
    """A matplotlib Figure that shows itself as a notebook cell's value. Jupyter's inline
    backend draws a plain Figure only once something has set it up (`%matplotlib inline`, or a
    first pyplot figure); before that it printed `<Figure size 800x400 with 1 Axes>`. Where
    the inline backend is set up, its drawing is used and this one is not asked for."""

    def _repr_png_(self) -> bytes:
        buffer = io.BytesIO()
        self.savefig(buffer, format="png", bbox_inches="tight")
        return buffer.getvalue()
