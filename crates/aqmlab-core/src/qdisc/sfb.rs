//! SFB, Stochastic Fair Blue (W. Feng, D. Kandlur, D. Saha, K. Shin, "Stochastic Fair Blue: a
//! queue management algorithm for enforcing fairness", IEEE INFOCOM 2001), on BLUE (the same
//! authors' "BLUE: a new class of active queue management algorithms", U. Michigan
//! CSE-TR-387-99, 1999), with Linux `net/sched/sch_sfb.c` and tc's `q_sfb.c` for the defaults
//! and the details the paper leaves open.
//!
//! `levels` × `bins` accounting bins: each flow (and direction) is hashed into one bin per level,
//! independently per level. A bin counts the queued packets of the flows mapped to it and runs
//! BLUE on that count: on each arrival, a bin holding `target` packets or more raises its marking
//! probability by `increment` (BLUE's "packet loss" event, a full bin), an empty bin lowers it by
//! `decrement` (BLUE's "link idle"), each bin at most once per `freeze_time` (BLUE's freeze time;
//! 0 in Linux, which updates on every arrival). A flow's probability p_min is the minimum over
//! its bins: a responsive flow has at least one bin whose other flows leave it unsaturated; a
//! non-responsive flow drives every one of its bins to 1. The arrival is then:
//! - dropped when all of its bins hold `max` packets or more (`per_flow_limit`; Linux's bucket drop);
//! - if p_min = 1 (non-responsive), rate-limited: queued only with a token from a bucket that
//!   fills at `penalty_rate` packets per second up to `penalty_burst`, one bucket for all such
//!   flows as in Linux, else dropped (`penalty`);
//! - otherwise marked or dropped with probability p_min (`early`): an ECN-capable packet is marked
//!   CE, but when p_min > 1/2 it is dropped with probability 2·(p_min − 1/2) (Linux: "either this
//!   flow is unresponsive, or we're badly congested");
//! - queued in one FIFO of `limit` packets (`overflow` beyond it, checked first as in Linux).
//!
//! Moving hash functions (SFB §4.4, as Linux cites it): every `rehash` the hash functions change, so that a
//! responsive flow is not stuck sharing all its bins with a non-responsive one. For `db` before
//! each change a second set of bins, keyed with the next hash functions, counts and updates on
//! every arrival too (double buffering); at the change it takes over, and the old set is cleared
//! and re-keyed as the next standby. Reading: the paper warms the standby set with every flow;
//! Linux warms it with the rate-limited flows only. We follow the paper.

use super::active_flows::{flow_key, flow_of, FlowKey};
use super::buckets::flow_hash;
use super::{DropReason, Fifo, FlowCounters, LinkInfo, QdiscConfig, QdiscCtx, QueueDisc, Verdict};
use crate::error::ScenarioError;
use crate::packet::{Ecn, FlowId, PacketId, PacketKind};
use crate::rng::Rng;
use crate::time::{from_secs, to_secs, Time, NANOS_PER_SEC};
use crate::units::Seconds;
use crate::validate::{require_in, require_non_negative, require_positive};
use rand::Rng as _;
use serde::Deserialize;
use std::collections::{BTreeMap, VecDeque};

/// `type = "sfb"`; every field optional. Defaults: Linux sch_sfb / tc q_sfb.c.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SfbConfig {
    /// L, levels of bins: 8 (Linux `SFB_LEVELS`, 32-bit hash split in 4-bit parts).
    pub levels: u32,
    /// N, bins per level: 16 (Linux `SFB_NUMBUCKETS`).
    pub bins: u32,
    /// d1, BLUE's increment: 0.0005 (tc `increment`, (SFB_MAX_PROB + 1000) / 2000).
    pub increment: f64,
    /// d2, BLUE's decrement: 0.00005 (tc `decrement`, (SFB_MAX_PROB + 10000) / 20000).
    pub decrement: f64,
    /// Packets in a bin from which its probability rises: 20 (tc `target`, 4/5 of `max`).
    pub target: u32,
    /// Packets in every bin of a flow from which its arrivals are dropped: 25 (tc `max`).
    pub max: u32,
    /// BLUE's freeze time, least time between two updates of a bin: 0 s (Linux updates on every arrival).
    pub freeze_time: Seconds,
    /// Packets in the queue: 1000 (Linux: the device's `txqueuelen` when `limit` is 0).
    pub limit: u64,
    /// Time between hash changes: 600 s (tc `rehash`); 0: never.
    pub rehash: Seconds,
    /// Double-buffering warm-up before each change: 60 s (tc `db`).
    pub db: Seconds,
    /// Packets per second a non-responsive flow may send: 10 (tc `penalty_rate`).
    pub penalty_rate: f64,
    /// Token bucket depth for them, packets: 20 (tc `penalty_burst`).
    pub penalty_burst: f64,
}

impl Default for SfbConfig {
    fn default() -> Self {
        SfbConfig {
            levels: 8,
            bins: 16,
            increment: 0.0005,
            decrement: 0.00005,
            target: 20,
            max: 25,
            freeze_time: Seconds(0.0),
            limit: 1000,
            rehash: Seconds(600.0),
            db: Seconds(60.0),
            penalty_rate: 10.0,
            penalty_burst: 20.0,
        }
    }
}

/// Bounds on the bins allocated for the whole run (two sets of `levels × bins`).
const MAX_LEVELS: u32 = 32;
const MAX_BINS: u32 = 4096;

impl QdiscConfig for SfbConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        let field = |name: &str| format!("{path}.{name}");
        require_in(&field("levels"), self.levels as f64, 1.0, MAX_LEVELS as f64)?;
        require_in(&field("bins"), self.bins as f64, 1.0, MAX_BINS as f64)?;
        require_in(&field("increment"), self.increment, 0.0, 1.0)?;
        require_in(&field("decrement"), self.decrement, 0.0, 1.0)?;
        require_positive(&field("target"), self.target as f64)?;
        if self.max < self.target {
            return Err(ScenarioError::new(
                field("max"),
                format!("must be >= target ({}), got {}", self.target, self.max),
            ));
        }
        require_non_negative(&field("freeze_time"), self.freeze_time)?;
        require_positive(&field("limit"), self.limit as f64)?;
        require_non_negative(&field("rehash"), self.rehash)?;
        require_non_negative(&field("db"), self.db)?;
        require_positive(&field("penalty_rate"), self.penalty_rate)?;
        require_positive(&field("penalty_burst"), self.penalty_burst)
    }

    fn build(&self, link: &LinkInfo, rng: Rng) -> Box<dyn QueueDisc> {
        Box::new(Sfb::new(self, link, rng))
    }
}

/// BLUE's parameters for one bin.
#[derive(Clone, Copy, Debug)]
pub struct BlueParams {
    pub increment: f64,
    pub decrement: f64,
    /// Packets in the bin that count as BLUE's loss event.
    pub target: u32,
    pub freeze_time: Time,
}

/// One bin's BLUE marking probability: BLUE raises p_m by d1 on packet loss and lowers it by d2
/// when the link is idle, at most once per freeze_time; SFB reads loss as a full bin and idle as
/// an empty one.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Blue {
    pub p: f64,
    last_update: Option<Time>,
}

impl Blue {
    /// The update for an arrival that finds `queued` packets in the bin at `now`.
    pub fn on_arrival(&mut self, queued: u32, now: Time, params: &BlueParams) {
        let change = if queued >= params.target {
            params.increment
        } else if queued == 0 {
            -params.decrement
        } else {
            return;
        };
        if self.last_update.is_some_and(|t| now - t < params.freeze_time) {
            return;
        }
        self.p = (self.p + change).clamp(0.0, 1.0);
        self.last_update = Some(now);
    }
}

/// SFB's parameters in effect.
#[derive(Clone, Copy, Debug)]
struct Params {
    levels: usize,
    bins: u32,
    blue: BlueParams,
    max: u32,
    limit: usize,
    rehash: Time,
    db: Time,
    penalty_rate: f64,
    penalty_burst: f64,
    measure_from: Time,
}

#[derive(Clone, Copy, Debug, Default)]
struct Bin {
    queued: u32,
    blue: Blue,
}

/// One set of `levels × bins` bins under one set of hash functions.
struct BinSet {
    key: u64,
    /// Changes with the key: a packet counted under an older key is not uncounted.
    epoch: u32,
    bins: Vec<Bin>,
}

/// Spreads the per-level keys of one set (the 64-bit golden ratio).
const LEVEL_SALT: u64 = 0x9E37_79B9_7F4A_7C15;

impl BinSet {
    fn new(params: &Params, key: u64) -> Self {
        BinSet {
            key,
            epoch: 0,
            bins: vec![Bin::default(); params.levels * params.bins as usize],
        }
    }

    /// The flow's bin at each level.
    fn bins_of(&self, flow: FlowId, kind: PacketKind, params: &Params) -> impl Iterator<Item = usize> {
        let (key, n) = (self.key, params.bins);
        (0..params.levels).map(move |level| {
            let level_key = key.wrapping_add((level as u64 + 1).wrapping_mul(LEVEL_SALT));
            level * n as usize + flow_hash(flow, kind, level_key, n) as usize
        })
    }

    /// BLUE's update in each of the flow's bins; the fewest packets queued and the lowest
    /// probability among them.
    fn on_arrival(&mut self, flow: FlowId, kind: PacketKind, now: Time, params: &Params) -> (u32, f64) {
        let (mut min_queued, mut p_min) = (u32::MAX, 1.0f64);
        for i in self.bins_of(flow, kind, params) {
            let bin = &mut self.bins[i];
            bin.blue.on_arrival(bin.queued, now, &params.blue);
            min_queued = min_queued.min(bin.queued);
            p_min = p_min.min(bin.blue.p);
        }
        (min_queued, p_min)
    }

    fn count(&mut self, flow: FlowId, kind: PacketKind, params: &Params, delta: i32) {
        for i in self.bins_of(flow, kind, params) {
            let bin = &mut self.bins[i];
            bin.queued = bin
                .queued
                .checked_add_signed(delta)
                .expect("a bin counts each of its packets once");
        }
    }

    fn rekey(&mut self, key: u64) {
        self.key = key;
        self.epoch += 1;
        self.bins.fill(Bin::default());
    }
}

/// What SFB counts beyond the engine's drop table, and its per-flow measurement.
#[derive(Default)]
struct Stats {
    /// From `measure_from`: flows found non-responsive (p_min = 1), their arrivals so judged and
    /// when first.
    penalized: BTreeMap<FlowKey, Penalized>,
}

#[derive(Clone, Copy, Debug)]
struct Penalized {
    arrivals: u64,
    first_at: Time,
}

pub struct Sfb {
    params: Params,
    /// The two bin sets; `active` marks with, the other is the standby.
    sets: [BinSet; 2],
    active: usize,
    /// When the hash functions change next (the standby warms up from `next_rehash − db`).
    next_rehash: Time,
    /// The penalty token bucket: tokens, as of `tokens_at`.
    tokens: f64,
    tokens_at: Time,
    fifo: Fifo,
    /// For each queued packet (in FIFO order), the epoch of each set that counted it.
    counted: VecDeque<[Option<u32>; 2]>,
    rng: Rng,
    stats: Stats,
}

impl Sfb {
    pub fn new(config: &SfbConfig, link: &LinkInfo, mut rng: Rng) -> Self {
        let params = Params {
            levels: config.levels as usize,
            bins: config.bins,
            blue: BlueParams {
                increment: config.increment,
                decrement: config.decrement,
                target: config.target,
                freeze_time: from_secs(config.freeze_time.0),
            },
            max: config.max,
            limit: config.limit as usize,
            rehash: from_secs(config.rehash.0),
            db: from_secs(config.db.0),
            penalty_rate: config.penalty_rate,
            penalty_burst: config.penalty_burst,
            measure_from: link.measure_from,
        };
        let sets = [0, 1].map(|_| BinSet::new(&params, rng.gen()));
        Sfb {
            next_rehash: params.rehash,
            tokens: params.penalty_burst,
            tokens_at: 0,
            params,
            sets,
            active: 0,
            fifo: Fifo::default(),
            counted: VecDeque::new(),
            rng,
            stats: Stats::default(),
        }
    }

    /// Changes the hash functions at each `rehash` boundary passed (SFB §4.4).
    fn move_hash(&mut self, now: Time) {
        while self.params.rehash > 0 && now >= self.next_rehash {
            let retired = self.active;
            self.active ^= 1;
            self.sets[retired].rekey(self.rng.gen());
            self.next_rehash += self.params.rehash;
        }
    }

    fn double_buffering(&self, now: Time) -> bool {
        self.params.rehash > 0 && now + self.params.db >= self.next_rehash
    }

    /// A token for a non-responsive flow's arrival, if the bucket has one.
    fn take_token(&mut self, now: Time) -> bool {
        let elapsed = (now - self.tokens_at) as f64 / NANOS_PER_SEC as f64;
        self.tokens = (self.tokens + elapsed * self.params.penalty_rate).min(self.params.penalty_burst);
        self.tokens_at = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    fn note_penalized(&mut self, flow: FlowKey, now: Time) {
        if now >= self.params.measure_from {
            self.stats
                .penalized
                .entry(flow)
                .or_insert(Penalized {
                    arrivals: 0,
                    first_at: now,
                })
                .arrivals += 1;
        }
    }
}

impl QueueDisc for Sfb {
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx) -> Verdict {
        if ctx.backlog().packets >= self.params.limit {
            return Verdict::Dropped(DropReason::Overflow);
        }
        let now = ctx.now;
        self.move_hash(now);
        let packet = &mut ctx.packets[id];
        let (flow, kind) = (packet.flow, packet.kind);
        let params = self.params;
        let (min_queued, p_min) = self.sets[self.active].on_arrival(flow, kind, now, &params);
        let warming = self.double_buffering(now);
        if warming {
            self.sets[self.active ^ 1].on_arrival(flow, kind, now, &params);
        }
        if min_queued >= params.max {
            return Verdict::Dropped(DropReason::PerFlowLimit);
        }
        if p_min >= 1.0 {
            // Non-responsive: rate-limited instead of marked.
            self.note_penalized(flow_key(packet), now);
            if !self.take_token(now) {
                return Verdict::Dropped(DropReason::Penalty);
            }
        } else {
            let r: f64 = self.rng.gen();
            if r < p_min {
                let congested_drop = p_min > 0.5 && r < 2.0 * (p_min - 0.5);
                if congested_drop || packet.ecn == Ecn::NotEct {
                    return Verdict::Dropped(DropReason::Early);
                }
                ctx.mark(id);
            }
        }
        self.fifo.push(id);
        let mut counted = [None, None];
        for set in [self.active, self.active ^ 1] {
            if set == self.active || warming {
                self.sets[set].count(flow, kind, &params, 1);
                counted[set] = Some(self.sets[set].epoch);
            }
        }
        self.counted.push_back(counted);
        Verdict::Enqueued
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        let id = self.fifo.pop(ctx.packets)?;
        let counted = self.counted.pop_front().expect("one record per queued packet");
        let packet = &ctx.packets[id];
        for (set, epoch) in counted.into_iter().enumerate() {
            if epoch == Some(self.sets[set].epoch) {
                self.sets[set].count(packet.flow, packet.kind, &self.params, -1);
            }
        }
        Some(id)
    }

    fn can_mark(&self) -> bool {
        true
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        vec![("penalized_flows", self.stats.penalized.len() as f64)]
    }

    fn flow_counters(&self) -> Vec<FlowCounters> {
        self.stats
            .penalized
            .iter()
            .map(|(&key, p)| {
                let (flow, kind) = flow_of(key);
                FlowCounters {
                    flow,
                    kind,
                    counters: vec![
                        ("penalized_arrivals", p.arrivals as f64),
                        ("first_penalized_at", to_secs(p.first_at)),
                    ],
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Packet;
    use crate::qdisc::testing::{link, QdiscHarness, MS};
    use crate::rng::stream;

    const LINK: LinkInfo = link(10e6);

    const BLUE: BlueParams = BlueParams {
        increment: 0.0005,
        decrement: 0.00005,
        target: 20,
        freeze_time: 0,
    };

    #[test]
    fn blue_rises_on_a_full_bin_falls_on_an_empty_one_and_saturates() {
        let mut blue = Blue::default();
        // Between empty and target: no change.
        blue.on_arrival(10, 0, &BLUE);
        assert_eq!(blue.p, 0.0);
        for k in 1..=1000 {
            blue.on_arrival(20, k, &BLUE);
        }
        assert!((blue.p - 1000.0 * 0.0005).abs() < 1e-12, "{}", blue.p);
        for k in 0..4000 {
            blue.on_arrival(0, 2000 + k, &BLUE);
        }
        // 0.5 − 4000·0.00005 = 0.3.
        assert!((blue.p - 0.3).abs() < 1e-12, "{}", blue.p);
        // 1400 more increments reach 1 (0.3 + 0.7) and it stays there; 6000 decrements from 0.3 stop at 0.
        for k in 0..1500 {
            blue.on_arrival(25, 10_000 + k, &BLUE);
        }
        assert_eq!(blue.p, 1.0);
        for k in 0..30_000 {
            blue.on_arrival(0, 20_000 + k, &BLUE);
        }
        assert_eq!(blue.p, 0.0);
    }

    #[test]
    fn blue_updates_a_bin_at_most_once_per_freeze_time() {
        let params = BlueParams {
            freeze_time: 10 * MS,
            ..BLUE
        };
        let mut blue = Blue::default();
        // One full-bin arrival per millisecond for 100 ms: updates at 0, 10, ..., 90 ms.
        for t in 0..100 {
            blue.on_arrival(30, t * MS, &params);
        }
        assert!((blue.p - 10.0 * 0.0005).abs() < 1e-12, "{}", blue.p);
        // A decrement 9 ms after the last update waits; at 10 ms it applies.
        blue.on_arrival(0, 99 * MS, &params);
        assert!((blue.p - 0.005).abs() < 1e-12);
        blue.on_arrival(0, 100 * MS, &params);
        assert!((blue.p - 0.00495).abs() < 1e-12, "{}", blue.p);
    }

    fn sfb(config: SfbConfig) -> QdiscHarness<Sfb> {
        config.validate("q").unwrap();
        QdiscHarness::new(Box::new(Sfb::new(&config, &LINK, stream(3, "sfb-test"))))
    }

    #[test]
    fn a_flow_that_fills_its_bins_is_rate_limited_to_the_penalty_rate() {
        let mut h = sfb(SfbConfig {
            increment: 0.01,
            ..Default::default()
        });
        // Flow 1 keeps 20 packets queued (an arrival every ms, a departure whenever more are
        // queued): each arrival finds 20 in every one of its bins and raises them by 0.01, so its
        // p_min is 1 after 100 such arrivals (at about 120 ms).
        let mut verdicts = Vec::new();
        for t in 0..4000 {
            verdicts.push(h.arrive(t * MS, 1, 1000));
            if h.backlog.packets > 20 {
                h.depart(t * MS);
            }
        }
        let penalized = &h.q.flow_counters()[0];
        assert_eq!((penalized.flow, penalized.counters[0].0), (1, "penalized_arrivals"));
        // Identified: the 20-token burst goes in the next 20 ms, then 10 packets per second.
        let last_3s = &verdicts[1000..];
        let admitted = last_3s.iter().filter(|&&v| v == Verdict::Enqueued).count();
        assert!((29..=31).contains(&admitted), "{admitted} admitted in 3 s");
        assert!(h.drops(DropReason::Penalty) > 2900);
        // A second flow, mapped to other bins at some level, is not penalized.
        assert_eq!(h.arrive(4000 * MS, 2, 1000), Verdict::Enqueued);
        assert_eq!(h.q.counters(), vec![("penalized_flows", 1.0)]);
    }

    #[test]
    fn the_standby_set_counts_during_the_warm_up_and_takes_over_at_the_change() {
        let mut h = sfb(SfbConfig {
            increment: 0.01,
            max: 40,
            rehash: Seconds(1.0),
            db: Seconds(0.5),
            ..Default::default()
        });
        let ect = Packet {
            flow: 1,
            size: 1000,
            ecn: Ecn::Ect0,
            ..Default::default()
        };
        // Before the warm-up only the active set (0) counts.
        h.offer(100 * MS, ect);
        // In the warm-up both do: 30 more arrivals, the last 10 finding 20..29 queued in set 1
        // (and 21..30 in set 0) raise each of flow 1's bins by 0.01 per arrival.
        for _ in 0..30 {
            assert_eq!(h.offer(600 * MS, ect).0, Verdict::Enqueued);
        }
        let flow_bins = |h: &QdiscHarness<Sfb>, set: usize| -> Vec<Bin> {
            let sfb = &h.q;
            let set = &sfb.sets[set];
            set.bins_of(1, PacketKind::Data, &sfb.params)
                .map(|i| set.bins[i])
                .collect()
        };
        assert!(flow_bins(&h, 0)
            .iter()
            .all(|b| b.queued == 31 && (b.blue.p - 0.11).abs() < 1e-12));
        assert!(flow_bins(&h, 1)
            .iter()
            .all(|b| b.queued == 30 && (b.blue.p - 0.10).abs() < 1e-12));
        // The first arrival from 1 s on changes the hash: set 1 marks, with what it learned (the
        // arrival finds 30 queued there and raises flow 1's bins once more); set 0 is cleared and
        // re-keyed, and outside the next warm-up counts nothing.
        assert_eq!(h.offer(1000 * MS, ect).0, Verdict::Enqueued);
        assert_eq!(h.q.active, 1);
        assert!(flow_bins(&h, 1)
            .iter()
            .all(|b| b.queued == 31 && (b.blue.p - 0.11).abs() < 1e-12));
        assert!(h.q.sets[0].bins.iter().all(|b| b.queued == 0 && b.blue.p == 0.0));
        // The queued packets leave set 1's count; set 0 (a new epoch) is not touched.
        while h.depart(1000 * MS).is_some() {}
        assert!(flow_bins(&h, 1).iter().all(|b| b.queued == 0));
        assert!(h.q.sets[0].bins.iter().all(|b| b.queued == 0));
    }

    #[test]
    fn errors_name_the_field() {
        let err = SfbConfig {
            max: 10,
            ..Default::default()
        }
        .validate("q")
        .unwrap_err()
        .to_string();
        assert_eq!(err, "q.max: must be >= target (20), got 10");
        let err = SfbConfig {
            bins: 0,
            ..Default::default()
        }
        .validate("q")
        .unwrap_err()
        .to_string();
        assert!(err.starts_with("q.bins: must be in"), "{err}");
    }

    #[test]
    fn ecn_capable_packets_are_marked_below_one_half_and_dropped_above() {
        // Flow 1's bins forced to p = 0.3 or 0.8; p_min is then that value.
        for (p, expect_drop_share) in [(0.3, 0.0), (0.8, 0.6)] {
            let mut h = sfb(SfbConfig::default());
            let n = 20_000;
            let (mut marked, mut dropped) = (0, 0);
            for _ in 0..n {
                for set in &mut h.q.sets {
                    set.bins.iter_mut().for_each(|bin| bin.blue.p = p);
                }
                let packet = Packet {
                    flow: 1,
                    size: 1000,
                    ecn: Ecn::Ect0,
                    ..Default::default()
                };
                match h.offer(0, packet) {
                    (Verdict::Dropped(DropReason::Early), _) => dropped += 1,
                    (Verdict::Enqueued, p) if p.ecn == Ecn::Ce => marked += 1,
                    _ => {}
                }
                h.depart(0);
            }
            // Marked with probability p − drop share, dropped with 2·(p − 1/2) when p > 1/2.
            let drop = dropped as f64 / n as f64;
            let mark = marked as f64 / n as f64;
            assert!((drop - expect_drop_share).abs() < 0.015, "p {p}: drop {drop}");
            assert!((mark - (p - expect_drop_share)).abs() < 0.015, "p {p}: mark {mark}");
        }
    }
}
