//! Seeded random streams. Every random component (a source, a qdisc, a loss
//! model) draws from its own stream derived from the master seed and a name
//! that does not depend on what else the scenario holds:
//! - a flow: `flow/<name>`, its name as in the results (`web[2]`, `probe`);
//! - a link's qdisc: `link/<from>-><to>/qdisc`, routers by their own names and
//!   a flow's hosts as `<flow name>/src` and `<flow name>/dst`.
//!
//! Names are unique (validation rejects a duplicate), so adding, removing or
//! reordering flows, or changing another group's `count`, leaves a named
//! flow's randomness, and its access links', exactly as it was. An unnamed flow
//! is called `flow<id>` after its position among the expanded flows: it keeps
//! its streams only while the flows before it stay as they are, so give flows
//! names when runs are compared across scenario variants.

use rand::SeedableRng;

/// The generator used everywhere: PCG, portable and reproducible across machines.
pub type Rng = rand_pcg::Pcg64Mcg;

fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// A uniform draw from [0, 1), as the disciplines draw for a probability (`rng.gen::<f64>()`,
/// 53 random bits): what a discipline from outside the crate gets for `random()`.
pub fn uniform(rng: &mut Rng) -> f64 {
    use rand::Rng as _;
    rng.gen::<f64>()
}

/// A stream for component `name` (e.g. `"flow/web[2]"`, `"link/L->R/qdisc"`) under `master_seed`.
pub fn stream(master_seed: u64, name: &str) -> Rng {
    // FNV-1a over the name, then mixed with the seed: stable across platforms and releases.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    let a = splitmix64(master_seed ^ h);
    let b = splitmix64(a ^ 0x5851_F42D_4C95_7F2D);
    let seed = ((a as u128) << 64) | b as u128;
    Rng::from_seed(seed.to_le_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng as _;

    #[test]
    fn streams_are_reproducible_and_independent() {
        let x: Vec<u64> = (0..4).map(|_| stream(7, "flow/1").gen()).collect();
        let mut a = stream(7, "flow/1");
        let mut b = stream(7, "flow/2");
        let xa: u64 = a.gen();
        let xb: u64 = b.gen();
        assert_eq!(x[0], xa);
        assert_ne!(xa, xb);
        assert_ne!(stream(8, "flow/1").gen::<u64>(), xa);
    }
}
