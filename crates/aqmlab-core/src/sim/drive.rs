//! What a program driving the engine in slices (the PyO3 module, `aqmlab emulate`) asks and
//! tells it between them: the clock, the captures, packets and goodput of real endpoints.

use super::Simulation;
use crate::packet::{Ecn, FlowId, Packet, PacketId, PacketKind};
use crate::time::Time;
use std::io;
use std::path::{Path, PathBuf};

impl Simulation {
    /// Writes the packets of the links `simulation.pcap` names into `dir`, as
    /// they are transmitted (`<link>.pcap`, and `<link>.drops.pcap` with
    /// `simulation.pcap_drops`); returns the files (none when it names no link).
    /// Call it before running: what went before is not captured.
    pub fn capture_into(&mut self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        self.recorder
            .open_captures(dir, &self.capture_links, self.capture_drops)
    }

    /// Writes out what the capture files hold so far; the first write error, naming the file.
    pub fn flush_captures(&mut self) -> io::Result<()> {
        self.recorder.flush_captures()
    }

    pub fn now(&self) -> Time {
        self.now
    }

    /// A packet of `flow` that came from outside the simulation (a real endpoint: `aqmlab
    /// emulate`) enters the network now, as if its agent had sent it: `bytes`, an IPv4 packet
    /// whose ECN field is `ecn`; the captures (`simulation.pcap`) record its real headers. Its
    /// `seq` is set to the packet's id, by which the agent that receives it names it (the id
    /// is free again after delivery or a drop, and reused by the next packet let in).
    pub fn inject(&mut self, flow: FlowId, kind: PacketKind, bytes: &[u8], ecn: Ecn) -> PacketId {
        let route = self.net.routes[flow as usize];
        let (src, dst) = match kind {
            PacketKind::Data => (route.src, route.dst),
            PacketKind::Ack => (route.dst, route.src),
        };
        let weight = self.flows[flow as usize].weight;
        let packet = Packet {
            flow,
            src,
            dst,
            size: bytes.len() as u32,
            kind,
            ecn,
            weight,
            sent_at: self.now,
            ..Packet::default()
        };
        let id = self.admit(packet);
        self.packets[id].seq = id as u64;
        // Before it is queued: the queue may drop it at once, and the drop is captured too.
        self.recorder.capture_real(id, bytes);
        self.enqueue(self.net.path(flow, kind)[0], id);
        id
    }

    /// A receiver outside the simulation handed `bytes` of new data to its application now.
    pub fn add_goodput(&mut self, flow: FlowId, bytes: u64) {
        self.recorder.on_goodput(flow, bytes, self.now);
    }

    /// The `type` of every link's discipline, link by link.
    pub fn qdisc_types(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.net.links.iter().map(|l| l.qdisc_type)
    }

    /// When the next pending event is due, if any.
    pub fn next_event_time(&mut self) -> Option<Time> {
        self.events.next_time()
    }
}
