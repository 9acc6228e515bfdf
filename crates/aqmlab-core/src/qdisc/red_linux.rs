//! RED as Linux runs it (`type = "red", profile = "linux"`): the arithmetic of
//! `include/net/red.h`, the qdisc of `net/sched/sch_red.c`, configured as `tc qdisc add ... red`
//! configures it (iproute2 `tc/q_red.c` and `tc/tc_red.c`). Linux codes Floyd–Jacobson's
//! algorithm "divisionless" (its header cites F–J Fig. 17) and differs from `red.rs`'s reading of
//! the paper in these rules:
//! - **weight**: the average's weight is W = 2^−Wlog, and the user does not give it: tc picks the
//!   smallest Wlog with `burst + 1 − min/avpkt ≤ (1 − (1 − W)^burst)/W`, i.e. a burst of `burst`
//!   packets of `avpkt` bytes arriving at an empty queue leaves the average below `min`
//!   (tc_red_eval_ewma: `burst 100`, `min 16000`, `avpkt 1000` give Wlog 9, W ≈ 0.00195). The average
//!   is a fixed-point number scaled by 2^Wlog: `qavg += backlog − (qavg >> Wlog)`, truncating;
//! - **bytes, without size scaling**: the backlog, thresholds and average count the bytes queued, but
//!   every arrival is dropped with the same probability whatever its size (F–J §4's byte mode, and
//!   ns-2's, scale it by size / mean packet size);
//! - **spacing**: after each drop (and on the first arrival above `min`, which is never dropped) a
//!   threshold qR is drawn uniform in [0, (max − min)/max_P); an arrival is dropped when
//!   (avg − min)·count ≥ qR, `count` counting arrivals since. At a steady average the gap between
//!   drops is uniform on 1..⌊1/p_b⌋ as F–J's `p_b/(1 − count·p_b)` makes it, but one draw decides
//!   each gap (red_action, red_mark_probability, red_random);
//! - **forced**: from `avg ≥ max` every arrival is dropped (marked with `ecn` unless `harddrop`);
//! - **idle**: an arrival after an idle period divides the average by 2^Stab[idle µs >> Scell_log],
//!   a table tc fills from `bandwidth` and `avpkt` (tc_red_eval_idle_damping); where the table says 0
//!   it subtracts avg·idle/2^Scell_log, at most half (red_calc_qavg_from_idle_time). The table is
//!   computed in psched ticks of 1/15.625 µs and read in µs, as the kernel reads it;
//! - **buffer**: a child bfifo admits an arrival while backlog + its size ≤ `limit` bytes.
//!
//! Sizes are what the kernel counts: frames with their Ethernet header (1514 bytes for a full one).

use super::{DropReason, Fifo, Gauges, LinkInfo, QdiscConfig, QdiscCtx, QueueDisc, Verdict};
use crate::error::ScenarioError;
use crate::packet::{Ecn, PacketId};
use crate::rng::Rng;
use crate::time::Time;
use crate::units::{Bytes, Rate};
use rand::Rng as _;
use serde::Deserialize;

/// Psched ticks per µs that tc reads from `/proc/net/psched` (t2us / us2t = 1000 / 64 on every
/// kernel since 2.6.31, whose psched clock is 64 ns): tc computes the idle table in these ticks.
const TC_TICKS_PER_US: f64 = 1000.0 / 64.0;
/// `RED_STAB_SIZE`.
const STAB_SIZE: usize = 256;

/// `type = "red", profile = "linux"`: tc red's words, with units. `limit` and `avpkt` are
/// required, as tc requires them.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RedLinuxConfig {
    /// The child bfifo's size in bytes (tc `limit BYTES`).
    pub limit: Option<Bytes>,
    /// Default: max / 3 (tc, after Floyd's REDparameters.txt).
    pub min: Option<Bytes>,
    /// Default: 3 · min, or limit / 4 without `min` (tc).
    pub max: Option<Bytes>,
    /// Mean packet size, for the weight and the idle table (tc `avpkt BYTES`).
    pub avpkt: Option<Bytes>,
    /// Packets of `avpkt` bytes a burst may hold without the average reaching `min`: sets Wlog.
    /// Default (2·min + max) / (3·avpkt) (tc).
    pub burst: Option<u64>,
    /// max_P, the drop probability at `max`: 0.02 (tc).
    pub probability: Option<f64>,
    /// The link's rate, for the idle table: 10 Mbit/s (tc's default, which it announces).
    pub bandwidth: Option<Rate>,
    /// Mark ECN-capable arrivals CE instead of dropping them (tc `ecn`).
    pub ecn: bool,
    /// With `ecn`, drop rather than mark above `max` (tc `harddrop`).
    pub harddrop: bool,
}

/// What tc computes from a RED or CHOKe command line, in the command's own units: thresholds in
/// bytes (RED) or packets (CHOKe, whose weight tc computes with `min·avpkt` bytes).
#[derive(Clone, Copy, Debug)]
pub struct TcRed {
    pub min: u64,
    pub max: u64,
    /// `min` in bytes, for tc_red_eval_ewma.
    pub min_bytes: u64,
    pub avpkt: u64,
    pub burst: u64,
    pub probability: f64,
    pub bandwidth_bps: f64,
}

/// Linux `struct red_parms`, as `red_set_parms` leaves it.
#[derive(Clone, Debug)]
pub struct RedParms {
    /// Thresholds in fixed point, scaled by 2^Wlog.
    qth_min: u64,
    qth_max: u64,
    wlog: u8,
    /// max_P / (max − min), at least 1: what a random u32 is divided by to draw qR.
    max_p_delta: u32,
    scell_log: u8,
    stab: [u8; STAB_SIZE],
}

/// Linux `struct red_vars`.
#[derive(Clone, Debug)]
pub struct RedVars {
    /// Arrivals since the last drop, −1 below `min`.
    qcount: i64,
    /// The current random threshold.
    q_r: u64,
    /// The average, scaled by 2^Wlog.
    qavg: u64,
    /// When the queue went idle, while it is.
    idle_since: Option<Time>,
}

impl Default for RedVars {
    fn default() -> Self {
        // red_set_vars; sch_red starts not idling (its private data is zeroed).
        RedVars {
            qcount: -1,
            q_r: 0,
            qavg: 0,
            idle_since: None,
        }
    }
}

/// `red_action`'s verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedAction {
    DontMark,
    ProbMark,
    HardMark,
}

/// tc_red_eval_ewma: the smallest Wlog for which `burst + 1 − qmin/avpkt ≤ (1 − (1 − W)^burst)/W`
/// with W = 2^−Wlog, or the error tc prints.
pub fn ewma_log(qmin_bytes: u64, burst: u64, avpkt: u64) -> Result<u8, String> {
    let a = burst as f64 + 1.0 - qmin_bytes as f64 / avpkt as f64;
    if a < 1.0 {
        return Err(format!(
            "too small for min / avpkt = {}: tc would suggest burst {}",
            qmin_bytes as f64 / avpkt as f64,
            1 + qmin_bytes / avpkt
        ));
    }
    let mut w: f64 = 0.5;
    for wlog in 1..32u8 {
        if a <= (1.0 - (1.0 - w).powf(burst as f64)) / w {
            return Ok(wlog);
        }
        w /= 2.0;
    }
    Err("too large: no weight 2^-Wlog with Wlog < 32 holds it (tc_red_eval_ewma)".into())
}

/// tc_red_eval_idle_damping: Scell_log and the table Stab[i] = ⌊(i·2^Scell_log)·lW⌋ ≤ 31, with
/// lW = −ln(1 − W) per psched tick of a mean packet's transmission at the bandwidth (bytes/s).
pub fn idle_damping(wlog: u8, avpkt: u64, bandwidth_bytes_per_s: f64) -> Option<(u8, [u8; STAB_SIZE])> {
    // tc_calc_xmittime: ceil(ticks of TIME_UNITS_PER_SEC · size / rate).
    let xmit_ticks = (TC_TICKS_PER_US * 1e6 * avpkt as f64 / bandwidth_bytes_per_s).ceil();
    let lw = -(1.0 - 1.0 / (1u64 << wlog) as f64).ln() / xmit_ticks;
    let max_time = 31.0 / lw;
    let clog = (0..32u8).find(|&clog| max_time / ((1u64 << clog) as f64) < 512.0)?;
    let mut stab = [31u8; STAB_SIZE];
    stab[0] = 0;
    for (i, entry) in stab.iter_mut().enumerate().take(STAB_SIZE - 1).skip(1) {
        // C's double-to-u8 conversion of a value ≥ 0, then the cap.
        *entry = (((i as u64) << clog) as f64 * lw).min(31.0) as u8;
    }
    Some((clog, stab))
}

/// `fls`: the position of the highest set bit, 0 for 0.
fn fls(x: u64) -> u32 {
    64 - x.leading_zeros()
}

impl TcRed {
    /// The kernel's parameters as tc computes them and `red_check_params` accepts them; the error
    /// names the tc word at fault.
    pub fn parms(&self) -> Result<RedParms, (&'static str, String)> {
        if self.max < self.min {
            return Err(("min", format!("must be <= max ({}), got {}", self.max, self.min)));
        }
        let wlog = ewma_log(self.min_bytes, self.burst, self.avpkt).map_err(|e| ("burst", e))?;
        let (scell_log, stab) = idle_damping(wlog, self.avpkt, self.bandwidth_bps / 8.0)
            .ok_or(("bandwidth", "tc finds no idle table".into()))?;
        // red_check_params: the scaled thresholds fit 32 bits.
        for (word, th) in [("min", self.min), ("max", self.max)] {
            if fls(th) + wlog as u32 >= 32 {
                return Err((
                    word,
                    format!("{th} scaled by 2^Wlog = 2^{wlog} does not fit 32 bits (Linux red_check_params)"),
                ));
            }
        }
        // tc passes max_P = probability · 2^32 as a u32; red_set_parms divides it by max − min.
        let max_p = (self.probability * 4_294_967_296.0) as u32;
        let delta = (self.max - self.min).max(1) as u32;
        Ok(RedParms {
            qth_min: self.min << wlog,
            qth_max: self.max << wlog,
            wlog,
            max_p_delta: (max_p / delta).max(1),
            scell_log,
            stab,
        })
    }
}

impl RedParms {
    pub fn wlog(&self) -> u8 {
        self.wlog
    }

    pub fn scell_log(&self) -> u8 {
        self.scell_log
    }

    /// The average in the thresholds' unit.
    pub fn average(&self, vars: &RedVars) -> f64 {
        vars.qavg as f64 / (1u64 << self.wlog) as f64
    }

    /// red_calc_qavg for an arrival that finds `backlog` queued at `now`, ending an idle period.
    pub fn calc_qavg(&self, vars: &mut RedVars, backlog: u64, now: Time) -> u64 {
        vars.qavg = match vars.idle_since.take() {
            Some(since) => self.qavg_after_idle(vars.qavg, (now - since) / 1000),
            // qavg·(1 − W) + backlog·W in fixed point; the kernel's unsigned arithmetic wraps.
            None => vars.qavg.wrapping_add(backlog.wrapping_sub(vars.qavg >> self.wlog)),
        };
        vars.qavg
    }

    /// red_calc_qavg_from_idle_time, `us_idle` microseconds idle.
    fn qavg_after_idle(&self, qavg: u64, us_idle: u64) -> u64 {
        let us_idle = us_idle.min(255 << self.scell_log);
        let shift = self.stab[((us_idle >> self.scell_log) as usize) & (STAB_SIZE - 1)];
        if shift > 0 {
            return qavg >> shift;
        }
        // (1 − W)^m ≈ 1 − m·W for the table's first cells.
        let decrease = ((qavg as u128 * us_idle as u128) >> self.scell_log) as u64;
        if decrease < qavg >> 1 {
            qavg - decrease
        } else {
            qavg >> 1
        }
    }

    /// red_random: a new threshold, a random u32 over max_P / (max − min).
    pub fn random(&self, rng: &mut Rng) -> u64 {
        u64::from(rng.gen::<u32>() / self.max_p_delta)
    }

    /// red_mark_probability: whether (avg − min)·count reaches the threshold.
    pub fn mark_probability(&self, vars: &RedVars, qavg: u64) -> bool {
        let above = (qavg - self.qth_min) >> self.wlog;
        above.saturating_mul(vars.qcount as u64) >= vars.q_r
    }

    /// red_action at average `qavg`.
    pub fn action(&self, vars: &mut RedVars, qavg: u64, rng: &mut Rng) -> RedAction {
        if qavg < self.qth_min {
            vars.qcount = -1;
            RedAction::DontMark
        } else if qavg >= self.qth_max {
            vars.qcount = -1;
            RedAction::HardMark
        } else {
            self.between(vars, qavg, rng)
        }
    }

    /// red_action between the thresholds (CHOKe's too): count the arrival; the first one after
    /// the average rose above `min` draws the threshold and passes.
    pub fn between(&self, vars: &mut RedVars, qavg: u64, rng: &mut Rng) -> RedAction {
        vars.qcount += 1;
        if vars.qcount == 0 {
            vars.q_r = self.random(rng);
            return RedAction::DontMark;
        }
        if self.mark_probability(vars, qavg) {
            vars.qcount = 0;
            vars.q_r = self.random(rng);
            return RedAction::ProbMark;
        }
        RedAction::DontMark
    }

    /// Whether `qavg` is at or below `min` (CHOKe's "is queue small?").
    pub fn at_or_below_min(&self, qavg: u64) -> bool {
        qavg <= self.qth_min
    }

    /// Whether `qavg` is above `max` (CHOKe's forced drop: strictly above, where RED's is at or above).
    pub fn above_max(&self, qavg: u64) -> bool {
        qavg > self.qth_max
    }
}

impl RedVars {
    /// The queue went idle at `now` (a dequeue found it empty), unless it already was.
    pub fn start_idle(&mut self, now: Time) {
        self.idle_since.get_or_insert(now);
    }

    /// Variables whose average is `qavg` (scaled), the queue busy.
    #[cfg(test)]
    pub(crate) fn with_qavg(qavg: u64) -> Self {
        RedVars {
            qavg,
            ..Default::default()
        }
    }

    /// Resets the count (CHOKe's "queue small" and forced branches).
    pub fn reset_count(&mut self) {
        self.qcount = -1;
    }
}

impl RedLinuxConfig {
    /// tc's command line resolved with its defaults, in bytes.
    fn tc(&self) -> TcRed {
        let limit = self.limit.map_or(0, |b| b.0);
        let avpkt = self.avpkt.map_or(1, |b| b.0);
        let min = self.min.map(|b| b.0);
        let max = self.max.map_or_else(|| min.map_or(limit / 4, |m| 3 * m), |b| b.0);
        let min = min.unwrap_or(max / 3);
        TcRed {
            min,
            max,
            min_bytes: min,
            avpkt,
            burst: self.burst.unwrap_or((2 * min + max) / (3 * avpkt)),
            probability: self.probability.unwrap_or(0.02),
            bandwidth_bps: self.bandwidth.map_or(10e6, |r| r.0),
        }
    }
}

impl QdiscConfig for RedLinuxConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        let field = |name: &str| format!("{path}.{name}");
        for (name, value) in [("limit", self.limit), ("avpkt", self.avpkt)] {
            match value {
                None => {
                    return Err(ScenarioError::new(
                        field(name),
                        "required by tc red (limit BYTES, avpkt BYTES), e.g. \"64000B\"",
                    ))
                }
                Some(Bytes(0)) => return Err(ScenarioError::new(field(name), "must be > 0, got 0")),
                Some(_) => {}
            }
        }
        if let Some(p) = self.probability {
            if !(p > 0.0 && p < 1.0) {
                return Err(ScenarioError::new(
                    field("probability"),
                    format!("must be in (0, 1) (tc passes it as a 32-bit fraction), got {p}"),
                ));
            }
        }
        if self.bandwidth.is_some_and(|r| r.0 <= 0.0) {
            return Err(ScenarioError::new(field("bandwidth"), "must be > 0"));
        }
        self.tc()
            .parms()
            .map(|_| ())
            .map_err(|(word, message)| ScenarioError::new(field(word), message))
    }

    fn build(&self, _link: &LinkInfo, rng: Rng) -> Box<dyn QueueDisc> {
        Box::new(RedLinux::new(self, rng))
    }
}

pub struct RedLinux {
    parms: RedParms,
    /// The child bfifo's limit, bytes.
    limit: u64,
    ecn: bool,
    harddrop: bool,
    fifo: Fifo,
    vars: RedVars,
    rng: Rng,
}

impl RedLinux {
    /// A validated config's qdisc.
    pub fn new(cfg: &RedLinuxConfig, rng: Rng) -> Self {
        RedLinux {
            parms: cfg.tc().parms().expect("validated"),
            limit: cfg.limit.expect("validated").0,
            ecn: cfg.ecn,
            harddrop: cfg.harddrop,
            fifo: Fifo::default(),
            vars: RedVars::default(),
            rng,
        }
    }
}

impl QueueDisc for RedLinux {
    /// red_enqueue.
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx) -> Verdict {
        let backlog = ctx.backlog().bytes;
        let qavg = self.parms.calc_qavg(&mut self.vars, backlog, ctx.now);
        let (size, ect) = (ctx.packets[id].size, ctx.packets[id].ecn != Ecn::NotEct);
        match self.parms.action(&mut self.vars, qavg, &mut self.rng) {
            RedAction::DontMark => {}
            RedAction::ProbMark if self.ecn && ect => ctx.mark(id),
            RedAction::ProbMark => return Verdict::Dropped(DropReason::Early),
            RedAction::HardMark if self.ecn && !self.harddrop && ect => ctx.mark(id),
            RedAction::HardMark => return Verdict::Dropped(DropReason::Forced),
        }
        // The child bfifo.
        if backlog + u64::from(size) > self.limit {
            return Verdict::Dropped(DropReason::Overflow);
        }
        self.fifo.push(id);
        Verdict::Enqueued
    }

    /// red_dequeue: an empty child starts an idle period.
    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        let next = self.fifo.pop(ctx.packets);
        if next.is_none() {
            self.vars.start_idle(ctx.now);
        }
        next
    }

    fn gauges(&self) -> Gauges {
        Gauges {
            average: Some(self.parms.average(&self.vars)),
            ..Gauges::default()
        }
    }

    fn can_mark(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::{link, QdiscHarness, MS};
    use crate::rng::stream;

    /// The demo's RED as a Linux user types it (`tc qdisc add ... red limit 64000 min 16000 max 32000
    /// avpkt 1000 burst 100 probability 0.1 bandwidth 10mbit`).
    fn demo() -> RedLinuxConfig {
        RedLinuxConfig {
            limit: Some(Bytes(64000)),
            min: Some(Bytes(16000)),
            max: Some(Bytes(32000)),
            avpkt: Some(Bytes(1000)),
            burst: Some(100),
            probability: Some(0.1),
            bandwidth: Some(Rate(10e6)),
            ..Default::default()
        }
    }

    #[test]
    fn wlog_is_the_smallest_that_holds_the_burst_as_tc_computes_it() {
        // a = burst + 1 − min/avpkt = 85; (1 − (1 − W)^100)/W is 83.0 at W = 2^-8, 91.0 at 2^-9.
        assert_eq!(ewma_log(16000, 100, 1000), Ok(9));
        // tc's default burst (2·16000 + 32000) / 3000 = 21: a = 6, and (1 − (7/8)^21)·8 = 7.5 ≥ 6 > 3.9.
        assert_eq!(demo().tc().burst, 100);
        assert_eq!(ewma_log(16000, 21, 1000), Ok(3));
        // A burst smaller than min/avpkt cannot be held; tc suggests 1 + min/avpkt.
        assert!(ewma_log(16000, 10, 1000).unwrap_err().contains("burst 17"));
    }

    #[test]
    fn the_idle_table_is_tcs() {
        // `tc -d qdisc show` of the demo's RED in Linux 6.1 prints "ewma 9 ... Scell_log 19".
        let parms = demo().tc().parms().unwrap();
        assert_eq!((parms.wlog(), parms.scell_log()), (9, 19));
        // xmit time 800 µs = 12500 ticks; lW = −ln(1 − 2^-9)/12500: Stab[i] = ⌊i·2^19·lW⌋ first
        // reaches 1 at i = 13 (12.2 < 13) and 31 at i = 379 > 254, so never: the cap at 255.
        assert_eq!(parms.stab[12], 0);
        assert_eq!(parms.stab[13], 1);
        assert_eq!(parms.stab[254], 20);
        assert_eq!(parms.stab[255], 31);
    }

    #[test]
    fn tc_defaults_come_from_limit_and_min() {
        let only_limit = RedLinuxConfig {
            min: None,
            max: None,
            burst: None,
            ..demo()
        };
        // max = limit/4 = 16000, min = max/3 = 5333, burst = (2·5333 + 16000)/3000 = 8.
        let tc = only_limit.tc();
        assert_eq!((tc.min, tc.max, tc.burst), (5333, 16000, 8));
        let only_min = RedLinuxConfig { max: None, ..demo() };
        assert_eq!(only_min.tc().max, 48000);
    }

    #[test]
    fn the_average_is_the_kernels_fixed_point_ewma() {
        let parms = demo().tc().parms().unwrap();
        let mut vars = RedVars::default();
        // n arrivals at a constant backlog B: qavg/2^9 = B(1 − (1 − 2^-9)^n) less the truncations,
        // one byte at most per step (each step truncates qavg >> 9 once, by less than 1).
        // The error e_n (in bytes) follows e_n = (1 − W)·e_(n−1) + frac/512 with frac in [0, 1): it
        // stays in [0, 1).
        let backlog = 20_000u64;
        for n in 1..=3000 {
            let qavg = parms.calc_qavg(&mut vars, backlog, 0);
            let exact = backlog as f64 * (1.0 - (1.0 - 1.0 / 512.0f64).powi(n));
            let ours = qavg as f64 / 512.0;
            assert!(ours >= exact - 1e-6 && ours < exact + 1.0, "n = {n}: {ours} vs {exact}");
        }
    }

    /// The arrivals a RED queue held at an average `avg` bytes judges, in `n` arrivals of `size` bytes:
    /// the gaps between successive early drops.
    fn gaps(parms: &RedParms, avg: u64, n: usize, seed: u64) -> Vec<u64> {
        let mut vars = RedVars::default();
        let mut rng = stream(seed, "red-linux");
        let qavg = avg << parms.wlog;
        let (mut gaps, mut since) = (Vec::new(), None::<u64>);
        for _ in 0..n {
            since = since.map(|s| s + 1);
            if parms.action(&mut vars, qavg, &mut rng) == RedAction::ProbMark {
                gaps.extend(since);
                since = Some(0);
            }
        }
        gaps
    }

    #[test]
    fn one_draw_spaces_the_drops_uniformly_on_one_to_one_over_p_b() {
        // avg halfway: p_b = 0.05, qR uniform in [0, 16000/0.1): the gap g is the first count with
        // 8000·g ≥ qR, uniform on 1..20: mean 10.5, variance (20² − 1)/12 = 33.25.
        let parms = demo().tc().parms().unwrap();
        let gaps = gaps(&parms, 24_000, 200_000, 1);
        let n = gaps.len() as f64;
        let mean = gaps.iter().sum::<u64>() as f64 / n;
        let var = gaps.iter().map(|&g| (g as f64 - mean).powi(2)).sum::<f64>() / (n - 1.0);
        assert!(gaps.iter().all(|&g| (1..=20).contains(&g)), "every gap in 1..20");
        // The mean of ~19 000 uniform gaps: σ = √(33.25/n) ≈ 0.042; 4σ.
        assert!((mean - 10.5).abs() < 4.0 * (33.25 / n).sqrt(), "mean gap {mean}");
        assert!((var - 33.25).abs() < 0.05 * 33.25, "variance {var}");
    }

    #[test]
    fn a_packets_size_does_not_change_its_drop_probability() {
        // Held near an average of 24 000 bytes (p_b ≈ 0.05), 64-byte and 1514-byte arrivals are
        // dropped alike (F–J's byte mode would drop the large ones 23 times as often).
        let mut h = QdiscHarness::new(demo().build(&link(10e6), stream(3, "red-linux")));
        let (mut small, mut large) = ((0u64, 0u64), (0u64, 0u64));
        for i in 0..40_000u32 {
            while h.backlog.bytes < 24_000 {
                h.arrive(0, 2, 1000);
            }
            let size = if i % 2 == 0 { 64 } else { 1514 };
            let dropped = h.arrive(0, 1, size) != Verdict::Enqueued;
            let tally = if size == 64 { &mut small } else { &mut large };
            *tally = (tally.0 + dropped as u64, tally.1 + 1);
            h.depart(0);
        }
        let (p_small, p_large) = (small.0 as f64 / small.1 as f64, large.0 as f64 / large.1 as f64);
        assert!(p_small > 0.03, "early drops happen: {p_small}");
        // Binomial, 20 000 arrivals each near p = 0.1: σ of the difference ≈ 0.003; 5σ.
        assert!((p_small - p_large).abs() < 0.015, "64 B: {p_small}, 1514 B: {p_large}");
    }

    #[test]
    fn the_first_arrival_above_min_passes_and_forced_drops_start_at_max() {
        let parms = demo().tc().parms().unwrap();
        let mut vars = RedVars::default();
        let mut rng = stream(5, "red-linux");
        // Far above min but below max: the first arrival draws qR and passes, whatever the average.
        assert_eq!(parms.action(&mut vars, 31_999 << 9, &mut rng), RedAction::DontMark);
        assert_eq!(parms.action(&mut vars, 32_000 << 9, &mut rng), RedAction::HardMark);
        assert_eq!(
            parms.action(&mut vars, (16_000 << 9) - 1, &mut rng),
            RedAction::DontMark
        );
    }

    #[test]
    fn an_idle_period_decays_the_average_by_the_table() {
        let parms = demo().tc().parms().unwrap();
        let mut vars = RedVars {
            qavg: 20_000 << 9,
            ..Default::default()
        };
        // 100 ms idle: us_idle >> 19 = 0, Stab[0] = 0: the linear part, qavg·100000/2^19 less.
        vars.start_idle(0);
        let qavg = parms.calc_qavg(&mut vars, 0, 100 * MS);
        assert_eq!(qavg, (20_000u64 << 9) - (((20_000u64 << 9) * 100_000) >> 19));
        // 10 s idle: cell 19, Stab = 1: halved.
        vars.start_idle(200 * MS);
        assert_eq!(parms.calc_qavg(&mut vars, 0, 10_200 * MS), qavg >> 1);
        // A dequeue that finds the queue empty starts the idle period; the next arrival ends it.
        let mut h = QdiscHarness::new(Box::new(RedLinux::new(&demo(), stream(3, "red-linux"))));
        h.q.vars.qavg = 20_000 << 9;
        assert!(h.depart(0).is_none());
        assert_eq!(h.q.vars.idle_since, Some(0));
        h.arrive(100 * MS, 1, 1000);
        assert_eq!((h.q.vars.qavg, h.q.vars.idle_since), (qavg, None));
    }

    #[test]
    fn the_buffer_is_a_bfifo_of_limit_bytes() {
        let mut h = QdiscHarness::new(
            RedLinuxConfig {
                limit: Some(Bytes(3000)),
                min: Some(Bytes(2000)),
                max: Some(Bytes(2900)),
                burst: Some(10),
                ..demo()
            }
            .build(&link(10e6), stream(1, "red-linux")),
        );
        // Wlog 6: the average stays far below min for three packets, so only the limit speaks.
        // 1514 + 1486 = 3000 fits.
        assert_eq!(h.arrive(0, 1, 1514), Verdict::Enqueued);
        assert_eq!(h.arrive(0, 1, 1486), Verdict::Enqueued);
        assert_eq!(h.arrive(0, 1, 1), Verdict::Dropped(DropReason::Overflow));
    }

    #[test]
    fn errors_name_the_tc_word() {
        let err = |cfg: RedLinuxConfig| cfg.validate("q").unwrap_err().to_string();
        assert!(err(RedLinuxConfig { limit: None, ..demo() }).starts_with("q.limit: required by tc red"));
        assert!(err(RedLinuxConfig { avpkt: None, ..demo() }).starts_with("q.avpkt: required"));
        assert!(err(RedLinuxConfig {
            burst: Some(5),
            ..demo()
        })
        .starts_with("q.burst: too small"));
        assert!(err(RedLinuxConfig {
            min: Some(Bytes(40000)),
            ..demo()
        })
        .starts_with("q.min: must be <= max"));
        assert!(err(RedLinuxConfig {
            probability: Some(1.0),
            ..demo()
        })
        .starts_with("q.probability: must be in (0, 1)"));
        let big = RedLinuxConfig {
            limit: Some(Bytes(1 << 30)),
            min: Some(Bytes(1 << 24)),
            max: Some(Bytes(1 << 25)),
            burst: Some(20_000),
            ..demo()
        };
        assert!(err(big).contains("does not fit 32 bits"));
    }
}
