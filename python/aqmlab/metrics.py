"""Closed-form measures that the papers compare simulations with, computed by the core
(crates/aqmlab-core/src/metrics/) so that runs and reproductions use one definition."""

from __future__ import annotations

from collections.abc import Iterable

from . import _core


def jain_index(values: Iterable[float]) -> float:
    """Jain's fairness index (Σx)² / (n·Σx²): 1 when all are equal, 1/n when one takes all
    (BRED eq. 17's fairness quotient)."""
    return _core.jain_index([float(v) for v in values])


def bred_cbr_bound(alpha: float, beta: float, n_c: int, n_t: int) -> float:
    """BRED eq. 14: the upper bound on one non-conforming CBR flow's throughput, as a fraction
    of the link rate, with `n_c` non-conforming CBR flows and `n_t` conforming flows and
    BRED's constants `alpha` and `beta`."""
    return _core.bred_cbr_bound(alpha, beta, n_c, n_t)
