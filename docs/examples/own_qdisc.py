"""Queue disciplines written in Python (aqmlab.python_qdisc; docs/tutorial.md, "Your own queue
discipline"): a drop-tail and a RED, each the same run as the built-in one, packet for packet,
seed for seed (tests/test_mechanism.py checks it); and the tutorial's excess-drop idea.

    aqmlab run docs/examples/own-red.toml
    aqmlab compare csfq-fig3b -m droptail,red,docs/examples/own_qdisc.py:Red
"""

import collections

import aqmlab


class DropTail(aqmlab.Qdisc):
    """A FIFO that drops the arrival when `limit` packets are queued (qdisc/droptail.rs)."""

    def __init__(self, limit: int = 1000):
        if limit < 1:
            raise ValueError(f"limit: must be >= 1, got {limit}")
        self.limit = limit
        self.fifo = collections.deque()

    def enqueue(self, packet, link):
        if link.backlog_packets >= self.limit:
            link.drop(packet, "overflow")
        else:
            self.fifo.append(packet)

    def dequeue(self, link):
        return self.fifo.popleft() if self.fifo else None


class Red(aqmlab.Qdisc):
    """RED (Floyd & Jacobson 1993, Fig. 2) in packet mode, as qdisc/red.rs runs it by default:
    an EWMA of the queue at each arrival, decayed over idle time; p_b on the line from min_th to
    max_th; drops spread by count, p_a = p_b / (1 - count * p_b); forced above max_th."""

    can_mark = True  # as red.rs: its link reports `qdisc.ecn_marks` (0: this one never marks)

    def __init__(self, limit=50, min_th=5.0, max_th=15.0, max_p=0.1, w_q=0.002, mean_pktsize=1000):
        if not 0 < w_q <= 1:
            raise ValueError(f"w_q: must be in (0, 1], got {w_q}")
        if not 0 <= min_th < max_th:
            raise ValueError(f"max_th: must be > min_th ({min_th}), got {max_th}")
        self.limit, self.min_th, self.max_th, self.max_p, self.w_q = limit, min_th, max_th, max_p, w_q
        self.mean_pktsize = mean_pktsize
        self.fifo = collections.deque()
        self.avg, self.count, self.idle_since = 0.0, -1.0, 0  # the link starts idle

    def enqueue(self, packet, link):
        if self.idle_since is not None:  # F-J: decay by the packets the idle link could have sent
            packet_time = self.mean_pktsize * 8.0 * 1e9 / link.rate_bps
            self.avg *= (1.0 - self.w_q) ** ((link.now_ns - self.idle_since) / packet_time)
            self.idle_since = None
        else:
            self.avg = (1.0 - self.w_q) * self.avg + self.w_q * link.backlog_packets
        if self.avg < self.min_th:
            self.count = -1.0
        elif self.avg >= self.max_th:
            self.count = 0.0
            return link.drop(packet, "forced")
        else:
            p_b = self.max_p * (self.avg - self.min_th) / (self.max_th - self.min_th)
            spent = (self.count + 1.0) * p_b
            p_a = 1.0 if spent >= 1.0 else min(p_b / (1.0 - spent), 1.0)
            if link.random() < p_a:
                self.count = 0.0
                return link.drop(packet, "early")
            self.count += 1.0
        if link.backlog_packets >= self.limit:
            self.count = min(self.count, 0.0)
            return link.drop(packet, "overflow")
        self.fifo.append(packet)

    def dequeue(self, link):
        if self.fifo:
            return self.fifo.popleft()
        if self.idle_since is None:
            self.idle_since = link.now_ns
        return None

    def gauges(self):
        return {"average": self.avg}


class ExcessDrop(aqmlab.Qdisc):
    """The tutorial's idea: drop an arrival with probability slope x (packets queued - threshold),
    naming its drops `excess`; a FIFO otherwise, bounded at `limit` packets."""

    def __init__(self, slope: float = 0.01, threshold: int = 20, limit: int = 64):
        if slope < 0:
            raise ValueError(f"slope: must be >= 0, got {slope}")
        self.slope, self.threshold, self.limit = slope, threshold, limit
        self.fifo = collections.deque()
        self.excess_drops = 0

    def enqueue(self, packet, link):
        excess = link.backlog_packets - self.threshold
        if link.backlog_packets >= self.limit:
            link.drop(packet, "overflow")
        elif excess > 0 and link.random() < self.slope * excess:
            self.excess_drops += 1
            link.drop(packet, "excess")
        else:
            self.fifo.append(packet)

    def dequeue(self, link):
        return self.fifo.popleft() if self.fifo else None

    def counters(self):
        return {"excess_drops": self.excess_drops}
