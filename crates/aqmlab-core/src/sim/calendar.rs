//! The event queue, ordered by (time, insertion sequence), so simultaneous
//! events run in the order they were scheduled — deterministic.
//!
//! A calendar of three tiers (issue 15). A single binary heap of every pending
//! event held about 10⁵ of them with 10⁴ flows, and each pop walked 17 levels
//! of it, the lower ones cache misses: events/s fell to a third of the rate at
//! 10³ flows. Time is cut into slots of 2^14 ns (16 µs), and
//! - `poured` holds the events of the current slot as they were when its turn
//!   came, sorted, and `near`, a binary heap, those scheduled into it (or into
//!   an earlier slot) since: a few hundred at 10 Gbps, most of them poured. A
//!   sorted slot costs less than popping them all from a heap, and its order is
//!   known ahead, so the engine can fetch what the next events will touch
//!   ([`EventQueue::ahead`]);
//! - `wheel` holds those of the next 4095 slots (67 ms: transmissions, link
//!   delays, round trips) in one unsorted bucket per slot, a push being an
//!   append to a chain of blocks from a shared pool (memory follows the events
//!   pending, not each bucket's busiest moment); a slot's bucket is poured and
//!   sorted when its turn comes;
//! - `far`, a binary heap, holds the rest (retransmission timeouts, starts,
//!   think times), moved into the wheel as it turns.
//!
//! Every event of a tier is due in a later slot than every event of the tier
//! before, so the earliest pending event is always the first of `poured` or
//! `near`: the order is exactly a single heap's.
//!
//! A small queue is faster in heaps (all in the cache; the demo's 10 Mbps
//! link has one event per ten slots, and turning slot by slot cost it a fifth
//! of its speed), so the calendar is laid out only once more than
//! [`SPREAD_ABOVE`] events are pending, and gathered back when fewer than
//! [`GATHER_BELOW`] are. Until then `near` holds the events due soon and `far`
//! those due [`LATER`] or more after the clock (timeouts: one per TCP flow),
//! and the next event is the first of one of the two. The demo keeps under 90
//! pending and runs in the heaps; the 100-TCP benchmark (about 300 pending)
//! runs 1.3× and the 100-flow scale point (about 700) 1.6× faster with the
//! calendar.

use super::event::Event;
use crate::time::Time;

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: Time,
    seq: u64,
    event: Event,
}

impl Entry {
    /// Earlier first; at equal times, scheduled first: (time, seq) as one 128-bit number,
    /// which compiles to a comparison without branches (a pair compared field by field
    /// branches on the times being equal, which the heap's order leaves unpredictable).
    #[inline(always)]
    fn key(&self) -> u128 {
        (self.time as u128) << 64 | self.seq as u128
    }
}

/// log2 of a slot's length in nanoseconds.
const SLOT_BITS: u32 = 14;
/// Slots the wheel spans, the current one's bucket included (a multiple of 64: one bit each).
const WHEEL_SLOTS: u64 = 4096;
/// Pending events above which the single heap is spread into the calendar, and below which
/// the calendar is gathered back into it (apart, so that it does not flap).
const SPREAD_ABOVE: usize = 256;
const GATHER_BELOW: usize = 64;
/// Parts of a slot that `EventQueue::sort_poured` counts events into (a power of two).
const SORT_PARTS: usize = 64;
/// `EventQueue::slot` while the two heaps hold every event (no calendar).
const ALL_IN_NEAR: u64 = u64::MAX;
/// While the calendar is not laid out, an event due this long after the clock or later waits
/// in the far heap (2^27 ns, 134 ms: a timeout, not a transmission or a round trip), so that
/// the near heap, which nearly every event goes through, is a few levels deep, not two more
/// for 31 flows' timers (issue 21; case (a) of BENCHMARKS.md: 8 % fewer instructions, a quarter
/// fewer branches mispredicted).
const LATER: Time = 1 << 27;
/// Events per block of a bucket's chain (1 KB).
const BLOCK: usize = 32;
/// No block.
const NONE: u32 = u32::MAX;

fn slot_of(time: Time) -> u64 {
    time >> SLOT_BITS
}

/// A binary min-heap on (time, seq) in a `Vec`. Written out rather than
/// `std`'s `BinaryHeap` so that the compiler inlines it into the engine
/// before link-time optimisation: with `BinaryHeap` it re-read each new event
/// from memory, or not, depending on unrelated code, which cost up to 7 % of a run.
/// (A 4-ary heap was 9 % slower on case (a) of BENCHMARKS.md.)
#[derive(Default)]
struct Heap {
    /// `entries[i]` is due no later than its children `entries[2i + 1]` and `entries[2i + 2]`.
    entries: Vec<Entry>,
}

impl Heap {
    fn first(&self) -> Option<&Entry> {
        self.entries.first()
    }

    #[inline(always)]
    fn push(&mut self, entry: Entry) {
        self.entries.push(entry);
        self.sift_up(self.entries.len() - 1, entry);
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<Entry> {
        let first = *self.entries.first()?;
        self.remove_first();
        Some(first)
    }

    /// Removes the first entry of a heap that has one, bottom-up (Floyd; Wegener, "Bottom-up
    /// heapsort", 1993): the hole it leaves sinks to a leaf along the earlier child of each
    /// level, then the last entry fills it and rises to its place. The last entry is a leaf's,
    /// so late, and rises little; the way down takes one comparison per level, which picks the
    /// child without a branch, where sinking the last entry from the top took two, one of them
    /// a branch mispredicted where it stopped (case (a) of BENCHMARKS.md: 8 % fewer branches
    /// mispredicted in all, cachegrind).
    #[inline(always)]
    fn remove_first(&mut self) {
        let last = self.entries.pop().expect("not empty");
        let len = self.entries.len();
        if len == 0 {
            return;
        }
        let mut hole = 0;
        let mut child = 1;
        while child + 1 < len {
            child += (self.entries[child + 1].key() < self.entries[child].key()) as usize;
            self.entries[hole] = self.entries[child];
            hole = child;
            child = 2 * hole + 1;
        }
        if child < len {
            self.entries[hole] = self.entries[child];
            hole = child;
        }
        self.sift_up(hole, last);
    }

    /// Puts `entry` in the hole at `hole`, moving later parents down.
    #[inline(always)]
    fn sift_up(&mut self, mut hole: usize, entry: Entry) {
        while hole > 0 {
            let parent = (hole - 1) / 2;
            if self.entries[parent].key() <= entry.key() {
                break;
            }
            self.entries[hole] = self.entries[parent];
            hole = parent;
        }
        self.entries[hole] = entry;
    }

    /// Puts `entry` in the hole at `hole`, moving earlier children up (for `heapify`).
    fn sift_down(&mut self, mut hole: usize, entry: Entry) {
        let len = self.entries.len();
        loop {
            let left = 2 * hole + 1;
            if left >= len {
                break;
            }
            let right = left + 1;
            let child = if right < len && self.entries[right].key() < self.entries[left].key() {
                right
            } else {
                left
            };
            if entry.key() <= self.entries[child].key() {
                break;
            }
            self.entries[hole] = self.entries[child];
            hole = child;
        }
        self.entries[hole] = entry;
    }

    /// Restores the heap order of entries put in any order (Floyd's construction, O(n)).
    fn heapify(&mut self) {
        for i in (0..self.entries.len() / 2).rev() {
            self.sift_down(i, self.entries[i]);
        }
    }
}

/// One slot's events: a chain of blocks, filled in order.
#[derive(Clone, Copy)]
struct Bucket {
    first: u32,
    last: u32,
    len: usize,
}

const EMPTY: Bucket = Bucket {
    first: NONE,
    last: NONE,
    len: 0,
};

/// The blocks of the wheel's buckets, with a free list.
#[derive(Default)]
struct Blocks {
    /// Block `b` is `entries[b * BLOCK..(b + 1) * BLOCK]`.
    entries: Vec<Entry>,
    /// The block after each block in its bucket's chain.
    next: Vec<u32>,
    free: Vec<u32>,
}

impl Blocks {
    fn take(&mut self) -> u32 {
        self.free.pop().unwrap_or_else(|| {
            let filler = Entry {
                time: 0,
                seq: 0,
                event: Event::Sample,
            };
            self.entries.extend([filler; BLOCK]);
            self.next.push(NONE);
            (self.next.len() - 1) as u32
        })
    }

    #[inline]
    fn push(&mut self, bucket: &mut Bucket, entry: Entry) {
        if bucket.len.is_multiple_of(BLOCK) {
            let block = self.take();
            self.next[block as usize] = NONE;
            if bucket.len == 0 {
                bucket.first = block;
            } else {
                self.next[bucket.last as usize] = block;
            }
            bucket.last = block;
        }
        self.entries[bucket.last as usize * BLOCK + bucket.len % BLOCK] = entry;
        bucket.len += 1;
    }

    /// The events of `bucket`, in the order they came; its blocks go back to the pool.
    fn pour(&mut self, bucket: Bucket, into: &mut Vec<Entry>) {
        let (mut block, mut left) = (bucket.first, bucket.len);
        while left > 0 {
            let start = block as usize * BLOCK;
            let n = left.min(BLOCK);
            into.extend_from_slice(&self.entries[start..start + n]);
            self.free.push(block);
            left -= n;
            block = self.next[block as usize];
        }
    }

    fn iter(&self, bucket: Bucket) -> impl Iterator<Item = &Entry> + '_ {
        let mut block = bucket.first;
        (0..bucket.len).map(move |i| {
            if i > 0 && i.is_multiple_of(BLOCK) {
                block = self.next[block as usize];
            }
            &self.entries[block as usize * BLOCK + i % BLOCK]
        })
    }
}

/// The pending events (see the module's header).
pub struct EventQueue {
    /// The current slot's events as its bucket held them when its turn came, sorted, from
    /// `poured_next` on: their order is known ahead, so the engine can fetch what the next
    /// few will touch (see [`EventQueue::ahead`]).
    poured: Vec<Entry>,
    poured_next: usize,
    /// Room for sorting `poured` (see `sort_poured`).
    sorting: Vec<Entry>,
    /// The events scheduled into the current slot (or an earlier one) since it was poured.
    near: Heap,
    /// The slot `poured` and `near` cover: every pending event of this slot or an earlier one
    /// is in one of them ([`ALL_IN_NEAR`]: every pending event is in `near`).
    slot: u64,
    /// `wheel[s % WHEEL_SLOTS]` holds the events of slot `s`, for `slot < s < slot + WHEEL_SLOTS`.
    wheel: Vec<Bucket>,
    blocks: Blocks,
    /// One bit per bucket of `wheel`: whether it holds events.
    occupied: Vec<u64>,
    in_wheel: usize,
    /// [`SPREAD_ABOVE`] and [`GATHER_BELOW`] (tests lower them to run the calendar small).
    spread_above: usize,
    gather_below: usize,
    /// The events of slot `slot + WHEEL_SLOTS` and later; while the calendar is not laid out,
    /// those due [`LATER`] after the clock or later when they were scheduled (`near` holds the
    /// others, and the first of the two heaps is the next event).
    far: Heap,
    next_seq: u64,
    processed: u64,
    current: (Time, u64),
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            poured: Vec::new(),
            poured_next: 0,
            sorting: Vec::new(),
            near: Heap::default(),
            slot: ALL_IN_NEAR,
            wheel: vec![EMPTY; WHEEL_SLOTS as usize],
            blocks: Blocks::default(),
            occupied: vec![0; (WHEEL_SLOTS / 64) as usize],
            in_wheel: 0,
            spread_above: SPREAD_ABOVE,
            gather_below: GATHER_BELOW,
            far: Heap::default(),
            next_seq: 0,
            processed: 0,
            current: (0, 0),
        }
    }
}

impl EventQueue {
    /// A queue whose wheel has room for `events` pending at once before its pool of blocks
    /// grows, in huge pages ([`crate::cache::reserve_in_huge_pages`]): the wheel's buckets are
    /// appended to in no order.
    pub fn with_room_for(events: usize) -> EventQueue {
        let mut queue = EventQueue::default();
        crate::cache::reserve_in_huge_pages(&mut queue.blocks.entries, events);
        queue
    }

    #[inline(always)]
    pub fn schedule(&mut self, time: Time, event: Event) {
        let seq = self.reserve();
        self.schedule_reserved(time, seq, event);
    }

    /// The place in the order of an event that may never be scheduled (a drop-tail link's
    /// end of transmission, `Link::lazy_tx_done`): scheduled later with
    /// [`schedule_reserved`](Self::schedule_reserved), it runs where it would have run had it
    /// been scheduled now.
    #[inline(always)]
    pub fn reserve(&mut self) -> u64 {
        debug_assert!(self.next_seq < 1 << (64 - SLOT_BITS), "see `turn`'s sort key");
        self.next_seq += 1;
        self.next_seq - 1
    }

    /// The (time, seq) of the event being run: the last one popped.
    pub fn current(&self) -> (Time, u64) {
        self.current
    }

    #[inline(always)]
    pub fn schedule_reserved(&mut self, time: Time, seq: u64, event: Event) {
        let entry = Entry { time, seq, event };
        if self.slot == ALL_IN_NEAR {
            if time < self.current.0 + LATER {
                self.near.push(entry);
            } else {
                self.far.push(entry);
            }
            if self.near.entries.len() + self.far.entries.len() > self.spread_above {
                self.spread();
            }
            return;
        }
        let slot = slot_of(time);
        if slot <= self.slot {
            self.near.push(entry);
        } else if slot < self.slot + WHEEL_SLOTS {
            self.put_in_wheel(slot, entry);
        } else {
            self.far.push(entry);
        }
    }

    #[inline]
    fn put_in_wheel(&mut self, slot: u64, entry: Entry) {
        let bucket = (slot % WHEEL_SLOTS) as usize;
        self.blocks.push(&mut self.wheel[bucket], entry);
        self.occupied[bucket / 64] |= 1 << (bucket % 64);
        self.in_wheel += 1;
    }

    /// Removes and returns the earliest event strictly before `until`.
    #[inline]
    pub fn pop_before(&mut self, until: Time) -> Option<(Time, Event)> {
        let calendar = self.slot != ALL_IN_NEAR;
        if calendar && self.poured_next == self.poured.len() && self.near.entries.is_empty() && !self.turn() {
            return None;
        }
        // (The turn may have gathered the calendar back into the two heaps.)
        let first = if self.slot == ALL_IN_NEAR {
            let from_far = match (self.near.first(), self.far.first()) {
                (Some(near), Some(far)) => far.key() < near.key(),
                (near, _) => near.is_none(),
            };
            let heap = if from_far { &mut self.far } else { &mut self.near };
            let first = *heap.first()?;
            if first.time >= until {
                return None;
            }
            heap.remove_first();
            first
        } else {
            let from_poured = match (self.poured.get(self.poured_next), self.near.first()) {
                (Some(poured), Some(near)) => poured.key() < near.key(),
                (poured, _) => poured.is_some(),
            };
            let first = if from_poured {
                self.poured[self.poured_next]
            } else {
                self.near.entries[0]
            };
            if first.time >= until {
                return None;
            }
            if from_poured {
                self.poured_next += 1;
            } else {
                self.near.remove_first();
            }
            first
        };
        self.processed += 1;
        self.current = (first.time, first.seq);
        Some((first.time, first.event))
    }

    /// When the earliest pending event is due (the calendar may move on to the slot that holds
    /// it, as [`pop_before`](Self::pop_before) would).
    pub fn next_time(&mut self) -> Option<Time> {
        let calendar = self.slot != ALL_IN_NEAR;
        if calendar && self.poured_next == self.poured.len() && self.near.entries.is_empty() && !self.turn() {
            return None;
        }
        let first = if self.slot == ALL_IN_NEAR {
            [self.near.first(), self.far.first()]
        } else {
            [self.poured.get(self.poured_next), self.near.first()]
        };
        first.into_iter().flatten().map(|e| e.time).min()
    }

    /// The event `distance` places after the next among those the current slot's turn
    /// brought (events scheduled since may come between), if the calendar is laid out: a
    /// glance for the engine to fetch what it will touch, which pays only when the state of
    /// thousands of flows has outgrown the cache.
    #[inline]
    pub fn ahead(&self, distance: usize) -> Option<&Event> {
        self.poured.get(self.poured_next + distance).map(|e| &e.event)
    }

    /// The current slot's events are all taken: moves on to the next slot that holds events
    /// and pours its bucket, sorted; false when no event is pending. (The slot may then lie
    /// beyond the clock: an event scheduled before it goes to the near heap, which takes any
    /// time.)
    #[inline(never)]
    fn turn(&mut self) -> bool {
        if self.in_wheel + self.far.entries.len() < self.gather_below {
            self.gather();
            return self.near.entries.len() + self.far.entries.len() > 0;
        }
        let next = match self.next_occupied_slot() {
            Some(slot) => slot,
            None => match self.far.first() {
                Some(entry) => slot_of(entry.time),
                None => return false,
            },
        };
        self.slot = next;
        self.poured.clear();
        self.poured_next = 0;
        // The wheel now reaches `WHEEL_SLOTS` past `next`: bring in the far events it covers.
        while let Some(entry) = self.far.first() {
            let slot = slot_of(entry.time);
            if slot >= next + WHEEL_SLOTS {
                break;
            }
            let entry = self.far.pop().expect("not empty");
            if slot == next {
                self.poured.push(entry);
            } else {
                self.put_in_wheel(slot, entry);
            }
        }
        let bucket = (next % WHEEL_SLOTS) as usize;
        if self.occupied[bucket / 64] & 1 << (bucket % 64) != 0 {
            self.occupied[bucket / 64] &= !(1 << (bucket % 64));
            let events = std::mem::replace(&mut self.wheel[bucket], EMPTY);
            self.in_wheel -= events.len;
            self.blocks.pour(events, &mut self.poured);
        }
        self.sort_poured(next << SLOT_BITS);
        true
    }

    /// Sorts the poured slot (which starts at `start`) by (time, seq). Within a slot that order
    /// is the order of one word, the time's offset in the slot above the sequence number (below
    /// 2^50: a thousand years of events). With 10⁴ flows a slot holds a few hundred events and
    /// a comparison sort cost a tenth of the run: a counting pass by the offset's top bits
    /// first leaves a few events per part to sort by the whole key.
    fn sort_poured(&mut self, start: Time) {
        let key = |e: &Entry| (e.time - start) << (64 - SLOT_BITS) | e.seq;
        if self.poured.len() < 2 * SORT_PARTS {
            self.poured.sort_unstable_by_key(key);
            return;
        }
        let part = |e: &Entry| ((e.time - start) >> (SLOT_BITS - SORT_PARTS.ilog2())) as usize;
        let mut ends = [0usize; SORT_PARTS];
        for e in &self.poured {
            ends[part(e)] += 1;
        }
        let mut at = 0;
        for end in &mut ends {
            at += *end;
            *end = at;
        }
        // Place each event at the back of its part, from the last event on.
        let mut fill = ends;
        self.sorting.clear();
        self.sorting.resize(self.poured.len(), self.poured[0]);
        for e in self.poured.iter().rev() {
            let p = part(e);
            fill[p] -= 1;
            self.sorting[fill[p]] = *e;
        }
        let mut begin = 0;
        for end in ends {
            self.sorting[begin..end].sort_unstable_by_key(key);
            begin = end;
        }
        std::mem::swap(&mut self.poured, &mut self.sorting);
    }

    /// Lays out the calendar from the two heaps: the earliest event's slot becomes the current one.
    #[cold]
    fn spread(&mut self) {
        let earliest = [self.near.first(), self.far.first()]
            .into_iter()
            .flatten()
            .min_by_key(|e| e.key());
        self.slot = slot_of(earliest.expect("spread with events").time);
        let mut entries = std::mem::take(&mut self.near.entries);
        entries.append(&mut self.far.entries);
        for entry in entries {
            let slot = slot_of(entry.time);
            if slot == self.slot {
                self.near.entries.push(entry);
            } else if slot < self.slot + WHEEL_SLOTS {
                self.put_in_wheel(slot, entry);
            } else {
                self.far.push(entry);
            }
        }
        self.near.heapify();
    }

    /// Puts every pending event back into the two heaps (the near one is empty, as `poured`
    /// is spent: see `turn`).
    #[cold]
    fn gather(&mut self) {
        let mut entries = std::mem::take(&mut self.far.entries);
        for events in self.wheel.iter_mut().filter(|events| events.len > 0) {
            self.blocks.pour(std::mem::replace(events, EMPTY), &mut entries);
        }
        self.occupied.fill(0);
        self.in_wheel = 0;
        self.slot = ALL_IN_NEAR;
        let later = self.current.0 + LATER;
        for entry in entries {
            let heap = if entry.time < later {
                &mut self.near
            } else {
                &mut self.far
            };
            heap.entries.push(entry);
        }
        self.near.heapify();
        self.far.heapify();
    }

    /// The first slot after the current one whose bucket holds events.
    fn next_occupied_slot(&self) -> Option<u64> {
        if self.in_wheel == 0 {
            return None;
        }
        let words = self.occupied.len();
        let start = (self.slot + 1) % WHEEL_SLOTS;
        let mut word = (start / 64) as usize;
        let mut bits = self.occupied[word] & (!0 << (start % 64));
        // Every word once from `start` on, and the first word's bits before `start` last.
        for _ in 0..=words {
            if bits != 0 {
                let bucket = word as u64 * 64 + bits.trailing_zeros() as u64;
                return Some(self.slot + 1 + (bucket + WHEEL_SLOTS - start) % WHEEL_SLOTS);
            }
            word = (word + 1) % words;
            bits = self.occupied[word];
        }
        unreachable!("{} events in the wheel, none in its buckets", self.in_wheel)
    }

    pub fn processed(&self) -> u64 {
        self.processed
    }

    /// How many pending events `is` picks out: a scan, for end-of-run checks only.
    pub fn count_pending(&self, is: impl Fn(&Event) -> bool) -> u64 {
        let wheel = self.wheel.iter().flat_map(|&bucket| self.blocks.iter(bucket));
        let poured = &self.poured[self.poured_next..];
        let all = poured
            .iter()
            .chain(&self.near.entries)
            .chain(wheel)
            .chain(&self.far.entries);
        all.filter(|e| is(&e.event)).count() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_then_fifo_on_ties() {
        let mut q = EventQueue::default();
        q.schedule(5, Event::Sample);
        q.schedule(3, Event::TxDone { link: 1 });
        q.schedule(3, Event::TxDone { link: 2 });
        assert_eq!(q.pop_before(10), Some((3, Event::TxDone { link: 1 })));
        assert_eq!(q.pop_before(10), Some((3, Event::TxDone { link: 2 })));
        assert_eq!(q.pop_before(5), None);
        assert_eq!(q.pop_before(10), Some((5, Event::Sample)));
        assert_eq!(q.processed(), 3);
    }

    /// Interleaved schedules and pops, with many ties, come out in (time, seq) order.
    #[test]
    fn pops_in_time_then_schedule_order() {
        use rand::Rng as _;
        let mut rng = crate::rng::stream(1, "events");
        let mut q = EventQueue::default();
        let mut pending = Vec::new(); // (time, seq) of what the queue holds
        let (mut seq, mut now) = (0, 0);
        for _ in 0..5000 {
            if rng.gen_bool(0.6) || pending.is_empty() {
                let time = now + rng.gen_range(0..20);
                q.schedule(time, Event::TxDone { link: seq as u32 });
                pending.push((time, seq));
                seq += 1;
            } else {
                pending.sort_unstable();
                let (time, first) = pending.remove(0);
                assert_eq!(
                    q.pop_before(Time::MAX),
                    Some((time, Event::TxDone { link: first as u32 }))
                );
                now = time;
            }
        }
        assert_eq!(q.processed(), seq - pending.len() as u64);
    }

    /// Times from nanoseconds to seconds ahead (all three tiers, buckets shared by slots a
    /// wheel's turn apart, the wheel empty between far events), popped with `until` cutting
    /// in: always the earliest pending (time, seq), as a sorted list says.
    /// A queue that lays out its calendar above `spread_above` pending events and gathers it
    /// back below `gather_below`.
    fn queue(spread_above: usize, gather_below: usize) -> EventQueue {
        EventQueue {
            spread_above,
            gather_below,
            ..Default::default()
        }
    }

    #[test]
    fn every_tier_pops_in_time_then_schedule_order() {
        // The calendar from the first event on, spread and gathered over and over, as built,
        // and never (the two heaps alone).
        for (spread_above, gather_below) in [(0, 0), (16, 4), (SPREAD_ABOVE, GATHER_BELOW), (usize::MAX, 0)] {
            pops_in_order(queue(spread_above, gather_below));
        }
    }

    fn pops_in_order(mut q: EventQueue) {
        use rand::Rng as _;
        let mut rng = crate::rng::stream(2, "calendar");
        let mut pending = Vec::new();
        let (mut seq, mut now) = (0u64, 0);
        for _ in 0..20_000 {
            if rng.gen_bool(0.55) || pending.is_empty() {
                let reach = [20, 1 << SLOT_BITS, 100_000_000, 3_000_000_000][rng.gen_range(0..4)];
                let time = now + rng.gen_range(0..reach);
                q.schedule(time, Event::TxDone { link: seq as u32 });
                pending.push((time, seq));
                seq += 1;
            } else {
                pending.sort_unstable();
                let (time, first) = pending[0];
                let until = time + rng.gen_range(0..2);
                if until == time {
                    assert_eq!(q.pop_before(until), None);
                    continue;
                }
                pending.remove(0);
                assert_eq!(q.pop_before(until), Some((time, Event::TxDone { link: first as u32 })));
                now = time;
            }
        }
        assert_eq!(q.count_pending(|_| true), pending.len() as u64);
    }

    /// A slot of several blocks' worth of events, scheduled latest first, comes out earliest
    /// first and ties in schedule order; its blocks go back to the pool and serve again.
    #[test]
    fn a_bucket_of_many_blocks_pours_whole() {
        let mut q = queue(0, 0);
        let slot_start = 5 << SLOT_BITS;
        for round in 0..2 {
            let base = slot_start * (round + 1);
            for i in (0..100u32).rev() {
                q.schedule(base + (i / 2) as Time, Event::TxDone { link: i });
            }
            assert_eq!(q.count_pending(|_| true), 100);
            for i in 0..100u32 {
                // Times base + 0, 0, 1, 1, ...: of each pair, the later-scheduled (odd) link first.
                let link = 2 * (i / 2) + 1 - i % 2;
                assert_eq!(
                    q.pop_before(Time::MAX),
                    Some((base + (i / 2) as Time, Event::TxDone { link }))
                );
            }
        }
        assert_eq!(q.blocks.next.len(), 4, "the second round reused the first's blocks");
    }

    /// A slot crowded enough to be sorted by parts (as with 10⁴ flows), its events at random
    /// times with many ties, some of them come through the far heap, comes out in (time, seq)
    /// order, and so do the events scheduled into it while it is being taken.
    #[test]
    fn a_crowded_slot_comes_out_in_time_then_schedule_order() {
        use rand::Rng as _;
        let mut rng = crate::rng::stream(3, "crowded");
        let mut q = queue(0, 0);
        let slot_start: Time = 1 << 30; // beyond the wheel's reach from 0: the first come via `far`
        let mut pending = Vec::new();
        for seq in 0..1000u32 {
            if seq == 500 {
                // The wheel turns to just before the slot: the rest go straight to its bucket.
                q.schedule(slot_start - 1, Event::Sample);
                assert_eq!(q.pop_before(Time::MAX), Some((slot_start - 1, Event::Sample)));
            }
            let time = slot_start + rng.gen_range(0..1 << SLOT_BITS) / 64 * 64;
            q.schedule(time, Event::TxDone { link: seq });
            pending.push((time, seq));
        }
        pending.sort_unstable();
        let mut popped = Vec::new();
        let mut late = 1000;
        while let Some((time, Event::TxDone { link })) = q.pop_before(Time::MAX) {
            popped.push((time, link));
            if late < 1100 {
                // Scheduled at or after the clock, within the slot being taken.
                let at = (time + rng.gen_range(0..200)).min(slot_start + (1 << SLOT_BITS) - 1);
                q.schedule(at, Event::TxDone { link: late });
                pending.push((at, late));
                late += 1;
            }
        }
        pending.sort_unstable();
        assert_eq!(popped, pending);
    }

    /// A pop that finds nothing before `until` may leave the queue on a later slot than
    /// the clock; what is scheduled before that slot still comes first.
    #[test]
    fn events_scheduled_behind_an_advanced_slot_come_first() {
        let mut q = queue(0, 0);
        q.schedule(10_000_000_000, Event::Sample);
        assert_eq!(q.pop_before(1_000_000_000), None);
        q.schedule(2_000_000_000, Event::TxDone { link: 2 });
        q.schedule(1_500_000_000, Event::TxDone { link: 1 });
        assert_eq!(
            q.pop_before(Time::MAX),
            Some((1_500_000_000, Event::TxDone { link: 1 }))
        );
        assert_eq!(
            q.pop_before(Time::MAX),
            Some((2_000_000_000, Event::TxDone { link: 2 }))
        );
        assert_eq!(q.pop_before(Time::MAX), Some((10_000_000_000, Event::Sample)));
        assert_eq!(q.pop_before(Time::MAX), None);
    }
}
