//! A configured loss model in front of a drop-tail FIFO: an instrument for
//! validating transports against closed-form models, not a router algorithm.
//!
//! - `model = "bernoulli"`: each data packet is dropped independently with probability `p`.
//! - `model = "periodic"`: one data packet in every `round(1/p)` is dropped (deterministic).
//! - `model = "scripted"`: the first transmissions of the listed sequence numbers
//!   (`seqs`) of one flow (`flow`) are dropped, for loss-recovery tests. A
//!   router cannot see sequence numbers or the retransmit flag; this model
//!   reads them because it is a test instrument.
//!
//! Only data packets are subject to the loss model: ACKs pass (they may
//! still overflow the buffer). Loss drops carry [`DropReason::Loss`].
//! Example: `qdisc = { type = "loss", model = "periodic", p = 0.01 }`.

use super::droptail::DropTail;
use super::{DropReason, Limit, LinkInfo, QdiscConfig, QdiscCtx, QueueDisc, Verdict};
use crate::error::ScenarioError;
use crate::packet::{FlowId, PacketId, PacketKind};
use crate::rng::Rng;
use rand::Rng as _;
use serde::Deserialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LossModel {
    Bernoulli,
    Periodic,
    Scripted,
}

/// `model` is required, so unlike the other configs this one has no `Default`:
/// every other field is optional and absent means unset (`None`, no `seqs`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LossConfig {
    pub model: LossModel,
    /// Loss probability (bernoulli) or rate (periodic).
    pub p: Option<f64>,
    /// Scripted: the flow whose packets are dropped.
    pub flow: Option<FlowId>,
    /// Scripted: sequence numbers (packets) to drop, first transmission only.
    #[serde(default)]
    pub seqs: Vec<u64>,
    /// Buffer size in packets (default 1000, as drop-tail).
    pub limit: Option<u64>,
}

impl LossConfig {
    fn limit(&self) -> Limit {
        Limit::new(
            Some(
                self.limit
                    .unwrap_or(super::droptail::DropTailConfig::DEFAULT_LIMIT_PACKETS),
            ),
            None,
        )
    }

    fn model_name(&self) -> &'static str {
        match self.model {
            LossModel::Bernoulli => "bernoulli",
            LossModel::Periodic => "periodic",
            LossModel::Scripted => "scripted",
        }
    }
}

impl QdiscConfig for LossConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.limit().validate(path)?;
        match self.model {
            LossModel::Bernoulli | LossModel::Periodic => {
                let p = self.p.ok_or_else(|| {
                    ScenarioError::new(
                        format!("{path}.p"),
                        format!("required for model {:?}", self.model_name()),
                    )
                })?;
                if !(p > 0.0 && p <= 1.0) {
                    return Err(ScenarioError::new(
                        format!("{path}.p"),
                        format!("must be in (0, 1], got {p}"),
                    ));
                }
                for (field, set) in [("flow", self.flow.is_some()), ("seqs", !self.seqs.is_empty())] {
                    if set {
                        return Err(ScenarioError::new(
                            format!("{path}.{field}"),
                            "only used by model \"scripted\"",
                        ));
                    }
                }
            }
            LossModel::Scripted => {
                if self.p.is_some() {
                    return Err(ScenarioError::new(
                        format!("{path}.p"),
                        "not used by model \"scripted\" (it drops the listed seqs)",
                    ));
                }
                if self.flow.is_none() {
                    return Err(ScenarioError::new(
                        format!("{path}.flow"),
                        "required for model \"scripted\"",
                    ));
                }
                if self.seqs.is_empty() {
                    return Err(ScenarioError::new(
                        format!("{path}.seqs"),
                        "required for model \"scripted\": at least one sequence number",
                    ));
                }
            }
        }
        Ok(())
    }

    fn build(&self, _link: &LinkInfo, rng: Rng) -> Box<dyn QueueDisc> {
        let mut seqs = self.seqs.clone();
        seqs.sort_unstable();
        let p = self.p.unwrap_or(0.0);
        let loss = match self.model {
            LossModel::Bernoulli => Loss::Bernoulli { p, rng },
            LossModel::Periodic => Loss::Periodic {
                every: (1.0 / p).round().max(1.0) as u64,
                count: 0,
            },
            LossModel::Scripted => Loss::Scripted {
                flow: self.flow.expect("validated"),
                seqs,
            },
        };
        Box::new(LossQueue {
            loss,
            queue: DropTail::new(self.limit()),
        })
    }
}

enum Loss {
    Bernoulli {
        p: f64,
        rng: Rng,
    },
    /// Drops the `every`-th data packet, then counts again.
    Periodic {
        every: u64,
        count: u64,
    },
    /// Sorted sequence numbers of `flow` to drop.
    Scripted {
        flow: FlowId,
        seqs: Vec<u64>,
    },
}

/// The loss model in front of a drop-tail queue.
pub struct LossQueue {
    loss: Loss,
    queue: DropTail,
}

impl LossQueue {
    fn lose(&mut self, id: PacketId, ctx: &QdiscCtx) -> bool {
        let packet = &ctx.packets[id];
        if packet.kind != PacketKind::Data {
            return false;
        }
        match &mut self.loss {
            Loss::Bernoulli { p, rng } => rng.gen::<f64>() < *p,
            Loss::Periodic { every, count } => {
                *count += 1;
                let drop = *count == *every;
                if drop {
                    *count = 0;
                }
                drop
            }
            Loss::Scripted { flow, seqs } => {
                packet.flow == *flow && !packet.retransmit && seqs.binary_search(&packet.seq).is_ok()
            }
        }
    }
}

impl QueueDisc for LossQueue {
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx) -> Verdict {
        if self.lose(id, ctx) {
            return Verdict::Dropped(DropReason::Loss);
        }
        self.queue.enqueue(id, ctx)
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        self.queue.dequeue(ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Packet;
    use crate::qdisc::testing::QdiscHarness;
    use crate::qdisc::QdiscSpec;
    use crate::rng::stream;

    fn spec(text: &str) -> Result<QdiscSpec, String> {
        let q: QdiscSpec = toml::from_str(text).map_err(|e| e.to_string())?;
        q.config()
            .validate("topology.bottleneck.qdisc")
            .map_err(|e| e.to_string())?;
        Ok(q)
    }

    /// Offers `n` packets made by `make` from seq 0.. and returns which were lost.
    fn run(h: &mut QdiscHarness<dyn QueueDisc>, n: u64, make: impl Fn(u64) -> Packet) -> Vec<u64> {
        let mut lost = Vec::new();
        for i in 0..n {
            match h.offer(0, make(i)).0 {
                Verdict::Dropped(DropReason::Loss) => lost.push(i),
                Verdict::Dropped(r) => panic!("unexpected {r:?}"),
                Verdict::Enqueued => {
                    h.depart(0);
                }
            }
        }
        lost
    }

    fn data(seq: u64) -> Packet {
        Packet {
            kind: PacketKind::Data,
            size: 1000,
            seq,
            ..Default::default()
        }
    }

    fn build(text: &str) -> QdiscHarness<dyn QueueDisc> {
        let link = LinkInfo {
            rate_bps: 1e9,
            delay: 0,
            measure_from: 0,
        };
        QdiscHarness::new(spec(text).unwrap().config().build(&link, stream(1, "loss")))
    }

    #[test]
    fn periodic_drops_every_round_one_over_p_th_data_packet() {
        let mut q = build("type = \"loss\"\nmodel = \"periodic\"\np = 0.02");
        assert_eq!(run(&mut q, 200, data), vec![49, 99, 149, 199]);
        let mut q = build("type = \"loss\"\nmodel = \"periodic\"\np = 0.3"); // round(3.33) = 3
        assert_eq!(run(&mut q, 9, data), vec![2, 5, 8]);
        // ACKs are never lost.
        let mut q = build("type = \"loss\"\nmodel = \"periodic\"\np = 1");
        assert!(run(&mut q, 10, |s| Packet {
            kind: PacketKind::Ack,
            ..data(s)
        })
        .is_empty());
    }

    #[test]
    fn bernoulli_loses_a_fraction_p() {
        let mut q = build("type = \"loss\"\nmodel = \"bernoulli\"\np = 0.05");
        let lost = run(&mut q, 100_000, data).len() as f64;
        // Binomial(1e5, 0.05): sd = 69, so ±400 is over 5 sd.
        assert!((lost - 5000.0).abs() < 400.0, "{lost}");
    }

    #[test]
    fn scripted_drops_listed_first_transmissions_of_one_flow() {
        let mut q = build("type = \"loss\"\nmodel = \"scripted\"\nflow = 1\nseqs = [7, 3]");
        assert_eq!(run(&mut q, 10, |s| Packet { flow: 1, ..data(s) }), vec![3, 7]);
        assert!(run(&mut q, 10, |s| Packet { flow: 0, ..data(s) }).is_empty());
        assert!(run(&mut q, 10, |s| Packet {
            flow: 1,
            retransmit: true,
            ..data(s)
        })
        .is_empty());
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            (
                "model = \"bernoulli\"",
                "topology.bottleneck.qdisc.p: required for model \"bernoulli\"",
            ),
            (
                "model = \"periodic\"\np = 1.5",
                "topology.bottleneck.qdisc.p: must be in (0, 1], got 1.5",
            ),
            (
                "model = \"periodic\"\np = 0",
                "topology.bottleneck.qdisc.p: must be in (0, 1], got 0",
            ),
            (
                "model = \"bernoulli\"\np = 0.1\nseqs = [1]",
                "topology.bottleneck.qdisc.seqs: only used by model \"scripted\"",
            ),
            (
                "model = \"scripted\"\nseqs = [1]",
                "topology.bottleneck.qdisc.flow: required for model \"scripted\"",
            ),
            (
                "model = \"scripted\"\nflow = 0",
                "topology.bottleneck.qdisc.seqs: required for model \"scripted\"",
            ),
            (
                "model = \"scripted\"\nflow = 0\nseqs = [1]\np = 0.1",
                "topology.bottleneck.qdisc.p: not used by model \"scripted\"",
            ),
            (
                "model = \"periodic\"\np = 0.1\nlimit = 0",
                "topology.bottleneck.qdisc.limit: must be > 0, got 0",
            ),
        ];
        for (text, expected) in cases {
            let err = spec(&format!("type = \"loss\"\n{text}")).unwrap_err();
            assert!(err.starts_with(expected), "{text:?}: {err}");
        }
        assert!(spec("type = \"loss\"\nmodel = \"gilbert\"\np = 0.1")
            .unwrap_err()
            .contains("unknown variant"));
    }
}
