//! PIE as Linux runs it (`type = "pie", profile = "linux"`): `net/sched/sch_pie.c` and
//! `include/net/pie.h` (Linux 5.7 to 6.x), configured as `tc qdisc add ... pie` configures it.
//! Against `pie.rs` (RFC 8033's pseudocode):
//! - **de-randomised, always**: `accu_prob` adds up the probability of the arrivals judged; no drop
//!   while it is below 0.85, a drop once it reaches 8.5, a random one between; any drop (the
//!   limit's too) clears it;
//! - **the timer**: the controller runs on a kernel timer counted in jiffies: first half a second
//!   after the qdisc is set up (`HZ/2`), then every `tupdate` rounded up to whole jiffies
//!   (usecs_to_jiffies: 15 ms is 16 ms at HZ = 250, 20 ms at HZ = 100);
//! - **the controller**: α and β are tc's integers in sixteenths (2 = 0.125, 20 = 1.25) times the
//!   delay in 64 ns psched ticks, on a probability scaled to 2^56; below 10 % they are halved, and
//!   quartered for each decade below 1 % (down to ÷2048 below 0.0001 %); a step of more than 2 % is
//!   cut to 2 % once the probability is 10 % or more; a delay over 250 ms adds 2 %; with the delay
//!   0 twice the probability loses 1/64 (RFC: 2 %), unless the queue is not empty;
//! - **the burst allowance** (150 ms) runs down by the time between dequeues, not per update, and
//!   comes back with the other variables once the delay has been under target/2 twice with the
//!   probability at 0;
//! - **no early drop** while the *current* delay is under target/2 with the probability under
//!   20 % (RFC 8033: the previous update's delay), or with fewer than two MTUs queued (`backlog <
//!   2·mtu`, before the arrival);
//! - `bytemode` scales the probability by size / MTU; `ecn` marks instead of dropping while the
//!   probability is at most 10 %.
//!
//! The delay is the sojourn of the last packet dequeued, 0 when that left the queue empty (the
//! timestamp mode, Linux's default since 5.7; the `dq_rate_estimator` mode is not modelled).

use super::{DropReason, Fifo, LinkInfo, QdiscConfig, QdiscCtx, QueueDisc, Verdict};
use crate::error::ScenarioError;
use crate::packet::{Ecn, PacketId};
use crate::rng::Rng;
use crate::time::{Time, NANOS_PER_SEC};
use crate::units::{Bytes, Seconds};
use rand::Rng as _;
use serde::Deserialize;

/// pie.h `MAX_PROB`: probability 1, a 56-bit fixed point.
const MAX_PROB: u64 = u64::MAX >> 8;
/// `PSCHED_SHIFT`: the psched clock ticks every 64 ns.
const PSCHED_SHIFT: u32 = 6;
const PSCHED_TICKS_PER_SEC: u64 = NANOS_PER_SEC >> PSCHED_SHIFT;

/// `type = "pie", profile = "linux"`: tc pie's words, and two facts of the machine: its `hz`
/// and its device's `mtu`.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PieLinuxConfig {
    /// Packets: 1000 (pie_params_init).
    pub limit: u64,
    /// 15 ms.
    pub target: Seconds,
    /// 15 ms, counted in whole jiffies.
    pub tupdate: Seconds,
    /// Sixteenths, 0..=32: 2 (0.125).
    pub alpha: u32,
    /// Sixteenths, 0..=32: 20 (1.25).
    pub beta: u32,
    pub ecn: bool,
    pub bytemode: bool,
    /// The kernel's timer frequency CONFIG_HZ: 250, Linux's default choice (User-Mode Linux: 100).
    pub hz: u32,
    /// The device's psched_mtu, MTU plus its link header: 1514 bytes (Ethernet).
    pub mtu: Bytes,
}

impl Default for PieLinuxConfig {
    fn default() -> Self {
        PieLinuxConfig {
            limit: 1000,
            target: Seconds(0.015),
            tupdate: Seconds(0.015),
            alpha: 2,
            beta: 20,
            ecn: false,
            bytemode: false,
            hz: 250,
            mtu: Bytes(1514),
        }
    }
}

impl PieLinuxConfig {
    /// usecs_to_jiffies(tupdate in µs), as tc passes it: rounded up.
    fn tupdate_jiffies(&self) -> u64 {
        let us = (self.tupdate.0 * 1e6).round() as u64;
        let us_per_jiffy = 1_000_000 / u64::from(self.hz);
        us.div_ceil(us_per_jiffy)
    }
}

impl QdiscConfig for PieLinuxConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        let field = |name: &str| format!("{path}.{name}");
        if self.limit == 0 {
            return Err(ScenarioError::new(field("limit"), "must be > 0, got 0"));
        }
        for (name, value) in [("alpha", self.alpha), ("beta", self.beta)] {
            if value > 32 {
                return Err(ScenarioError::new(
                    field(name),
                    format!("must be 0..=32 (tc pie: sixteenths, 2 = 0.125), got {value}"),
                ));
            }
        }
        // Times are finite (units.rs); only their sign is checked.
        if self.target.0 <= 0.0 {
            return Err(ScenarioError::new(
                field("target"),
                format!("must be > 0, got {}", self.target),
            ));
        }
        if self.tupdate.0 < 1e-6 {
            return Err(ScenarioError::new(
                field("tupdate"),
                format!("must be at least 1us (tc passes microseconds), got {}", self.tupdate),
            ));
        }
        // HZ divides a second into whole microseconds in every kernel configuration (100 to 1000).
        if !(1..=1_000_000).contains(&self.hz) || 1_000_000 % self.hz != 0 {
            return Err(ScenarioError::new(
                field("hz"),
                format!("must divide 1000000 (CONFIG_HZ: 100, 250, 300, 1000), got {}", self.hz),
            ));
        }
        if self.mtu.0 == 0 {
            return Err(ScenarioError::new(field("mtu"), "must be > 0, got 0"));
        }
        Ok(())
    }

    fn build(&self, _link: &LinkInfo, rng: Rng) -> Box<dyn QueueDisc> {
        Box::new(PieLinux::new(self, rng))
    }
}

/// `struct pie_params`, in the kernel's units.
struct Params {
    /// psched ticks.
    target: u64,
    /// The timer's period, in ns (whole jiffies).
    tupdate: Time,
    limit: u64,
    alpha: u64,
    beta: u64,
    ecn: bool,
    bytemode: bool,
    mtu: u64,
}

/// `struct pie_vars` (timestamp mode).
#[derive(Clone, Copy, Debug)]
struct Vars {
    /// psched ticks.
    qdelay: u64,
    qdelay_old: u64,
    burst_time: u64,
    /// The last dequeue, psched ticks (`DTIME_INVALID`: none since the variables were reset).
    dq_tstamp: Option<u64>,
    prob: u64,
    accu_prob: u64,
}

impl Vars {
    /// pie_vars_init (the probability and the delays stay).
    fn reset(&mut self) {
        self.burst_time = ns_to_ticks(150_000_000);
        self.dq_tstamp = None;
        self.accu_prob = 0;
    }
}

/// PSCHED_NS2TICKS.
fn ns_to_ticks(ns: u64) -> u64 {
    ns >> PSCHED_SHIFT
}

pub struct PieLinux {
    params: Params,
    fifo: Fifo,
    vars: Vars,
    next_update: Time,
    rng: Rng,
}

impl PieLinux {
    pub fn new(cfg: &PieLinuxConfig, rng: Rng) -> Self {
        let jiffy = NANOS_PER_SEC / u64::from(cfg.hz);
        let scaled = |sixteenths: u32| (u64::from(sixteenths) * (MAX_PROB / PSCHED_TICKS_PER_SEC)) >> 4;
        let mut vars = Vars {
            qdelay: 0,
            qdelay_old: 0,
            burst_time: 0,
            dq_tstamp: None,
            prob: 0,
            accu_prob: 0,
        };
        vars.reset();
        // pie_init arms the timer HZ/2 jiffies ahead.
        let first_update = u64::from(cfg.hz / 2) * jiffy;
        PieLinux {
            params: Params {
                target: ns_to_ticks((cfg.target.0 * 1e6).round() as u64 * 1000),
                tupdate: cfg.tupdate_jiffies() * jiffy,
                limit: cfg.limit,
                alpha: scaled(cfg.alpha),
                beta: scaled(cfg.beta),
                ecn: cfg.ecn,
                bytemode: cfg.bytemode,
                mtu: cfg.mtu.0,
            },
            fifo: Fifo::default(),
            vars,
            next_update: first_update,
            rng,
        }
    }

    /// pie_calculate_probability, on the timer, with `backlog` bytes queued.
    fn calculate_probability(&mut self, backlog: u64) {
        let p = &self.params;
        let v = &mut self.vars;
        let (qdelay, qdelay_old) = (v.qdelay, v.qdelay_old);
        // A zero delay with packets queued means a tiny backlog: no decay this round.
        let mut update_prob = !(qdelay == 0 && backlog != 0);
        let (mut alpha, mut beta) = (p.alpha, p.beta);
        if v.prob < MAX_PROB / 10 {
            alpha >>= 1;
            beta >>= 1;
            let mut power = 100;
            while v.prob < MAX_PROB / power && power <= 1_000_000 {
                alpha >>= 2;
                beta >>= 2;
                power *= 10;
            }
        }
        // The kernel multiplies unsigned differences; modulo 2^64 that is the signed product.
        let mut delta = (alpha as i64).wrapping_mul(qdelay.wrapping_sub(p.target) as i64);
        delta = delta.wrapping_add((beta as i64).wrapping_mul(qdelay.wrapping_sub(qdelay_old) as i64));
        let old_prob = v.prob;
        if delta > (MAX_PROB / 50) as i64 && v.prob >= MAX_PROB / 10 {
            delta = ((MAX_PROB / 100) * 2) as i64;
        }
        if qdelay > ns_to_ticks(250_000_000) {
            delta += (MAX_PROB / 50) as i64;
        }
        v.prob = v.prob.wrapping_add(delta as u64);
        if delta > 0 {
            if v.prob < old_prob {
                v.prob = MAX_PROB;
                update_prob = false;
            }
        } else if v.prob > old_prob {
            v.prob = 0;
        }
        if qdelay == 0 && qdelay_old == 0 && update_prob {
            v.prob -= v.prob / 64;
        }
        if qdelay < p.target / 2 && qdelay_old < p.target / 2 && v.prob == 0 {
            v.reset();
        }
        v.qdelay_old = qdelay;
    }

    /// Runs the timer's updates due by `now`: the state is constant between events, so an update
    /// run at the next event sees what the timer saw (`backlog` bytes queued).
    fn catch_up(&mut self, now: Time, backlog: u64) {
        while now >= self.next_update {
            self.calculate_probability(backlog);
            self.next_update += self.params.tupdate;
        }
    }

    /// pie_drop_early for an arrival of `size` bytes finding `backlog` bytes queued.
    fn drop_early(&mut self, size: u64, backlog: u64) -> bool {
        let (p, v) = (&self.params, &mut self.vars);
        if v.burst_time > 0 {
            return false;
        }
        if v.qdelay < p.target / 2 && v.prob < MAX_PROB / 5 {
            return false;
        }
        if backlog < 2 * p.mtu {
            return false;
        }
        let local_prob = if p.bytemode && size <= p.mtu {
            size * (v.prob / p.mtu)
        } else {
            v.prob
        };
        if local_prob == 0 {
            v.accu_prob = 0;
        } else {
            v.accu_prob = v.accu_prob.wrapping_add(local_prob);
        }
        if v.accu_prob < (MAX_PROB / 100) * 85 {
            return false;
        }
        if v.accu_prob >= (MAX_PROB / 2) * 17 {
            return true;
        }
        if self.rng.gen::<u64>() >> 8 < local_prob {
            v.accu_prob = 0;
            return true;
        }
        false
    }

    /// The probability, 0 to 1 (it can exceed 1 by the 250 ms step, as the kernel's).
    pub fn prob(&self) -> f64 {
        self.vars.prob as f64 / MAX_PROB as f64
    }
}

impl QueueDisc for PieLinux {
    /// pie_qdisc_enqueue.
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx) -> Verdict {
        let queued = ctx.backlog();
        self.catch_up(ctx.now, queued.bytes);
        let reason = if queued.packets as u64 >= self.params.limit {
            DropReason::Overflow
        } else {
            let packet = &mut ctx.packets[id];
            let drop = self.drop_early(u64::from(packet.size), queued.bytes);
            if !drop {
                self.fifo.push(id);
                return Verdict::Enqueued;
            }
            if self.params.ecn && self.vars.prob <= MAX_PROB / 10 && packet.ecn != Ecn::NotEct {
                ctx.mark(id);
                self.fifo.push(id);
                return Verdict::Enqueued;
            }
            DropReason::Early
        };
        self.vars.accu_prob = 0;
        Verdict::Dropped(reason)
    }

    /// pie_qdisc_dequeue and pie_process_dequeue (timestamps).
    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        self.catch_up(ctx.now, ctx.backlog().bytes);
        let id = self.fifo.pop(ctx.packets)?;
        let now = ns_to_ticks(ctx.now);
        let v = &mut self.vars;
        v.qdelay = now - ns_to_ticks(ctx.packets[id].enqueued_at);
        let dtime = v.dq_tstamp.map_or(0, |t| now - t);
        v.dq_tstamp = Some(now);
        if ctx.backlog().without(ctx.packets[id].size).bytes == 0 {
            v.qdelay = 0;
        }
        if dtime > 0 {
            v.burst_time = v.burst_time.saturating_sub(dtime);
        }
        Some(id)
    }

    fn can_mark(&self) -> bool {
        true
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        vec![("drop_prob", self.prob())]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::{QdiscHarness, MS};
    use crate::rng::stream;

    fn pie(cfg: PieLinuxConfig) -> QdiscHarness<PieLinux> {
        cfg.validate("q").unwrap();
        QdiscHarness::new(Box::new(PieLinux::new(&cfg, stream(1, "pie-linux"))))
    }

    #[test]
    fn the_timer_counts_whole_jiffies_from_half_a_second() {
        let at = |hz| {
            let q = PieLinux::new(
                &PieLinuxConfig {
                    hz,
                    ..Default::default()
                },
                stream(1, "pie-linux"),
            );
            (q.next_update, q.params.tupdate)
        };
        // usecs_to_jiffies(15000): 1.5 jiffies at HZ = 100 → 2 (20 ms); 3.75 at 250 → 4 (16 ms); 15 at 1000.
        assert_eq!(at(100), (500 * MS, 20 * MS));
        assert_eq!(at(250), (500 * MS, 16 * MS));
        assert_eq!(at(1000), (500 * MS, 15 * MS));
    }

    #[test]
    fn alpha_and_beta_are_sixteenths_per_psched_tick() {
        let q = PieLinux::new(&PieLinuxConfig::default(), stream(1, "pie-linux"));
        // MAX_PROB / 15 625 000 = 4 611 686 018 per tick; ·2 >> 4 and ·20 >> 4.
        assert_eq!(q.params.alpha, 576_460_752);
        assert_eq!(q.params.beta, 5_764_607_522);
        // 15 ms = 234 375 ticks of 64 ns.
        assert_eq!(q.params.target, 234_375);
    }

    /// The probability after one update from `prob` with the current and previous delays in ms.
    fn step(prob: f64, qdelay_ms: u64, qdelay_old_ms: u64) -> f64 {
        let mut q = pie(PieLinuxConfig::default());
        q.q.vars.prob = (prob * MAX_PROB as f64) as u64;
        q.q.vars.qdelay = ns_to_ticks(qdelay_ms * 1_000_000);
        q.q.vars.qdelay_old = ns_to_ticks(qdelay_old_ms * 1_000_000);
        q.q.calculate_probability(0);
        q.q.prob()
    }

    #[test]
    fn the_controller_scales_its_step_by_the_probability() {
        // At 10 % and above the step is α·(qdelay − target) + β·(qdelay − qdelay_old), α = 0.125/s:
        // 5 ms over target, steady: +0.125 · 0.005 = +0.000625.
        assert!((step(0.2, 20, 20) - (0.2 + 0.000625)).abs() < 1e-9);
        // Below 10 %: halved; below 1 %: ÷8; below 0.1 %: ÷32.
        assert!((step(0.05, 20, 20) - (0.05 + 0.000625 / 2.0)).abs() < 1e-9);
        assert!((step(0.005, 20, 20) - (0.005 + 0.000625 / 8.0)).abs() < 1e-9);
        assert!((step(0.0005, 20, 20) - (0.0005 + 0.000625 / 32.0)).abs() < 1e-9);
        // A rising delay adds β's part: from 15 to 35 ms at 20 %: +0.125·0.02 + 1.25·0.02 = 0.0275,
        // more than 2 %: cut to 2 %.
        assert!((step(0.2, 35, 15) - 0.22).abs() < 1e-9);
        // Over 250 ms: 2 % more on top.
        assert!((step(0.2, 260, 260) - (0.2 + 0.02 + 0.02)).abs() < 1e-9);
    }

    #[test]
    fn an_idle_queue_decays_by_a_sixty_fourth_and_resets_the_burst_allowance() {
        let mut q = pie(PieLinuxConfig::default());
        q.q.vars.prob = MAX_PROB / 4;
        q.q.vars.burst_time = 0;
        // Empty queue, both delays 0: the step is −α·target halved... then the 1/64 decay.
        q.q.calculate_probability(0);
        let after = q.q.prob();
        let expected = {
            let alpha = 0.125 / 15_625_000.0 * 234_375.0; // α per tick × target in ticks
            let p = 0.25 - alpha;
            p - p / 64.0
        };
        assert!((after - expected).abs() < 1e-9, "{after} vs {expected}");
        assert_eq!(q.q.vars.burst_time, 0, "the probability is not 0: no reset");
    }

    #[test]
    fn drops_are_de_randomised_by_the_accumulated_probability() {
        let mut q = pie(PieLinuxConfig::default());
        // Probability 0.1 and a delay above target/2, burst spent, 4 MTUs queued.
        let queued = 4 * 1514;
        q.q.vars.burst_time = 0;
        q.q.vars.qdelay = q.q.params.target;
        q.q.vars.prob = MAX_PROB / 10;
        // accu_prob reaches 0.85 at the 9th arrival (8 · 0.1 = 0.8 < 0.85): the first 8 never drop.
        for _ in 0..8 {
            assert!(!q.q.drop_early(1514, queued));
        }
        // From the 9th on, random; certain once accu_prob ≥ 8.5, which 85 · (MAX_PROB/10), truncated,
        // just misses: by the 86th.
        let mut gap = 8;
        while !q.q.drop_early(1514, queued) {
            gap += 1;
        }
        assert!((9..=86).contains(&(gap + 1)), "dropped at arrival {}", gap + 1);
        assert_eq!(q.q.vars.accu_prob, 0);
        // Below two MTUs queued (3027 bytes): never.
        let mut q = pie(PieLinuxConfig::default());
        q.q.vars.burst_time = 0;
        q.q.vars.qdelay = q.q.params.target;
        q.q.vars.prob = MAX_PROB;
        assert!(!q.q.drop_early(1514, 3027));
    }

    #[test]
    fn the_burst_allowance_runs_down_between_dequeues() {
        let mut q = pie(PieLinuxConfig::default());
        for _ in 0..10 {
            q.arrive(0, 1, 1514);
        }
        // 150 ms of allowance: dequeues 100 ms apart spend it by the third (the first sets the clock).
        q.depart(100 * MS);
        assert_eq!(q.q.vars.burst_time, ns_to_ticks(150_000_000));
        q.depart(200 * MS);
        assert_eq!(
            q.q.vars.burst_time,
            ns_to_ticks(150_000_000) - ns_to_ticks(200 * MS) + ns_to_ticks(100 * MS)
        );
        q.depart(300 * MS);
        assert_eq!(q.q.vars.burst_time, 0);
        // The delay is the sojourn of the packet that left: 300 ms.
        assert_eq!(q.q.vars.qdelay, ns_to_ticks(300 * MS));
    }

    #[test]
    fn errors_name_the_tc_word() {
        let err = |cfg: PieLinuxConfig| cfg.validate("q").unwrap_err().to_string();
        assert_eq!(
            err(PieLinuxConfig {
                alpha: 33,
                ..Default::default()
            }),
            "q.alpha: must be 0..=32 (tc pie: sixteenths, 2 = 0.125), got 33"
        );
        assert!(err(PieLinuxConfig {
            hz: 128,
            ..Default::default()
        })
        .starts_with("q.hz: must divide 1000000"));
        assert!(err(PieLinuxConfig {
            tupdate: Seconds(0.0),
            ..Default::default()
        })
        .starts_with("q.tupdate:"));
    }
}
