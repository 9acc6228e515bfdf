//! The flows' real endpoints: Linux sockets in the sender and receiver namespaces, each
//! driven by a thread of its own. A TCP flow is a connected stream socket with the flow's
//! congestion control writing an endless backlog; a UDP flow (CBR, ON-OFF) is a UDP socket
//! that sends a datagram whenever the simulator's own source agent (`transport::udp`), run
//! on the run's clock, sends a packet: the same rate, jitter, rate changes and ON-OFF periods.
//! Receivers count the bytes their application reads; the driver turns them into goodput.
//!
//! Every thread checks the run's stop flag at least every [`POLL`] and never blocks longer.

use super::linux;
use crate::time::Time;
use crate::transport::{Agent, AgentCtx, Token};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::net::SocketAddrV4;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Longest wait of an endpoint thread before it looks at the stop flag again.
const POLL: Duration = Duration::from_millis(20);

/// What a flow's threads report while the run goes on.
#[derive(Default)]
pub struct FlowShared {
    /// Payload bytes the receiving application has read (TCP's stream, UDP's datagrams).
    pub received: AtomicU64,
    /// What the sender's kernel says of its connection, read when it stops (TCP only).
    pub tcp_info: std::sync::Mutex<Option<linux::TcpInfo>>,
    /// The first error of an endpoint thread (e.g. a connection refused), for the report.
    pub error: std::sync::Mutex<Option<String>>,
}

/// The sockets of one flow, made in the namespaces before the clock starts.
pub enum Sockets {
    Tcp {
        /// Bound to the flow's source address, its congestion control and segment size set.
        sender: OwnedFd,
        /// Listening at the flow's destination address.
        listener: OwnedFd,
        to: SocketAddrV4,
    },
    Udp {
        /// Bound and connected: each write is one datagram to the receiver.
        sender: OwnedFd,
        receiver: OwnedFd,
        /// The flow's simulated source (`Cbr`, `OnOff`), its stream after the start was drawn.
        source: Box<dyn Agent>,
    },
}

/// What an endpoint thread runs.
type Work = Box<dyn FnOnce() -> io::Result<()> + Send>;

/// One flow's endpoints: its sockets, when it starts and stops, its packet size.
pub struct Endpoint {
    pub sockets: Sockets,
    pub start: Time,
    pub stop: Time,
    /// The IP packet size the flow sends (its `packet_size`).
    pub packet_size: u32,
    pub shared: Arc<FlowShared>,
}

/// The run's clock and stop flag, shared by every thread.
#[derive(Clone)]
pub struct Clock {
    pub origin: Instant,
    pub stop: Arc<AtomicBool>,
}

impl Clock {
    pub fn now(&self) -> Time {
        self.origin.elapsed().as_nanos() as Time
    }

    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Sleeps until `at` (run time); false if the run stopped first.
    fn sleep_until(&self, at: Time) -> bool {
        loop {
            if self.stopped() {
                return false;
            }
            let now = self.now();
            if now >= at {
                return true;
            }
            std::thread::sleep(Duration::from_nanos(at - now).min(POLL));
        }
    }
}

/// IPv4 and UDP headers: a datagram of `packet_size - UDP_HEADERS` bytes is a packet of `packet_size`.
pub const UDP_HEADERS: u32 = 28;
/// IPv4 and TCP headers with the timestamp option that Linux sends on every segment.
pub const TCP_HEADERS: u32 = 52;

impl Endpoint {
    /// Payload bytes in one packet of the flow: the driver counts goodput in whole packets of
    /// `packet_size`, as the simulator does.
    pub fn payload_per_packet(&self) -> u32 {
        match self.sockets {
            Sockets::Tcp { .. } => self.packet_size - TCP_HEADERS,
            Sockets::Udp { .. } => self.packet_size - UDP_HEADERS,
        }
    }

    /// Starts the sender's and the receiver's threads.
    pub fn spawn(self, clock: &Clock) -> Vec<JoinHandle<()>> {
        let Endpoint {
            sockets,
            start,
            stop,
            packet_size: _,
            shared,
        } = self;
        let (send, receive): (Work, Work) = match sockets {
            Sockets::Tcp { sender, listener, to } => {
                let (c, s) = (clock.clone(), shared.clone());
                let (c2, s2) = (clock.clone(), shared.clone());
                (
                    Box::new(move || tcp_send(&c, &s, sender, to, start, stop)),
                    Box::new(move || tcp_receive(&c2, &s2, listener)),
                )
            }
            Sockets::Udp {
                sender,
                receiver,
                source,
            } => {
                let (c, c2, s2) = (clock.clone(), clock.clone(), shared.clone());
                (
                    Box::new(move || udp_send(&c, source, sender, start)),
                    Box::new(move || udp_receive(&c2, &s2, receiver)),
                )
            }
        };
        [send, receive]
            .into_iter()
            .map(|work| {
                let shared = shared.clone();
                std::thread::spawn(move || {
                    linux::tight_timer_slack();
                    if let Err(e) = work() {
                        shared
                            .error
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .get_or_insert(e.to_string());
                    }
                })
            })
            .collect()
    }
}

/// Waits until `fd` is ready for `events`; false if the run stopped first.
fn ready(clock: &Clock, fd: &OwnedFd, events: libc::c_short) -> io::Result<bool> {
    while !clock.stopped() {
        let mut polled = libc::pollfd {
            fd: fd.as_raw_fd(),
            events,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut polled, 1, POLL.as_millis() as libc::c_int) };
        if n > 0 {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Connects at `start` and writes an endless backlog until `stop` (then the kernel's
/// `TCP_INFO` is kept).
fn tcp_send(
    clock: &Clock,
    shared: &FlowShared,
    fd: OwnedFd,
    to: SocketAddrV4,
    start: Time,
    stop: Time,
) -> io::Result<()> {
    if !clock.sleep_until(start) {
        return Ok(());
    }
    linux::connect(&fd, to)?;
    if !ready(clock, &fd, libc::POLLOUT)? {
        return Ok(());
    }
    linux::socket_error(&fd).map_err(|e| io::Error::new(e.kind(), format!("connect {to}: {e}")))?;
    let backlog = [0u8; 65536];
    while !clock.stopped() && clock.now() < stop {
        if linux::write(fd.as_raw_fd(), &backlog)?.is_none() {
            ready(clock, &fd, libc::POLLOUT)?;
        }
    }
    *shared.tcp_info.lock().unwrap_or_else(|p| p.into_inner()) = Some(linux::tcp_info(&fd)?);
    // Kept open until the run ends: closing would send what is buffered and a FIN after `stop`.
    while !clock.stopped() {
        std::thread::sleep(POLL);
    }
    Ok(())
}

/// Accepts the flow's connection and reads everything that arrives.
fn tcp_receive(clock: &Clock, shared: &FlowShared, listener: OwnedFd) -> io::Result<()> {
    let conn = loop {
        if let Some(conn) = linux::accept(&listener)? {
            break conn;
        }
        if !ready(clock, &listener, libc::POLLIN)? {
            return Ok(());
        }
    };
    read_all(clock, shared, &conn, true)
}

fn udp_receive(clock: &Clock, shared: &FlowShared, socket: OwnedFd) -> io::Result<()> {
    read_all(clock, shared, &socket, false)
}

/// Adds the payload bytes `fd` delivers to `shared.received` (the driver scales them to
/// whole packets: `Endpoint::payload_per_packet`), until the run stops or, on a `stream`,
/// the peer closes.
fn read_all(clock: &Clock, shared: &FlowShared, fd: &OwnedFd, stream: bool) -> io::Result<()> {
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match linux::read(fd.as_raw_fd(), &mut buf)? {
            Some(0) if stream => return Ok(()),
            Some(n) => {
                shared.received.fetch_add(n as u64, Ordering::Relaxed);
            }
            None => {
                if !ready(clock, fd, libc::POLLIN)? {
                    return Ok(());
                }
            }
        }
    }
}

/// Sends a datagram of each packet's size (less its IPv4 and UDP headers) whenever the
/// flow's simulated source sends a packet. Its timers fire on the run's clock in time order
/// (at equal times, in the order set, as the engine's queue fires them), each call seeing
/// the timer's planned time as `now`, so that waking late shifts a datagram but not the
/// schedule. The source stops itself at the flow's `stop`, as in a simulation.
fn udp_send(clock: &Clock, mut source: Box<dyn Agent>, socket: OwnedFd, start: Time) -> io::Result<()> {
    let (mut sent, mut set) = (Vec::new(), Vec::new());
    let mut pending: BinaryHeap<Reverse<(Time, u64, Token)>> = BinaryHeap::new();
    let mut order = 0;
    let datagram = [0u8; 65536];
    if !clock.sleep_until(start) {
        return Ok(());
    }
    source.start(&mut AgentCtx::new(start, &mut sent, &mut set));
    loop {
        for packet in sent.drain(..) {
            let payload = (packet.size.saturating_sub(UDP_HEADERS) as usize).min(datagram.len());
            // A full socket buffer (ENOBUFS/EAGAIN) loses the datagram at the host, as a
            // source's own queue overflowing would; it is not the emulated router's drop.
            let _ = linux::write(socket.as_raw_fd(), &datagram[..payload]);
        }
        for (at, token) in set.drain(..) {
            pending.push(Reverse((at, order, token)));
            order += 1;
        }
        let Some(Reverse((at, _, token))) = pending.pop() else {
            return Ok(());
        };
        if !clock.sleep_until(at) {
            return Ok(());
        }
        source.timer(token, &mut AgentCtx::new(at, &mut sent, &mut set));
    }
}
