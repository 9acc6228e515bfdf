//! DualPI2 as RFC 9332's Appendix A writes it (`type = "dualpi2"`): A.1's pseudocode, with A.2's
//! edge cases (the L queue's one-packet rule and overload).
//!
//! - **enqueue** (A.1 Fig. 2 `dualpi2_enqueue`): tail drop when the two queues' bytes and an MTU
//!   exceed `limit` (250 ms at the link's rate); else timestamp and classify: ECT(1) or CE to L
//!   ("ecn(pkt) modulo 2 == 1"), Not-ECT and ECT(0) to C;
//! - **the base controller** (A.1 `dualpi2_update`, every `t_update`): curq = the sojourn of C's
//!   head; p′ += α·(curq − target) + β·(curq − prevq), kept in [0, 1]; p_CL = k·p′; p_C = p′²;
//! - **dequeue** (A.1 `dualpi2_dequeue`, A.2): the scheduler picks a queue; from L, the native AQM
//!   p′_L is a ramp on the packet's sojourn, 0 below `min_th`, 1 from `min_th + range` (A.1
//!   `laqm`), and 0 while no more than `th_len` packets are left behind it (A.2, "suppress marking
//!   1 pkt queue"); the packet is marked with p_L = max(p′_L, p_CL); from C, it is marked (ECT) or
//!   dropped (Not-ECT) with p_C, and a dropped packet is replaced by the next one chosen;
//! - **overload** (A.2): once p_CL ≥ 1 (p_C ≥ p_Cmax = 1/k²) an L packet is dropped with p_C and
//!   the rest marked with p_CL, and C drops ECN-capable packets too (RFC 3168 §7);
//! - **draws**: A.1's `recur(queue, likelihood)`: each queue adds the probability to its count
//!   and acts when the count passes 1 (a deterministic spreading, not a random draw). Read as
//!   written, one count per queue: under overload L's drop (p_C) and mark (p_CL) share it, so L
//!   drops (p_C + p_CL − 1)/p_CL of its packets rather than p_C;
//! - **the scheduler**, which the RFC leaves open (A.1 Fig. 1: "scheduler-dependent weight ...
//!   NOT SHOWN"; §4.2.2 names WRR and time-shifted FIFO): a time-shifted FIFO, L's head served
//!   unless C's has waited more than `tshift` longer.
//!
//! The controller runs lazily at each enqueue and dequeue, catching up on every `t_update`
//! boundary passed since the last event (the heads do not change between events).

use super::{Action, Classification, DualQueue, DualStats, Queue};
use crate::error::ScenarioError;
use crate::packet::{Ecn, PacketArena, PacketId};
use crate::qdisc::{DropReason, LinkInfo, QdiscConfig, QdiscCtx, QueueDisc, Verdict};
use crate::rng::Rng;
use crate::time::{from_secs, to_secs, Time};
use crate::units::{Bytes, Seconds};
use crate::validate::{require_non_negative, require_positive};
use serde::Deserialize;

/// A.2's time shift for the public Internet, seconds.
const TSHIFT: f64 = 0.05;

/// Which DualPI2 runs: this file's, RFC 9332's; `profile = "linux"` is Linux's sch_dualpi2, with
/// tc's words ([`super::linux`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
pub enum DualPi2Profile {
    #[default]
    #[serde(rename = "rfc9332")]
    Rfc9332,
}

/// `type = "dualpi2"`; every field optional (defaults: RFC 9332 A.1 Fig. 1, `dualpi2_params_init`).
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DualPi2Config {
    /// `"rfc9332"`, the default (`"linux"` reads [`super::linux::DualPi2LinuxConfig`] instead).
    pub profile: DualPi2Profile,
    /// Bytes in both queues: "MAX_LINK_RATE * 250 ms", the link's rate at the start.
    pub limit: Option<Bytes>,
    /// The C queue's target delay: 15 ms.
    pub target: Seconds,
    /// The worst-case RTT the gains are tuned for, RTT_max: 100 ms.
    pub rtt_max: Seconds,
    /// The controller's period: min(target, RTT_max / 3) = 15 ms.
    pub t_update: Option<Seconds>,
    /// Integral gain, Hz: 0.1 · t_update / RTT_max² = 0.15.
    pub alpha: Option<f64>,
    /// Proportional gain, Hz: 0.3 / RTT_max = 3.
    pub beta: Option<f64>,
    /// The coupling factor k: 2.
    pub k: f64,
    /// The L ramp's start: 800 µs ("minTh").
    pub min_th: Seconds,
    /// The L ramp's width: 400 µs ("range").
    pub range: Seconds,
    /// Packets left in L at or below which the native AQM does not mark: 1 ("Th_len", A.2).
    pub th_len: u64,
    /// The time-shifted FIFO's shift: 50 ms (A.2: "For the public Internet, a good value for
    /// tshift is 50 ms"; App. B's line 5 too).
    pub tshift: Option<Seconds>,
    /// The MTU the enqueue test adds: 1500 bytes.
    pub mtu: Bytes,
}

impl Default for DualPi2Config {
    fn default() -> Self {
        DualPi2Config {
            profile: DualPi2Profile::Rfc9332,
            limit: None,
            target: Seconds(0.015),
            rtt_max: Seconds(0.1),
            t_update: None,
            alpha: None,
            beta: None,
            k: 2.0,
            min_th: Seconds(0.0008),
            range: Seconds(0.0004),
            th_len: 1,
            tshift: None,
            mtu: Bytes(1500),
        }
    }
}

/// A.1: the buffer is 250 ms at the link's rate.
const LIMIT_AT_LINK_RATE: f64 = 0.25;

impl DualPi2Config {
    fn t_update(&self) -> f64 {
        self.t_update.map_or(self.target.0.min(self.rtt_max.0 / 3.0), |t| t.0)
    }

    fn alpha(&self) -> f64 {
        self.alpha
            .unwrap_or(0.1 * self.t_update() / (self.rtt_max.0 * self.rtt_max.0))
    }

    fn beta(&self) -> f64 {
        self.beta.unwrap_or(0.3 / self.rtt_max.0)
    }

    fn limit(&self, link: &LinkInfo) -> u64 {
        self.limit
            .map_or((link.rate_bps / 8.0 * LIMIT_AT_LINK_RATE) as u64, |b| b.0)
    }
}

impl QdiscConfig for DualPi2Config {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        let field = |name: &str| format!("{path}.{name}");
        require_positive(&field("target"), self.target)?;
        require_positive(&field("rtt_max"), self.rtt_max)?;
        require_positive(&field("t_update"), self.t_update())?;
        require_positive(&field("alpha"), self.alpha())?;
        require_positive(&field("beta"), self.beta())?;
        require_positive(&field("k"), self.k)?;
        require_non_negative(&field("min_th"), self.min_th)?;
        require_non_negative(&field("range"), self.range)?;
        require_non_negative(&field("tshift"), self.tshift.unwrap_or(Seconds(0.0)))?;
        require_positive(&field("mtu"), self.mtu.0 as f64)?;
        if let Some(limit) = self.limit {
            require_positive(&field("limit"), limit.0 as f64)?;
        }
        Ok(())
    }

    fn build(&self, link: &LinkInfo, _rng: Rng) -> Box<dyn QueueDisc> {
        Box::new(DualPi2::new(self, link))
    }
}

struct Params {
    limit: u64,
    mtu: u64,
    /// Seconds, as the controller's arithmetic uses them.
    target: f64,
    alpha: f64,
    beta: f64,
    t_update: Time,
    k: f64,
    min_th: Time,
    range: Time,
    th_len: u64,
    tshift: Time,
}

/// A.1's `recur`: a queue's running count of the likelihoods it was asked about.
#[derive(Clone, Copy, Debug, Default)]
struct Recur {
    count: f64,
}

impl Recur {
    /// "queue.count += likelihood; if (queue.count > 1) { queue.count -= 1; return TRUE }".
    fn recur(&mut self, likelihood: f64) -> bool {
        self.count += likelihood;
        if self.count > 1.0 {
            self.count -= 1.0;
            return true;
        }
        false
    }
}

pub struct DualPi2 {
    params: Params,
    queues: DualQueue,
    /// p′ and the C delay it was last updated with (prevq), seconds.
    p: f64,
    prevq: f64,
    next_update: Time,
    l_recur: Recur,
    c_recur: Recur,
    stats: DualStats,
}

impl DualPi2 {
    pub fn new(cfg: &DualPi2Config, link: &LinkInfo) -> Self {
        let t_update = from_secs(cfg.t_update());
        DualPi2 {
            params: Params {
                limit: cfg.limit(link),
                mtu: cfg.mtu.0,
                target: cfg.target.0,
                alpha: cfg.alpha(),
                beta: cfg.beta(),
                t_update,
                k: cfg.k,
                min_th: from_secs(cfg.min_th.0),
                range: from_secs(cfg.range.0),
                th_len: cfg.th_len,
                tshift: from_secs(cfg.tshift.map_or(TSHIFT, |t| t.0)),
            },
            queues: DualQueue::default(),
            p: 0.0,
            prevq: 0.0,
            next_update: t_update,
            l_recur: Recur::default(),
            c_recur: Recur::default(),
            stats: DualStats::default(),
        }
    }

    /// p_CL = k·p′ (A.1 `dualpi2_update` line 4).
    fn p_cl(&self) -> f64 {
        self.params.k * self.p
    }

    /// p_C = p′² (line 5).
    fn p_c(&self) -> f64 {
        self.p * self.p
    }

    /// `dualpi2_update` at `at`.
    fn update(&mut self, at: Time, packets: &PacketArena) {
        let curq = to_secs(DualQueue::head_sojourn(&self.queues.c, at, packets));
        let p = &self.params;
        self.p += p.alpha * (curq - p.target) + p.beta * (curq - self.prevq);
        self.p = self.p.clamp(0.0, 1.0);
        self.prevq = curq;
    }

    fn catch_up(&mut self, now: Time, packets: &PacketArena) {
        while now >= self.next_update {
            let at = self.next_update;
            self.update(at, packets);
            self.next_update += self.params.t_update;
        }
    }

    /// A.1 `laqm(qdelay)`: the native L ramp.
    fn laqm(&self, qdelay: Time) -> f64 {
        let p = &self.params;
        if qdelay >= p.min_th + p.range {
            1.0
        } else if qdelay > p.min_th {
            (qdelay - p.min_th) as f64 / p.range as f64
        } else {
            0.0
        }
    }

    /// The time-shifted FIFO: L unless C's head has waited more than `tshift` longer than L's.
    fn scheduled(&self, now: Time, packets: &PacketArena) -> Option<Queue> {
        match (self.queues.l.is_empty(), self.queues.c.is_empty()) {
            (true, true) => None,
            (false, true) => Some(Queue::L),
            (true, false) => Some(Queue::C),
            (false, false) => {
                let l = DualQueue::head_sojourn(&self.queues.l, now, packets);
                let c = DualQueue::head_sojourn(&self.queues.c, now, packets);
                Some(if l + self.params.tshift >= c {
                    Queue::L
                } else {
                    Queue::C
                })
            }
        }
    }

    /// p′, 0 to 1.
    pub fn prob(&self) -> f64 {
        self.p
    }
}

impl QueueDisc for DualPi2 {
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx) -> Verdict {
        self.catch_up(ctx.now, ctx.packets);
        if ctx.backlog().bytes + self.params.mtu > self.params.limit {
            return Verdict::Dropped(DropReason::Overflow);
        }
        let queue = if Classification::L4sEct.is_l4s(ctx.packets[id].ecn) {
            Queue::L
        } else {
            Queue::C
        };
        self.stats.count_arrival(queue);
        self.queues.push(queue, id);
        Verdict::Enqueued
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        self.catch_up(ctx.now, ctx.packets);
        loop {
            let queue = self.scheduled(ctx.now, ctx.packets)?;
            let id = self
                .queues
                .pop(queue, ctx.packets)
                .expect("the scheduled queue holds a packet");
            let (p_c, p_cl) = (self.p_c(), self.p_cl());
            let overload = p_cl >= 1.0;
            let action = match queue {
                Queue::L if overload => {
                    if self.l_recur.recur(p_c) {
                        Action::Drop
                    } else if self.l_recur.recur(p_cl) {
                        Action::Mark
                    } else {
                        Action::Pass
                    }
                }
                Queue::L => {
                    let sojourn = ctx.now - ctx.packets[id].enqueued_at;
                    let native = if self.queues.l.len() as u64 > self.params.th_len {
                        self.laqm(sojourn)
                    } else {
                        0.0
                    };
                    if self.l_recur.recur(native.max(p_cl)) {
                        Action::Mark
                    } else {
                        Action::Pass
                    }
                }
                Queue::C if self.c_recur.recur(p_c) => {
                    if overload || ctx.packets[id].ecn == Ecn::NotEct {
                        Action::Drop
                    } else {
                        Action::Mark
                    }
                }
                Queue::C => Action::Pass,
            };
            match action {
                Action::Drop => {
                    self.stats.count_drop(queue);
                    ctx.drop_packet(id, DropReason::Early);
                    continue;
                }
                Action::Mark => {
                    self.stats.count_mark(queue);
                    ctx.mark(id);
                }
                Action::Pass => {}
            }
            return Some(id);
        }
    }

    fn can_mark(&self) -> bool {
        true
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        let mut counters = vec![("prob", self.prob())];
        counters.extend(self.stats.counters());
        counters
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{FlowId, Packet};
    use crate::qdisc::testing::{link, QdiscHarness, MS};

    const L_FLOW: FlowId = 1;
    const C_FLOW: FlowId = 2;
    const LINK: LinkInfo = link(10e6);

    fn packet(flow: FlowId, t: Time) -> Packet {
        Packet {
            flow,
            size: 1500,
            enqueued_at: t,
            ecn: if flow == L_FLOW { Ecn::Ect1 } else { Ecn::Ect0 },
            ..Default::default()
        }
    }

    /// The queue with p′ frozen at `p` (the controller never runs), its buffer ample.
    fn frozen(cfg: DualPi2Config, p: f64) -> QdiscHarness<DualPi2> {
        let cfg = DualPi2Config {
            limit: Some(Bytes(10_000_000)),
            ..cfg
        };
        cfg.validate("q").unwrap();
        let mut h = QdiscHarness::new(Box::new(DualPi2::new(&cfg, &LINK)));
        h.q.p = p;
        h.q.next_update = Time::MAX;
        h
    }

    /// Of `n` packets of `flow` arriving at 0 and leaving together `sojourn` later: (marked, dropped).
    fn judged(h: &mut QdiscHarness<DualPi2>, flow: FlowId, n: usize, sojourn: Time) -> (usize, usize) {
        for _ in 0..n {
            h.offer(0, packet(flow, 0));
        }
        let sent: Vec<Packet> = std::iter::from_fn(|| h.depart(sojourn)).collect();
        (sent.iter().filter(|p| p.ecn == Ecn::Ce).count(), n - sent.len())
    }

    #[test]
    fn the_defaults_follow_from_target_and_rtt_max() {
        let cfg = DualPi2Config::default();
        // Tupdate = min(15 ms, 100 ms / 3); α = 0.1 · 0.015 / 0.1²; β = 0.3 / 0.1.
        assert_eq!(cfg.t_update(), 0.015);
        assert!((cfg.alpha() - 0.15).abs() < 1e-12 && (cfg.beta() - 3.0).abs() < 1e-12);
        // 250 ms at 10 Mbit/s.
        assert_eq!(cfg.limit(&LINK), 312_500);
    }

    #[test]
    fn the_controller_reads_the_classic_head_only() {
        let mut h = QdiscHarness::new(Box::new(DualPi2::new(&DualPi2Config::default(), &LINK)));
        // An L packet waiting since 0 does not move p′ (A.1: "queuing time of first-in Classic packet").
        h.offer(0, packet(L_FLOW, 0));
        h.q.catch_up(15 * MS, &h.arena);
        assert_eq!(h.q.p, 0.0);
        // A C packet waiting since 15 ms, at the update of 45 ms: curq 30 ms, prevq 15 ms (from 30 ms).
        h.offer(15 * MS, packet(C_FLOW, 15 * MS));
        h.q.catch_up(45 * MS, &h.arena);
        // At 30 ms: 0.15·(0.015 − 0.015) + 3·(0.015 − 0) = 0.045; at 45 ms: + 0.15·0.015 + 3·0.015.
        let expected = 0.045 + 0.15 * 0.015 + 3.0 * 0.015;
        assert!((h.q.p - expected).abs() < 1e-12, "{}", h.q.p);
    }

    #[test]
    fn classic_gets_p_squared_and_l4s_k_times_p_spread_by_recur() {
        // p′ = 0.3 (no overload): C is marked with p′² = 0.09, L with k·p′ = 0.6, counted out by recur.
        let (marked, dropped) = judged(&mut frozen(DualPi2Config::default(), 0.3), C_FLOW, 1000, 0);
        assert!((89..=90).contains(&marked) && dropped == 0, "{marked} {dropped}");
        let (marked, _) = judged(&mut frozen(DualPi2Config::default(), 0.3), L_FLOW, 1000, 0);
        assert!((599..=600).contains(&marked), "{marked}");
        // A Not-ECT Classic packet is dropped instead.
        let mut h = frozen(DualPi2Config::default(), 0.3);
        for _ in 0..1000 {
            h.offer(
                0,
                Packet {
                    ecn: Ecn::NotEct,
                    ..packet(C_FLOW, 0)
                },
            );
        }
        while h.depart(0).is_some() {}
        assert!((89..=90).contains(&h.drops(DropReason::Early)));
    }

    #[test]
    fn the_l4s_ramp_marks_by_the_packets_own_sojourn() {
        let cfg = DualPi2Config::default;
        // Ramp from 0.8 ms to 1.2 ms: at 1.0 ms half the packets, from 1.2 ms all, at 0.8 ms none.
        let marked = |sojourn| judged(&mut frozen(cfg(), 0.0), L_FLOW, 100, sojourn).0;
        assert_eq!(marked(800_000), 0);
        // The last packet leaves one or none behind (Th_len = 1): never marked by the ramp.
        assert!((48..=50).contains(&marked(1_000_000)), "{}", marked(1_000_000));
        // Of the 98 judged at p = 1, recur's count passes 1 only from the second (A.1: "count > 1").
        assert_eq!(marked(1_200_000), 97);
    }

    #[test]
    fn overload_drops_l4s_with_p_squared_and_classic_even_when_ecn_capable() {
        // p′ = 0.6: p_CL = 1.2 ≥ 1. Both draws share L's count: each packet adds p_C = 0.36, each
        // one kept p_CL = 1.2 more, and every drop or mark takes 1, so a fraction d is dropped with
        // 0.36 + (1 − d)·1.2 = 1: d = 0.56 / 1.2 = 0.467 (not p_C), and every packet kept is marked.
        let (marked, dropped) = judged(&mut frozen(DualPi2Config::default(), 0.6), L_FLOW, 1000, 0);
        assert!((466..=467).contains(&dropped), "{dropped}");
        assert_eq!(marked, 1000 - dropped);
        let (marked, dropped) = judged(&mut frozen(DualPi2Config::default(), 0.6), C_FLOW, 1000, 0);
        assert!((359..=360).contains(&dropped) && marked == 0, "{marked} {dropped}");
    }

    #[test]
    fn the_time_shifted_fifo_serves_classic_once_it_has_waited_tshift_longer() {
        let mut h = frozen(DualPi2Config::default(), 0.0);
        h.offer(0, packet(C_FLOW, 0));
        h.offer(20 * MS, packet(L_FLOW, 20 * MS));
        h.offer(20 * MS, packet(L_FLOW, 20 * MS));
        // At 25 ms C's head has waited 25 ms, L's 5 ms: within tshift (30 ms), L goes first.
        assert_eq!(h.depart_flow(25 * MS), L_FLOW);
        // At 52 ms: C 52 ms against L 32 ms, within 30 ms of it: L again.
        assert_eq!(h.depart_flow(52 * MS), L_FLOW);
        h.offer(60 * MS, packet(L_FLOW, 60 * MS));
        // At 91 ms: C 91 ms against L 31 ms: C has waited more than tshift longer.
        assert_eq!(h.depart_flow(91 * MS), C_FLOW);
    }

    #[test]
    fn errors_name_the_field() {
        let err = DualPi2Config {
            k: 0.0,
            ..Default::default()
        }
        .validate("q")
        .unwrap_err()
        .to_string();
        assert_eq!(err, "q.k: must be > 0, got 0");
    }
}
