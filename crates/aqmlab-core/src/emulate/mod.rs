//! `aqmlab emulate`: the simulator's network run in real time between real Linux endpoints.
//!
//! The flows' senders are real sockets in one network namespace, their receivers in
//! another; each namespace's only route goes through a TUN device whose other end is this
//! process. The [`Simulation`] of the scenario runs with its clock set to the monotonic
//! clock: a packet read from a TUN device enters its flow's first link as its sender agent's
//! packet would, crosses the links (each link's `QueueDisc`, its transmitter paced at the
//! link's rate calling `dequeue`, its delay: the access links are each flow's delay lines),
//! and is written to the other TUN device when it is delivered. The engine is the one
//! `run` uses, so the results are the same tables.
//!
//! ```text
//!  sender ns                    this process (driver thread)                receiver ns
//!  TCP/UDP sockets ─► aqmlab0 ─► read ─► classify by 5-tuple ─► Simulation ─► write ─► aqmlab0 ─► sockets
//!  198.18.1.1          (TUN)      ◄──────────── ACKs, the same way back ◄───────────   (TUN)   198.18.2.1
//! ```
//!
//! Flow `i` is `198.18.1.1:(20000+i) -> 198.18.2.1:(30000+i)` (198.18.0.0/15: RFC 2544's
//! benchmarking range); only these two addresses exist, each in a namespace this run made.
//!
//! Limits (docs/emulate.md): dumbbell topologies; TCP (Linux's, `tcp.cc`), CBR and ON-OFF flows;
//! packets of at most 1500 B; at most [`MAX_DURATION`] s and [`MAX_FLOWS`] flows. Needs
//! root. What cannot be expressed yet is refused by [`check`], naming the field.

mod endpoints;
mod linux;

use crate::error::{Error, InternalError, MechanismError, ScenarioError};
use crate::metrics::{pcap, Results};
use crate::packet::{Ecn, FlowId, Packet, PacketId, PacketKind};
use crate::scenario::{Scenario, TopologySpec};
use crate::sim::Simulation;
use crate::time::{to_secs, Time};
use crate::transport::tcp::{CongestionControl, TcpOptions, Workload};
use crate::transport::{Agent, AgentCtx, AgentStats, FlowKind, Token};
use endpoints::{Clock, Endpoint, FlowShared, Sockets};
use serde::Serialize;
use std::collections::HashMap;
use std::fmt;
use std::io;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Longest emulation: it runs in real time, and a forgotten long run holds two namespaces,
/// a thread per endpoint and a core's share of the machine.
pub const MAX_DURATION: f64 = 600.0;
/// Most flows: each has two threads and a port pair.
pub const MAX_FLOWS: usize = 100;
/// The TUN devices' MTU: the largest packet a flow may send.
const MTU: u32 = 1500;
/// The smallest TCP packet: Linux's smallest MSS (88 B, `TCP_MIN_MSS`) and its headers.
const MIN_TCP_PACKET: u32 = 88 + endpoints::TCP_HEADERS;
const SENDER_ADDR: Ipv4Addr = Ipv4Addr::new(198, 18, 1, 1);
const RECEIVER_ADDR: Ipv4Addr = Ipv4Addr::new(198, 18, 2, 1);
const SENDER_PORT: u16 = 20000;
const RECEIVER_PORT: u16 = 30000;
const TUN_NAME: &str = "aqmlab0";
/// Packets read from one TUN device per wake-up before the other is served.
const READ_BATCH: usize = 64;
/// Longest sleep of the driver: it reads the receivers' byte counts and the stop flag this often.
const MAX_SLEEP: Time = 5_000_000;
/// The driver's real-time priority (`SCHED_FIFO`, 1-99): above every ordinary thread, the
/// endpoints' included, so that a packet is written when it is due and not when the scheduler
/// next gets to the driver; below the kernel's threaded interrupt handlers (50), whose work it
/// needs.
/// Measured (BENCHMARKS.md, issue 25): with two busy loops beside it, the time added per pass
/// at 100 Mbit/s falls from 442 µs (p99 3.2 ms) to 23 µs (p99 65 µs). The driver sleeps
/// whenever nothing is due, and the kernel's real-time throttling keeps 5 % of each second for
/// ordinary threads even if it did not.
const DRIVER_PRIORITY: libc::c_int = 10;

/// Why an emulation could not run.
#[derive(Debug)]
pub enum EmulateError {
    /// The scenario asks for something emulation cannot do (yet); names the field.
    Scenario(ScenarioError),
    /// The machine refused: no root, no `/dev/net/tun`, a congestion control the kernel lacks.
    System(io::Error),
    /// A discipline from outside the crate (a user's) failed.
    Mechanism(MechanismError),
    Internal(InternalError),
}

impl fmt::Display for EmulateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EmulateError::Scenario(e) => e.fmt(f),
            EmulateError::System(e) => e.fmt(f),
            EmulateError::Mechanism(e) => e.fmt(f),
            EmulateError::Internal(e) => e.fmt(f),
        }
    }
}

impl From<ScenarioError> for EmulateError {
    fn from(e: ScenarioError) -> Self {
        EmulateError::Scenario(e)
    }
}

impl From<io::Error> for EmulateError {
    fn from(e: io::Error) -> Self {
        EmulateError::System(e)
    }
}

/// Checks that emulation can run `scenario`: an error names the first field it cannot
/// express yet. Returns notes on what is taken differently from a simulation (e.g. the
/// simulated TCP's options, which Linux's TCP replaces), for the user.
pub fn check(scenario: &Scenario) -> Result<Vec<String>, ScenarioError> {
    let not_yet = |field: &str, what: &str| {
        Err(ScenarioError::new(
            field,
            format!("{what} (aqmlab emulate, docs/emulate.md)"),
        ))
    };
    let sim = &scenario.simulation;
    if sim.duration.0 > MAX_DURATION {
        return not_yet(
            "simulation.duration",
            &format!(
                "emulation runs in real time: at most {MAX_DURATION} s, got {}",
                sim.duration
            ),
        );
    }
    if !matches!(scenario.topology, TopologySpec::Dumbbell(_)) {
        return not_yet("topology.type", "emulation runs dumbbell topologies only, yet");
    }
    let flows = scenario.expanded_flows();
    if flows.len() > MAX_FLOWS {
        return not_yet(
            "flows",
            &format!("at most {MAX_FLOWS} flows (count summed), got {}", flows.len()),
        );
    }
    let mut notes = Vec::new();
    for (i, spec) in scenario.flows.iter().enumerate() {
        let path = format!("flows[{i}]");
        let size = spec.common.packet_size.0 as u32;
        match &spec.kind {
            FlowKind::Tcp(tcp) => {
                if !matches!(tcp.workload, Workload::Infinite) {
                    return not_yet(&format!("{path}.workload"), "TCP flows are infinite backlogs, yet");
                }
                if cc_of(&tcp.tcp) == CongestionControl::Ledbat {
                    return not_yet(
                        &format!("{path}.tcp.cc"),
                        r#""ledbat" is the simulator's (RFC 6817): Linux 6.1 has no LEDBAT module to set on a real socket; write "reno", "cubic" or "bbr""#,
                    );
                }
                if !spec.common.pauses.is_empty() {
                    return not_yet(&format!("{path}.pauses"), "real TCP endpoints do not pause, yet");
                }
                if let cc @ (CongestionControl::Dctcp | CongestionControl::Prague) = cc_of(&tcp.tcp) {
                    return not_yet(
                        &format!("{path}.tcp.cc"),
                        &format!(
                            r#""{}" is not in this machine's kernel (net.ipv4.tcp_available_congestion_control: reno, cubic, bbr); `validate linux` runs it in User-Mode Linux"#,
                            cc.linux_name()
                        ),
                    );
                }
                if tcp.tcp.resolve().ecn != crate::transport::Codepoint::NotEct {
                    return not_yet(&format!("{path}.tcp.ecn"), "no ECN under emulation yet");
                }
                if tcp.tcp.trace {
                    return not_yet(&format!("{path}.tcp.trace"), "no TCP traces under emulation yet");
                }
                if !(MIN_TCP_PACKET..=MTU).contains(&size) {
                    return not_yet(
                        &format!("{path}.packet_size"),
                        &format!("a TCP packet is {MIN_TCP_PACKET} to {MTU} B (the TUN MTU), got {size}"),
                    );
                }
                let simulated = TcpOptions {
                    cc: tcp.tcp.cc,
                    ..TcpOptions::default()
                };
                if tcp.tcp != simulated {
                    notes.push(format!(
                        "{path}.tcp: the simulated TCP's options do not apply: the endpoints are Linux's TCP ({})",
                        cc_of(&tcp.tcp).linux_name()
                    ));
                }
            }
            FlowKind::Cbr(crate::transport::udp::CbrConfig { ecn, .. })
            | FlowKind::OnOff(crate::transport::udp::OnOffConfig { ecn, .. }) => {
                if *ecn != crate::transport::Codepoint::NotEct {
                    return not_yet(&format!("{path}.ecn"), "the emulator's UDP sockets send Not-ECT, yet");
                }
                if !(endpoints::UDP_HEADERS + 1..=MTU).contains(&size) {
                    return not_yet(
                        &format!("{path}.packet_size"),
                        &format!("a UDP packet is 29 to {MTU} B (the TUN MTU), got {size}"),
                    );
                }
            }
            other => {
                return not_yet(
                    &format!("{path}.type"),
                    &format!(
                        "emulation runs tcp, cbr and onoff flows, yet, not {:?}",
                        other.type_name()
                    ),
                )
            }
        }
    }
    Ok(notes)
}

/// A TCP flow's congestion control: `tcp.cc`, or the profile's, as the simulator's TCP.
fn cc_of(tcp: &TcpOptions) -> CongestionControl {
    tcp.congestion_control()
}

/// Flow `i`'s 5-tuple, as its data packets carry it (ACKs carry it reversed).
fn five_tuple(flow: FlowId, tcp: bool) -> FiveTuple {
    FiveTuple {
        protocol: if tcp {
            libc::IPPROTO_TCP as u8
        } else {
            libc::IPPROTO_UDP as u8
        },
        src: SocketAddrV4::new(SENDER_ADDR, SENDER_PORT + flow as u16),
        dst: SocketAddrV4::new(RECEIVER_ADDR, RECEIVER_PORT + flow as u16),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct FiveTuple {
    protocol: u8,
    src: SocketAddrV4,
    dst: SocketAddrV4,
}

impl FiveTuple {
    fn reversed(self) -> FiveTuple {
        FiveTuple {
            protocol: self.protocol,
            src: self.dst,
            dst: self.src,
        }
    }
}

/// What the forwarder reads of an IPv4 packet: its 5-tuple and ECN field.
struct Ipv4Header {
    tuple: FiveTuple,
    ecn: Ecn,
}

/// Parses an IPv4 packet's header and its TCP/UDP ports; `None` for anything else (IPv6,
/// ICMP, fragments, a truncated packet).
fn parse_ipv4(bytes: &[u8]) -> Option<Ipv4Header> {
    let ihl = (*bytes.first()? & 0x0f) as usize * 4;
    if bytes[0] >> 4 != 4 || ihl < 20 || bytes.len() < ihl + 4 {
        return None;
    }
    let protocol = bytes[9];
    let fragment = u16::from_be_bytes([bytes[6], bytes[7]]) & 0x1fff;
    if fragment != 0 || (protocol != libc::IPPROTO_TCP as u8 && protocol != libc::IPPROTO_UDP as u8) {
        return None;
    }
    let addr = |at: usize| Ipv4Addr::new(bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]);
    let port = |at: usize| u16::from_be_bytes([bytes[at], bytes[at + 1]]);
    let ecn = match bytes[1] & 3 {
        0 => Ecn::NotEct,
        1 => Ecn::Ect1,
        2 => Ecn::Ect0,
        _ => Ecn::Ce,
    };
    Some(Ipv4Header {
        tuple: FiveTuple {
            protocol,
            src: SocketAddrV4::new(addr(12), port(ihl)),
            dst: SocketAddrV4::new(addr(16), port(ihl + 2)),
        },
        ecn,
    })
}

/// A packet that reached its destination in the simulation, to be written out.
struct Delivery {
    id: PacketId,
    kind: PacketKind,
    /// When the simulation delivered it: the time it is due at the endpoint.
    due: Time,
    ce: bool,
}

/// A flow's agent under emulation: it sends nothing (the real endpoint does) and hands
/// what it receives to the driver, which writes the packet to the endpoint's namespace.
struct Relay {
    out: Arc<Mutex<Vec<Delivery>>>,
    /// The sender's: the kernel's `TCP_INFO` at its stop, whose retransmissions go in the flows table.
    shared: Option<Arc<FlowShared>>,
}

impl Agent for Relay {
    fn start(&mut self, _ctx: &mut AgentCtx) {}
    fn receive(&mut self, packet: &Packet, ctx: &mut AgentCtx) {
        let delivery = Delivery {
            id: packet.seq as PacketId,
            kind: packet.kind,
            due: ctx.now,
            ce: packet.ecn == Ecn::Ce,
        };
        self.out.lock().unwrap_or_else(|p| p.into_inner()).push(delivery);
    }
    fn timer(&mut self, _token: Token, _ctx: &mut AgentCtx) {}
    fn stats(&self) -> AgentStats {
        let retransmitted_packets = self.shared.as_ref().map_or(0, |s| {
            s.tcp_info
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .map_or(0, |info| info.retransmits)
        });
        AgentStats {
            retransmitted_packets,
            ..AgentStats::default()
        }
    }
}

/// What only the forwarder knows: its cost and its timing.
#[derive(Clone, Debug, Default, Serialize)]
pub struct EmulationStats {
    /// Wall time from the clock's start to the end, s.
    pub wall_time_s: f64,
    /// Packets read from the TUN devices (both directions) and written back.
    pub packets_read: u64,
    pub packets_written: u64,
    /// Packets read that belong to no flow (IPv6, ICMP, ...): not forwarded.
    pub packets_unmatched: u64,
    /// Packets the destination TUN device would not take (its queue full): lost.
    pub write_failures: u64,
    /// How late a packet was written after the simulation delivered it: the time the
    /// forwarder adds per pass besides the modelled links (µs: mean, 99th percentile, max).
    pub added_mean_us: f64,
    pub added_p99_us: f64,
    pub added_max_us: f64,
    /// CPU time of the driver thread, and of the whole process (endpoints, kernel work on
    /// their behalf in system time), as a fraction of the wall time (1.0 = one core).
    pub driver_cpu: f64,
    pub process_cpu: f64,
    /// Driver CPU time per packet forwarded (one read plus one write), µs.
    pub cpu_us_per_packet: f64,
    /// Whether the driver ran at real-time priority ([`DRIVER_PRIORITY`]); if the system
    /// refused it, a note says why, and the time added per pass grows with the machine's load.
    pub driver_real_time: bool,
    /// The first error of an endpoint, per flow name (a refused connection, ...).
    pub endpoint_errors: Vec<(String, String)>,
    /// Each TCP flow's connection as its sender's kernel saw it when the flow stopped.
    pub kernel_tcp: Vec<KernelTcp>,
}

/// One TCP flow's `TCP_INFO` when its sender stopped (what `ss -ti` shows).
#[derive(Clone, Debug, Serialize)]
pub struct KernelTcp {
    pub flow: String,
    pub srtt_ms: f64,
    pub rttvar_ms: f64,
    pub cwnd_segments: u32,
    pub retransmits: u64,
}

/// Lateness histogram: 1-µs bins up to 100 ms.
struct Lateness {
    bins: Vec<u64>,
    sum: u128,
    max: Time,
    count: u64,
}

impl Lateness {
    fn new() -> Self {
        Lateness {
            bins: vec![0; 100_001],
            sum: 0,
            max: 0,
            count: 0,
        }
    }

    fn add(&mut self, late: Time) {
        let last = self.bins.len() - 1;
        self.bins[((late / 1000) as usize).min(last)] += 1;
        self.sum += late as u128;
        self.max = self.max.max(late);
        self.count += 1;
    }

    fn percentile_us(&self, q: f64) -> f64 {
        let target = (self.count as f64 * q).ceil() as u64;
        let mut seen = 0;
        for (us, n) in self.bins.iter().enumerate() {
            seen += n;
            if seen >= target.max(1) {
                return us as f64;
            }
        }
        0.0
    }
}

/// Everything the driver thread owns while it runs.
struct Driver {
    sim: Simulation,
    /// The TUN devices: `[sender side, receiver side]`.
    tuns: [OwnedFd; 2],
    flows: HashMap<FiveTuple, (FlowId, PacketKind)>,
    deliveries: Arc<Mutex<Vec<Delivery>>>,
    /// Each flow's receiver count, and what of it is already reported as goodput.
    shared: Vec<Arc<FlowShared>>,
    /// Per flow: (packet size, payload per packet, goodput bytes reported).
    goodput: Vec<(u64, u64, u64)>,
    /// The bytes of each packet in the simulation, by its id.
    bodies: Vec<Vec<u8>>,
    clock: Clock,
    end: Time,
    stats: EmulationStats,
    lateness: Lateness,
}

impl Driver {
    /// Runs the emulation to its end; `started` gets whether the thread got its real-time
    /// priority, before the first packet.
    fn run(mut self, started: SyncSender<io::Result<()>>) -> io::Result<(Simulation, EmulationStats)> {
        let real_time = linux::set_real_time(DRIVER_PRIORITY);
        self.stats.driver_real_time = real_time.is_ok();
        let _ = started.send(real_time);
        linux::tight_timer_slack();
        let cpu_start = (linux::thread_cpu_time(), linux::process_cpu_time());
        let fds = [self.tuns[0].as_raw_fd(), self.tuns[1].as_raw_fd()];
        let mut buf = vec![0u8; 65536];
        loop {
            let now = self.clock.now().min(self.end);
            self.sim.run_until(now);
            self.write_deliveries()?;
            if now >= self.end || self.clock.stopped() {
                break;
            }
            for side in 0..2 {
                self.read_side(side, &mut buf)?;
            }
            self.report_goodput();
            let next = self
                .sim
                .next_event_time()
                .unwrap_or(self.end)
                .min(self.end)
                .min(now + MAX_SLEEP);
            let now = self.clock.now();
            if next > now {
                linux::wait_readable(&fds, Duration::from_nanos(next - now))?;
            }
        }
        let wall = to_secs(self.clock.now());
        let s = &mut self.stats;
        s.wall_time_s = wall;
        let l = &self.lateness;
        s.added_mean_us = if l.count > 0 {
            l.sum as f64 / l.count as f64 / 1e3
        } else {
            0.0
        };
        s.added_p99_us = l.percentile_us(0.99);
        s.added_max_us = l.max as f64 / 1e3;
        let cpu = (linux::thread_cpu_time() - cpu_start.0).as_secs_f64();
        s.driver_cpu = cpu / wall;
        s.process_cpu = (linux::process_cpu_time() - cpu_start.1).as_secs_f64() / wall;
        s.cpu_us_per_packet = if s.packets_written > 0 {
            cpu * 1e6 / s.packets_written as f64
        } else {
            0.0
        };
        Ok((self.sim, self.stats))
    }

    /// Reads up to [`READ_BATCH`] packets from one side and lets each into the simulation.
    fn read_side(&mut self, side: usize, buf: &mut [u8]) -> io::Result<()> {
        for _ in 0..READ_BATCH {
            let Some(n) = linux::read(self.tuns[side].as_raw_fd(), buf)? else {
                return Ok(());
            };
            self.stats.packets_read += 1;
            let bytes = &buf[..n];
            let Some((header, &(flow, kind))) = parse_ipv4(bytes).and_then(|h| {
                let found = self.flows.get(&h.tuple)?;
                Some((h, found))
            }) else {
                self.stats.packets_unmatched += 1;
                continue;
            };
            // Data comes from the senders' side, ACKs from the receivers'.
            if (kind == PacketKind::Data) != (side == 0) {
                self.stats.packets_unmatched += 1;
                continue;
            }
            let id = self.sim.inject(flow, kind, bytes, header.ecn) as usize;
            if self.bodies.len() <= id {
                self.bodies.resize_with(id + 1, Vec::new);
            }
            self.bodies[id].clear();
            self.bodies[id].extend_from_slice(bytes);
        }
        Ok(())
    }

    /// Writes the packets the simulation delivered: data to the receivers, ACKs to the senders.
    fn write_deliveries(&mut self) -> io::Result<()> {
        let deliveries = std::mem::take(&mut *self.deliveries.lock().unwrap_or_else(|p| p.into_inner()));
        for d in deliveries {
            let body = &mut self.bodies[d.id as usize];
            if d.ce {
                pcap::set_ipv4_ecn(body, Ecn::Ce);
            }
            let side = if d.kind == PacketKind::Data { 1 } else { 0 };
            match linux::write(self.tuns[side].as_raw_fd(), body)? {
                Some(_) => self.stats.packets_written += 1,
                None => self.stats.write_failures += 1,
            }
            self.lateness.add(self.clock.now().saturating_sub(d.due));
        }
        Ok(())
    }

    /// Reports the bytes the receivers read since the last call as goodput, in packets of the
    /// flow's size (the simulator's goodput counts whole packets).
    fn report_goodput(&mut self) {
        for (flow, (shared, (size, payload, reported))) in self.shared.iter().zip(&mut self.goodput).enumerate() {
            let total = shared.received.load(Ordering::Relaxed) * *size / *payload;
            if total > *reported {
                self.sim.add_goodput(flow as FlowId, total - *reported);
                *reported = total;
            }
        }
    }
}

/// A running emulation: its threads, and the namespaces they work in (which vanish with
/// the last descriptor when it is dropped).
pub struct Emulation {
    clock: Clock,
    duration: f64,
    driver: Option<JoinHandle<io::Result<(Simulation, EmulationStats)>>>,
    endpoints: Vec<JoinHandle<()>>,
    names: Vec<String>,
    shared: Vec<Arc<FlowShared>>,
    notes: Vec<String>,
    /// The capture files being written (`simulation.pcap`).
    captures: Vec<PathBuf>,
    /// Kept until the end: the namespaces live as long as these (and their sockets) do.
    _namespaces: [linux::Namespace; 2],
}

impl Emulation {
    /// Checks the scenario ([`check`]), makes the namespaces, TUN devices and sockets, and
    /// starts the clock, the forwarder and the endpoints. With `capture_dir`, the links
    /// `simulation.pcap` names are captured into it as in a simulation
    /// ([`Simulation::capture_into`]), with the real packets' headers.
    pub fn start(scenario: &Scenario, capture_dir: Option<&Path>) -> Result<Emulation, EmulateError> {
        let mut notes = check(scenario)?;
        let flows = scenario.expanded_flows();
        let deliveries = Arc::new(Mutex::new(Vec::new()));
        let shared: Vec<Arc<FlowShared>> = flows.iter().map(|_| Arc::default()).collect();
        // The agents are built in flow order, each with its flow's stream after the start was
        // drawn, as `Simulation::build` does: the endpoints start as simulated ones, and a UDP
        // flow's sender is driven by its simulated source, which then sends as in a simulation.
        let mut schedule = Vec::new();
        let mut sim = Simulation::build_with(scenario, |f, stop, rng| {
            let start = f.spec.common.draw_start(&mut f.stream(scenario.simulation.seed));
            let source = match f.spec.kind {
                FlowKind::Tcp(_) => None,
                _ => Some(f.spec.build_agents(stop, rng).0),
            };
            schedule.push((start, stop, source));
            let relay = |shared| {
                Box::new(Relay {
                    out: deliveries.clone(),
                    shared,
                }) as Box<dyn Agent>
            };
            (relay(Some(shared[f.id as usize].clone())), relay(None))
        })?;
        let captures = match capture_dir {
            Some(dir) => sim.capture_into(dir)?,
            None => Vec::new(),
        };
        // Made once the scenario is known to build: a refused one leaves nothing to undo.
        let sender_ns = linux::Namespace::new()?;
        let receiver_ns = linux::Namespace::new()?;
        let tuns = [
            sender_ns.run(|| side(SENDER_ADDR))?,
            receiver_ns.run(|| side(RECEIVER_ADDR))?,
        ];
        let mut endpoints = Vec::new();
        let mut table = HashMap::new();
        for (f, (start, stop, source)) in flows.iter().zip(schedule) {
            let tcp = source.is_none();
            let tuple = five_tuple(f.id, tcp);
            table.insert(tuple, (f.id, PacketKind::Data));
            table.insert(tuple.reversed(), (f.id, PacketKind::Ack));
            let size = f.spec.common.packet_size.0 as u32;
            let sockets = match (&f.spec.kind, source) {
                (FlowKind::Tcp(options), _) => Sockets::Tcp {
                    sender: sender_ns.run(|| {
                        let cc = cc_of(&options.tcp);
                        let s = linux::socket(libc::AF_INET, libc::SOCK_STREAM)?;
                        linux::set_reuse_addr(&s)?;
                        linux::set_congestion_control(&s, cc.linux_name())
                            .map_err(|e| io::Error::new(e.kind(), format!("{}.tcp.cc: {e}", f.path)))?;
                        linux::set_max_segment(&s, size - 40)?;
                        linux::bind(&s, tuple.src)?;
                        Ok(s)
                    })?,
                    listener: receiver_ns.run(|| {
                        let s = linux::socket(libc::AF_INET, libc::SOCK_STREAM)?;
                        linux::set_reuse_addr(&s)?;
                        linux::bind(&s, tuple.dst)?;
                        linux::listen(&s)?;
                        Ok(s)
                    })?,
                    to: tuple.dst,
                },
                (_, Some(source)) => Sockets::Udp {
                    sender: sender_ns.run(|| {
                        let s = linux::socket(libc::AF_INET, libc::SOCK_DGRAM)?;
                        linux::bind(&s, tuple.src)?;
                        linux::connect(&s, tuple.dst)?;
                        Ok(s)
                    })?,
                    receiver: receiver_ns.run(|| {
                        let s = linux::socket(libc::AF_INET, libc::SOCK_DGRAM)?;
                        linux::bind(&s, tuple.dst)?;
                        Ok(s)
                    })?,
                    source,
                },
                (_, None) => unreachable!("every flow but TCP has its source"),
            };
            endpoints.push(Endpoint {
                sockets,
                start,
                stop,
                packet_size: size,
                shared: shared[f.id as usize].clone(),
            });
        }
        let clock = Clock {
            origin: Instant::now(),
            stop: Arc::new(AtomicBool::new(false)),
        };
        let driver = Driver {
            sim,
            tuns,
            flows: table,
            deliveries,
            shared: shared.clone(),
            goodput: endpoints
                .iter()
                .map(|e| (e.packet_size as u64, e.payload_per_packet() as u64, 0))
                .collect(),
            bodies: Vec::new(),
            clock: clock.clone(),
            end: scenario.simulation.duration.nanos(),
            stats: EmulationStats::default(),
            lateness: Lateness::new(),
        };
        let (started, real_time) = std::sync::mpsc::sync_channel(1);
        let driver = std::thread::Builder::new()
            .name("aqmlab-emulate".into())
            .spawn(move || driver.run(started))?;
        // A driver that failed before it could say is reported when the emulation finishes.
        if let Ok(Err(e)) = real_time.recv() {
            notes.push(format!(
                "the forwarder runs at ordinary priority: real-time priority (SCHED_FIFO {DRIVER_PRIORITY}) \
                 was refused ({e}); it adds more time per pass on a loaded machine (docs/emulate.md)"
            ));
        }
        let endpoint_threads = endpoints.into_iter().flat_map(|e| e.spawn(&clock)).collect();
        Ok(Emulation {
            clock,
            duration: scenario.simulation.duration.0,
            driver: Some(driver),
            endpoints: endpoint_threads,
            names: flows.iter().map(|f| f.name.clone()).collect(),
            shared,
            notes,
            captures,
            _namespaces: [sender_ns, receiver_ns],
        })
    }

    /// What is taken differently from a simulation of the same scenario ([`check`]).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The capture files being written (`simulation.pcap`; none without a capture folder).
    pub fn capture_files(&self) -> &[PathBuf] {
        &self.captures
    }

    /// Seconds since the clock started.
    pub fn elapsed(&self) -> f64 {
        to_secs(self.clock.now())
    }

    pub fn duration(&self) -> f64 {
        self.duration
    }

    /// Whether the forwarder has stopped (at the duration, or stopped, or failed).
    pub fn is_finished(&self) -> bool {
        self.driver.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// Asks every thread to stop (within [`MAX_SLEEP`] and the endpoints' poll interval).
    pub fn stop(&self) {
        self.clock.stop.store(true, Ordering::Relaxed);
    }

    /// Waits for the end, stops the endpoints, and returns the results and the forwarder's figures.
    pub fn finish(mut self) -> Result<(Results, EmulationStats), EmulateError> {
        let driver = self.driver.take().expect("finish runs once");
        let outcome = driver.join();
        self.stop();
        for t in self.endpoints.drain(..) {
            let _ = t.join();
        }
        let (mut sim, mut stats) = match outcome {
            Ok(result) => result?,
            Err(_) => {
                return Err(EmulateError::Internal(InternalError(
                    "the emulation's driver panicked".into(),
                )))
            }
        };
        for (name, shared) in self.names.iter().zip(&self.shared) {
            if let Some(e) = shared.error.lock().unwrap_or_else(|p| p.into_inner()).take() {
                stats.endpoint_errors.push((name.clone(), e));
            }
            if let Some(info) = *shared.tcp_info.lock().unwrap_or_else(|p| p.into_inner()) {
                stats.kernel_tcp.push(KernelTcp {
                    flow: name.clone(),
                    srtt_ms: info.srtt_us as f64 / 1e3,
                    rttvar_ms: info.rttvar_us as f64 / 1e3,
                    cwnd_segments: info.cwnd,
                    retransmits: info.retransmits,
                });
            }
        }
        sim.flush_captures()?;
        let results = sim.results().map_err(|e| match e {
            Error::Scenario(e) => EmulateError::Scenario(e),
            Error::Mechanism(e) => EmulateError::Mechanism(e),
            Error::Internal(e) => EmulateError::Internal(e),
        })?;
        Ok((results, stats))
    }
}

impl Drop for Emulation {
    /// Stops and joins every thread; the descriptors then close and the namespaces, their
    /// devices and sockets vanish with them.
    fn drop(&mut self) {
        self.stop();
        if let Some(driver) = self.driver.take() {
            let _ = driver.join();
        }
        for t in self.endpoints.drain(..) {
            let _ = t.join();
        }
    }
}

/// One side's TUN device, addressed `addr/16` and up, in the calling thread's namespace.
/// IPv6 is off there (no router solicitations to forward) and TCP keeps no metrics of past
/// connections (each flow starts afresh, as in a simulation).
fn side(addr: Ipv4Addr) -> io::Result<OwnedFd> {
    // Best effort: a kernel without IPv6 has nothing to turn off, and a read-only /proc/sys
    // leaves the defaults (router solicitations are then counted as unmatched packets).
    for name in [
        "net/ipv6/conf/all/disable_ipv6",
        "net/ipv6/conf/default/disable_ipv6",
        "net/ipv4/tcp_no_metrics_save",
    ] {
        let _ = linux::sysctl(name, "1");
    }
    let tun = linux::tun(TUN_NAME)?;
    linux::configure(TUN_NAME, addr, 16)?;
    Ok(tun)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(extra: &str) -> Scenario {
        let text = format!(
            r#"
[simulation]
duration = "5s"
[topology]
type = "dumbbell"
bottleneck = {{ rate = "10Mbps", delay = "1ms" }}
{extra}
"#
        );
        Scenario::from_toml_str(&text).unwrap()
    }

    fn refused(extra: &str) -> String {
        check(&scenario(extra)).unwrap_err().to_string()
    }

    #[test]
    fn what_emulation_cannot_express_is_refused_naming_the_field() {
        assert!(
            refused("[[flows]]\ntype = \"tfrc\"").starts_with("flows[0].type: emulation runs tcp, cbr and onoff flows")
        );
        assert!(
            refused("[[flows]]\ntype = \"tcp\"\nworkload = { type = \"transfer\", packets = 10 }")
                .starts_with("flows[0].workload:")
        );
        assert!(refused("[[flows]]\ntype = \"tcp\"\npacket_size = \"9000B\"").starts_with("flows[0].packet_size:"));
        assert!(
            refused("[[flows]]\ntype = \"tcp\"\ntcp = { profile = \"linux\", cc = \"ledbat\" }").starts_with(
                r#"flows[0].tcp.cc: "ledbat" is the simulator's (RFC 6817): Linux 6.1 has no LEDBAT module"#
            )
        );
        assert!(refused(
            "[[flows]]\ntype = \"onoff\"\nrate = \"1Mbps\"\non_time = \"1s\"\noff_time = \"1s\"\npacket_size = \"9000B\""
        )
        .starts_with("flows[0].packet_size: a UDP packet is 29 to 1500 B"));
        let long = Scenario::from_toml_str(
            "[simulation]\nduration = \"601s\"\n[topology]\ntype = \"dumbbell\"\nbottleneck = { rate = \"10Mbps\", delay = \"1ms\" }\n[[flows]]\ntype = \"tcp\"",
        )
        .unwrap();
        assert!(check(&long)
            .unwrap_err()
            .to_string()
            .starts_with("simulation.duration: emulation runs in real time"));
    }

    #[test]
    fn the_simulated_tcp_options_are_noted_and_cc_is_not() {
        let notes = check(&scenario("[[flows]]\ntype = \"tcp\"\ntcp = { cc = \"cubic\" }")).unwrap();
        assert!(notes.is_empty(), "{notes:?}");
        let notes = check(&scenario("[[flows]]\ntype = \"tcp\"\ntcp = { variant = \"sack\" }")).unwrap();
        assert_eq!(notes.len(), 1);
        assert!(notes[0].contains("Linux's TCP (reno)"), "{notes:?}");
    }

    #[test]
    fn a_flow_is_found_by_its_five_tuple_both_ways() {
        let mut packet = vec![0u8; 40];
        packet[0] = 0x45;
        packet[1] = 0x02; // ECT(0)
        packet[9] = libc::IPPROTO_TCP as u8;
        packet[12..16].copy_from_slice(&SENDER_ADDR.octets());
        packet[16..20].copy_from_slice(&RECEIVER_ADDR.octets());
        packet[20..22].copy_from_slice(&(SENDER_PORT + 7).to_be_bytes());
        packet[22..24].copy_from_slice(&(RECEIVER_PORT + 7).to_be_bytes());
        let h = parse_ipv4(&packet).unwrap();
        assert_eq!(h.tuple, five_tuple(7, true));
        assert_eq!(h.ecn, Ecn::Ect0);
        assert_ne!(h.tuple, five_tuple(7, false), "UDP and TCP flows differ by protocol");
        assert_eq!(five_tuple(7, true).reversed().src, five_tuple(7, true).dst);
        packet[6] = 0x20; // a later fragment carries no ports
        packet[7] = 0x01;
        assert!(parse_ipv4(&packet).is_none());
    }
}
