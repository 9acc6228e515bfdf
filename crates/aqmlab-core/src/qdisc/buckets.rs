//! A flow's bucket in the hashing schedulers (SFQ, FQ-CoDel, SFB): the keyed hash that picks
//! it, and which flows met in one (SFQ's `colliding_flows`, whichever hash its variant runs).

use crate::packet::{FlowId, PacketKind};
use std::collections::{HashMap, HashSet};

/// A flow's bucket among `buckets` by a keyed hash of (flow, direction): SplitMix64's finaliser, so every bit of the key and the flow
/// affects the bucket.
pub fn flow_hash(flow: FlowId, kind: PacketKind, key: u64, buckets: u32) -> u32 {
    let mut z = ((flow as u64) << 1 | (kind == PacketKind::Ack) as u64) ^ key;
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    ((z ^ (z >> 31)) % buckets as u64) as u32
}

/// Measurement only: the flow each bucket has held since the hash was last keyed, and the flows
/// that shared a bucket with another (`colliding_flows`).
#[derive(Default)]
pub struct Collisions {
    bucket_flows: HashMap<u32, FlowId>,
    colliding: HashSet<FlowId>,
}

impl Collisions {
    pub fn note(&mut self, bucket: u32, flow: FlowId) {
        let first = *self.bucket_flows.entry(bucket).or_insert(flow);
        if first != flow {
            self.colliding.insert(flow);
            self.colliding.insert(first);
        }
    }

    /// The hash was re-keyed: buckets start afresh (flows already counted stay counted).
    pub fn rekeyed(&mut self) {
        self.bucket_flows.clear();
    }

    pub fn count(&self) -> usize {
        self.colliding.len()
    }
}
