//! Agent timers: the one facility every agent sets its timers through.
//!
//! The engine carries a pending timer as a [`Token`] (one `u64`, so that an event stays 16
//! bytes) and cannot cancel it. An agent names its timers with an enum declared through
//! [`timer_kinds!`](crate::timer_kinds), one variant per timer with the data it needs when it
//! fires (as smoltcp's `enum Timer { Idle { .. }, Retransmit { expires_at, delay } }`);
//! the macro writes the only packing of such a value into a token, checked at compile time to
//! fit. [`AgentCtx::set_timer`] takes the enum and [`Agent::timer`](super::Agent::timer)
//! reads it back with [`TimerKind::from_token`].
//!
//! A timer that can be restarted or cancelled carries a [`Generation`]: setting it again or
//! cancelling it moves the agent's generation on, and a token whose generation is no longer
//! the agent's is stale and does nothing. [`Restartable`] builds TCP's retransmission timer
//! (and every other deadline that moves) on it without leaving one stale event per restart.

use crate::time::Time;
use crate::transport::AgentCtx;

/// A timer as the engine carries it, packed by [`timer_kinds!`](crate::timer_kinds) and
/// opened only by the same agent's [`TimerKind::from_token`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Token(u64);

/// An agent's timers: an enum declared through [`timer_kinds!`](crate::timer_kinds).
pub trait TimerKind: Copy {
    fn to_token(self) -> Token;
    /// The timer `token` names; `token` must come from this enum's [`TimerKind::to_token`].
    fn from_token(token: Token) -> Self;
}

/// The low bits of a token: which variant (at most 16 per agent).
pub const VARIANT_BITS: u32 = 4;

/// A field of a timer kind: how many bits of the token it takes.
pub trait TokenField: Copy {
    const BITS: u32;
    fn to_bits(self) -> u64;
    fn from_bits(bits: u64) -> Self;
}

macro_rules! unsigned_field {
    ($($ty:ty),*) => {$(
        impl TokenField for $ty {
            const BITS: u32 = <$ty>::BITS;
            fn to_bits(self) -> u64 {
                self as u64
            }
            fn from_bits(bits: u64) -> Self {
                bits as $ty
            }
        }
    )*};
}
unsigned_field!(u8, u16, u32);

/// Writes a token: the variant, then each field above the previous one (used by `timer_kinds!`).
#[doc(hidden)]
pub struct Packer {
    bits: u64,
    shift: u32,
}

impl Packer {
    pub fn new(variant: u64) -> Self {
        debug_assert!(variant < 1 << VARIANT_BITS);
        Packer {
            bits: variant,
            shift: VARIANT_BITS,
        }
    }

    pub fn put<F: TokenField>(&mut self, field: F) {
        self.bits |= field.to_bits() << self.shift;
        self.shift += F::BITS;
    }

    pub fn finish(self) -> Token {
        Token(self.bits)
    }
}

/// Reads a token in the order [`Packer`] wrote it (used by `timer_kinds!`).
#[doc(hidden)]
pub struct Unpacker {
    bits: u64,
}

impl Unpacker {
    pub fn new(token: Token) -> Self {
        Unpacker { bits: token.0 }
    }

    pub fn variant(&mut self) -> u64 {
        self.take_bits(VARIANT_BITS)
    }

    pub fn take<F: TokenField>(&mut self) -> F {
        F::from_bits(self.take_bits(F::BITS))
    }

    fn take_bits(&mut self, n: u32) -> u64 {
        let value = self.bits & (u64::MAX >> (64 - n));
        self.bits = self.bits.checked_shr(n).unwrap_or(0);
        value
    }
}

/// Declares an agent's timer enum (unit variants and variants with named fields of
/// `u8`/`u16`/`u32`/[`Generation`]) and its [`TimerKind`] packing: the variant's number in the
/// low [`VARIANT_BITS`], then the fields in the order written. A variant whose fields do not
/// fit in 64 bits fails to compile.
#[macro_export]
macro_rules! timer_kinds {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $(
                $(#[$variant_meta:meta])*
                $variant:ident $({ $($(#[$field_meta:meta])* $field:ident : $ty:ty),* $(,)? })?
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        $vis enum $name {
            $($(#[$variant_meta])* $variant $({ $($(#[$field_meta])* $field: $ty),* })?),*
        }

        const _: () = {
            use $crate::transport::timer::VARIANT_BITS;
            assert!([$(stringify!($variant)),*].len() <= 1 << VARIANT_BITS, "too many timer kinds");
            $(assert!(
                VARIANT_BITS $($(+ <$ty as $crate::transport::timer::TokenField>::BITS)*)? <= 64,
                "a timer kind's fields exceed its token"
            );)*
        };

        impl $crate::transport::timer::TimerKind for $name {
            #[allow(unused_assignments, irrefutable_let_patterns, unreachable_code)]
            fn to_token(self) -> $crate::transport::timer::Token {
                let mut variant = 0;
                $(
                    if let $name::$variant $({ $($field),* })? = self {
                        #[allow(unused_mut)]
                        let mut packer = $crate::transport::timer::Packer::new(variant);
                        $($(packer.put($field);)*)?
                        return packer.finish();
                    }
                    variant += 1;
                )*
                unreachable!()
            }

            #[allow(unused_assignments, unused_mut)]
            fn from_token(token: $crate::transport::timer::Token) -> Self {
                let mut unpacker = $crate::transport::timer::Unpacker::new(token);
                let (variant, mut index) = (unpacker.variant(), 0);
                $(
                    if variant == index {
                        return $name::$variant $({ $($field: unpacker.take()),* })?;
                    }
                    index += 1;
                )*
                unreachable!("a token of another agent's timers")
            }
        }
    };
}

/// The setting of a timer that can be restarted or cancelled: the agent keeps the current one,
/// its tokens carry the one they were set with, and a token with another is stale. Wraps at
/// 2³², harmless while fewer than 2³² settings happen during one pending timer's flight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Generation(u32);

impl Generation {
    /// Makes every token set so far stale; returns the generation for the next one.
    pub fn advance(&mut self) -> Generation {
        self.0 = self.0.wrapping_add(1);
        *self
    }

    /// Whether a fired token's `generation` is still this one (not stale).
    pub fn is_current(self, fired: Generation) -> bool {
        self == fired
    }
}

impl TokenField for Generation {
    const BITS: u32 = u32::BITS;
    fn to_bits(self) -> u64 {
        self.0 as u64
    }
    fn from_bits(bits: u64) -> Self {
        Generation(bits as u32)
    }
}

/// A deadline that moves (TCP's retransmission timer restarts on nearly every ACK) with at
/// most one engine event pending no later than it. Scheduling an event at each restart would
/// leave one stale event per ACK in the queue; instead, when the event fires before the
/// deadline (it moved later) it is set again for the deadline, and a deadline moved earlier
/// sets a new event and makes the old one stale by its [`Generation`].
#[derive(Clone, Debug)]
pub struct Restartable<K> {
    /// The agent's timer kind for a setting of this timer.
    kind: fn(Generation) -> K,
    /// When the timer expires; `None` while it is stopped.
    deadline: Option<Time>,
    /// The time of the engine event pending for this timer, if any: never after `deadline`
    /// while both are set.
    scheduled: Option<Time>,
    /// The generation of the pending event's token; older tokens are stale.
    generation: Generation,
}

impl<K: TimerKind> Restartable<K> {
    /// A stopped timer whose events are `kind(generation)`, e.g. `|generation| Timer::Retransmit { generation }`.
    pub fn new(kind: fn(Generation) -> K) -> Self {
        Restartable {
            kind,
            deadline: None,
            scheduled: None,
            generation: Generation::default(),
        }
    }

    /// (Re)starts the timer to expire at `at`.
    pub fn set(&mut self, at: Time, ctx: &mut AgentCtx) {
        self.deadline = Some(at);
        if self.scheduled.is_none_or(|s| s > at) {
            self.scheduled = Some(at);
            ctx.set_timer(at, (self.kind)(self.generation.advance()));
        }
    }

    pub fn clear(&mut self) {
        self.deadline = None;
    }

    pub fn is_set(&self) -> bool {
        self.deadline.is_some()
    }

    pub fn deadline(&self) -> Option<Time> {
        self.deadline
    }

    /// Handles this timer's fired token of `generation`; true when the timer expired now.
    pub fn expired(&mut self, generation: Generation, ctx: &mut AgentCtx) -> bool {
        if !self.generation.is_current(generation) || self.scheduled.is_none() {
            return false;
        }
        self.scheduled = None;
        match self.deadline {
            Some(at) if at > ctx.now => {
                self.set(at, ctx);
                false
            }
            Some(_) => {
                self.deadline = None;
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::timer_kinds! {
        enum Example {
            Plain,
            Layer { layer: u8, generation: Generation },
            Request { request: u32, level: u8, spare: u16 },
        }
    }

    #[test]
    fn every_kind_comes_back_from_its_token() {
        let kinds = [
            Example::Plain,
            Example::Layer {
                layer: 255,
                generation: Generation(u32::MAX),
            },
            Example::Request {
                request: u32::MAX,
                level: 7,
                spare: 1,
            },
        ];
        for kind in kinds {
            assert_eq!(Example::from_token(kind.to_token()), kind);
        }
        assert_ne!(
            kinds[0].to_token(),
            Example::Layer {
                layer: 0,
                generation: Generation(0)
            }
            .to_token()
        );
    }

    #[test]
    fn a_generation_makes_older_settings_stale() {
        let mut current = Generation::default();
        let first = current.advance();
        assert!(current.is_current(first));
        let second = current.advance();
        assert!(!current.is_current(first));
        assert!(current.is_current(second));
    }
}
