//! The Linux system calls emulation needs, each behind a small safe function: network
//! namespaces, TUN devices, interface addresses, sockets and their options, waiting.
//!
//! Namespaces are anonymous: a thread `unshare`s a new one and keeps a file descriptor of it
//! ([`Namespace`]); nothing is mounted under `/run/netns`, so nothing is left behind when
//! the descriptors close, whether the run ends, fails, is interrupted or the process is
//! killed. Everything in a namespace (its TUN device, its sockets' addresses) goes with it.

use std::ffi::CString;
use std::io;
use std::net::SocketAddrV4;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// Turns a `-1` return into the OS error, naming what failed.
fn check(ret: libc::c_int, what: &str) -> io::Result<libc::c_int> {
    if ret < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("{what}: {e}")));
    }
    Ok(ret)
}

/// A network namespace of its own, alive while this descriptor (or a socket or device in it) is.
pub struct Namespace {
    fd: OwnedFd,
}

impl Namespace {
    /// A new, empty network namespace (only `lo`, down). Needs CAP_SYS_ADMIN: without it the
    /// error says that emulation needs root.
    pub fn new() -> io::Result<Namespace> {
        in_thread(|| {
            // SAFETY: unshare affects only this (scoped, short-lived) thread.
            if unsafe { libc::unshare(libc::CLONE_NEWNET) } < 0 {
                let e = io::Error::last_os_error();
                let hint = if e.raw_os_error() == Some(libc::EPERM) {
                    " (aqmlab emulate needs root, or CAP_SYS_ADMIN and CAP_NET_ADMIN: it creates network \
                     namespaces and TUN devices)"
                } else {
                    ""
                };
                return Err(io::Error::new(e.kind(), format!("unshare(CLONE_NEWNET): {e}{hint}")));
            }
            open("/proc/thread-self/ns/net", libc::O_RDONLY).map(|fd| Namespace { fd })
        })
    }

    /// Runs `f` on a thread inside this namespace: what it creates (devices, sockets) lives here.
    pub fn run<T: Send>(&self, f: impl FnOnce() -> io::Result<T> + Send) -> io::Result<T> {
        let ns = self.fd.as_raw_fd();
        in_thread(move || {
            // SAFETY: setns on a namespace descriptor we own; affects only this scoped thread.
            check(unsafe { libc::setns(ns, libc::CLONE_NEWNET) }, "setns")?;
            f()
        })
    }
}

/// Runs `f` on a scoped thread of its own (namespace changes stay with that thread).
fn in_thread<T: Send>(f: impl FnOnce() -> io::Result<T> + Send) -> io::Result<T> {
    std::thread::scope(|s| s.spawn(f).join()).unwrap_or_else(|_| Err(io::Error::other("setup thread panicked")))
}

fn open(path: &str, flags: libc::c_int) -> io::Result<OwnedFd> {
    let c = CString::new(path).expect("no NUL in a path of ours");
    // SAFETY: a valid C string; the descriptor is owned from here on.
    let fd = check(unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC) }, path)?;
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Writes a sysctl of the calling thread's namespace (e.g. `net/ipv4/tcp_no_metrics_save`).
pub fn sysctl(name: &str, value: &str) -> io::Result<()> {
    let path = format!("/proc/sys/{name}");
    std::fs::write(&path, value).map_err(|e| io::Error::new(e.kind(), format!("{path}: {e}")))
}

/// `struct ifreq`: an interface name, then a union of which we use flags and an address.
#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    data: [u8; 24],
}

impl IfReq {
    fn new(name: &str) -> IfReq {
        let mut r = IfReq {
            name: [0; libc::IFNAMSIZ],
            data: [0; 24],
        };
        r.name[..name.len()].copy_from_slice(name.as_bytes());
        r
    }

    fn set_flags(&mut self, flags: libc::c_short) {
        self.data[..2].copy_from_slice(&flags.to_ne_bytes());
    }

    fn flags(&self) -> libc::c_short {
        libc::c_short::from_ne_bytes([self.data[0], self.data[1]])
    }

    fn set_ipv4(&mut self, addr: std::net::Ipv4Addr) {
        let sin = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: 0,
            sin_addr: libc::in_addr {
                s_addr: u32::from(addr).to_be(),
            },
            sin_zero: [0; 8],
        };
        // SAFETY: sockaddr_in is 16 plain bytes; data has room for it.
        let bytes: [u8; 16] = unsafe { std::mem::transmute(sin) };
        self.data[..16].copy_from_slice(&bytes);
    }
}

fn ioctl(fd: RawFd, request: libc::Ioctl, req: &mut IfReq, what: &str) -> io::Result<()> {
    // SAFETY: req is a valid `struct ifreq` for these requests.
    check(unsafe { libc::ioctl(fd, request, req as *mut IfReq) }, what).map(drop)
}

/// A layer-3 TUN device, created in the calling thread's namespace, without packet
/// information or offloads (no `IFF_VNET_HDR`): the kernel hands over one IP packet per
/// read, segmented to the MTU. The descriptor is non-blocking.
pub fn tun(name: &str) -> io::Result<OwnedFd> {
    let fd = open("/dev/net/tun", libc::O_RDWR | libc::O_NONBLOCK)?;
    let mut req = IfReq::new(name);
    req.set_flags((libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short);
    ioctl(fd.as_raw_fd(), libc::TUNSETIFF, &mut req, "TUNSETIFF")?;
    Ok(fd)
}

/// Gives interface `name` the address `addr/prefix` and brings it up (the kernel adds the
/// route to the prefix through it). Runs in the calling thread's namespace.
pub fn configure(name: &str, addr: std::net::Ipv4Addr, prefix: u32) -> io::Result<()> {
    let sock = socket(libc::AF_INET, libc::SOCK_DGRAM)?;
    let fd = sock.as_raw_fd();
    let mut req = IfReq::new(name);
    req.set_ipv4(addr);
    ioctl(fd, libc::SIOCSIFADDR, &mut req, "SIOCSIFADDR")?;
    let mut req = IfReq::new(name);
    req.set_ipv4(std::net::Ipv4Addr::from(u32::MAX << (32 - prefix)));
    ioctl(fd, libc::SIOCSIFNETMASK, &mut req, "SIOCSIFNETMASK")?;
    let mut req = IfReq::new(name);
    ioctl(fd, libc::SIOCGIFFLAGS, &mut req, "SIOCGIFFLAGS")?;
    let flags = req.flags() | (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
    req.set_flags(flags);
    ioctl(fd, libc::SIOCSIFFLAGS, &mut req, "SIOCSIFFLAGS")
}

/// A non-blocking socket of the calling thread's namespace.
pub fn socket(domain: libc::c_int, kind: libc::c_int) -> io::Result<OwnedFd> {
    // SAFETY: plain socket(2); the descriptor is owned from here on.
    let fd = check(
        unsafe { libc::socket(domain, kind | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, 0) },
        "socket",
    )?;
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn sockaddr(addr: SocketAddrV4) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: addr.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*addr.ip()).to_be(),
        },
        sin_zero: [0; 8],
    }
}

const SOCKADDR_LEN: libc::socklen_t = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;

pub fn bind(fd: &OwnedFd, addr: SocketAddrV4) -> io::Result<()> {
    let sa = sockaddr(addr);
    // SAFETY: a valid sockaddr_in of the length given.
    let ret = unsafe { libc::bind(fd.as_raw_fd(), &sa as *const _ as *const libc::sockaddr, SOCKADDR_LEN) };
    check(ret, &format!("bind {addr}")).map(drop)
}

/// Starts connecting (non-blocking: `EINPROGRESS` is not an error; [`socket_error`] tells the outcome).
pub fn connect(fd: &OwnedFd, addr: SocketAddrV4) -> io::Result<()> {
    let sa = sockaddr(addr);
    // SAFETY: a valid sockaddr_in of the length given.
    let ret = unsafe { libc::connect(fd.as_raw_fd(), &sa as *const _ as *const libc::sockaddr, SOCKADDR_LEN) };
    if ret < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINPROGRESS) {
        return Ok(());
    }
    check(ret, &format!("connect {addr}")).map(drop)
}

pub fn listen(fd: &OwnedFd) -> io::Result<()> {
    // SAFETY: plain listen(2).
    check(unsafe { libc::listen(fd.as_raw_fd(), 4) }, "listen").map(drop)
}

/// Accepts a connection (non-blocking); `None` if none is waiting.
pub fn accept(fd: &OwnedFd) -> io::Result<Option<OwnedFd>> {
    // SAFETY: accept4 without an address; the descriptor is owned from here on.
    let ret = unsafe {
        libc::accept4(
            fd.as_raw_fd(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
        )
    };
    match would_block(ret as isize, "accept")? {
        None => Ok(None),
        Some(fd) => Ok(Some(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })),
    }
}

/// `Ok(None)` for `EAGAIN`, the value otherwise.
fn would_block(ret: isize, what: &str) -> io::Result<Option<usize>> {
    if ret >= 0 {
        return Ok(Some(ret as usize));
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EAGAIN) {
        return Ok(None);
    }
    Err(io::Error::new(e.kind(), format!("{what}: {e}")))
}

/// Reads what is there (non-blocking): `Ok(None)` if nothing is, `Ok(Some(0))` at the end.
pub fn read(fd: RawFd, buf: &mut [u8]) -> io::Result<Option<usize>> {
    // SAFETY: buf is valid for its length.
    would_block(unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) }, "read")
}

/// Writes what fits (non-blocking): `Ok(None)` if nothing does now.
pub fn write(fd: RawFd, buf: &[u8]) -> io::Result<Option<usize>> {
    // SAFETY: buf is valid for its length.
    would_block(unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) }, "write")
}

fn setsockopt(fd: &OwnedFd, level: libc::c_int, name: libc::c_int, value: &[u8], what: &str) -> io::Result<()> {
    // SAFETY: value is valid for its length.
    let ret = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            value.as_ptr().cast(),
            value.len() as libc::socklen_t,
        )
    };
    check(ret, what).map(drop)
}

/// Sets the socket's congestion control (`TCP_CONGESTION`); the error names what the kernel offers.
pub fn set_congestion_control(fd: &OwnedFd, name: &str) -> io::Result<()> {
    setsockopt(
        fd,
        libc::IPPROTO_TCP,
        libc::TCP_CONGESTION,
        name.as_bytes(),
        "TCP_CONGESTION",
    )
    .map_err(|e| {
        let offered =
            std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control").unwrap_or_default();
        io::Error::new(e.kind(), format!("{e}: this kernel offers {:?}", offered.trim()))
    })
}

/// Caps the segment size (`TCP_MAXSEG`), so that packets have the scenario's size.
pub fn set_max_segment(fd: &OwnedFd, bytes: u32) -> io::Result<()> {
    setsockopt(
        fd,
        libc::IPPROTO_TCP,
        libc::TCP_MAXSEG,
        &(bytes as libc::c_int).to_ne_bytes(),
        "TCP_MAXSEG",
    )
}

pub fn set_reuse_addr(fd: &OwnedFd) -> io::Result<()> {
    setsockopt(
        fd,
        libc::SOL_SOCKET,
        libc::SO_REUSEADDR,
        &1_i32.to_ne_bytes(),
        "SO_REUSEADDR",
    )
}

/// Plain C data that a socket option is read into: every bit pattern, all zeros included,
/// is a valid value.
///
/// # Safety
/// Implement it only for `repr(C)` structs of integers and for integers.
unsafe trait OptionValue: Copy {}
// SAFETY: an integer.
unsafe impl OptionValue for libc::c_int {}
// SAFETY: a repr(C) struct of integers.
unsafe impl OptionValue for libc::tcp_info {}

/// Reads socket option `name` at `level` (what the kernel fills of a `T`; the rest stays zero).
fn getsockopt<T: OptionValue>(fd: &OwnedFd, level: libc::c_int, name: libc::c_int, what: &str) -> io::Result<T> {
    // SAFETY: all zeros is a valid T (OptionValue).
    let mut value: T = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: value is valid for len bytes, and the kernel writes at most len.
    let ret = unsafe { libc::getsockopt(fd.as_raw_fd(), level, name, (&mut value as *mut T).cast(), &mut len) };
    check(ret, what)?;
    Ok(value)
}

/// The socket's pending error (`SO_ERROR`): how a non-blocking connect ended.
pub fn socket_error(fd: &OwnedFd) -> io::Result<()> {
    match getsockopt::<libc::c_int>(fd, libc::SOL_SOCKET, libc::SO_ERROR, "SO_ERROR")? {
        0 => Ok(()),
        e => Err(io::Error::from_raw_os_error(e)),
    }
}

/// What the kernel's TCP says of a connection (`TCP_INFO`, as `ss -ti` shows it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpInfo {
    /// Retransmitted segments over the connection's life (`tcpi_total_retrans`).
    pub retransmits: u64,
    /// Smoothed RTT and its variation, µs (`tcpi_rtt`, `tcpi_rttvar`).
    pub srtt_us: u32,
    pub rttvar_us: u32,
    /// Congestion window, segments (`tcpi_snd_cwnd`).
    pub cwnd: u32,
}

/// The connection's `TcpInfo` now.
pub fn tcp_info(fd: &OwnedFd) -> io::Result<TcpInfo> {
    let info: libc::tcp_info = getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_INFO, "TCP_INFO")?;
    Ok(TcpInfo {
        retransmits: info.tcpi_total_retrans as u64,
        srtt_us: info.tcpi_rtt,
        rttvar_us: info.tcpi_rttvar,
        cwnd: info.tcpi_snd_cwnd,
    })
}

/// Waits until one of `fds` is readable, or `timeout` passes (nanosecond resolution: `ppoll`).
pub fn wait_readable(fds: &[RawFd], timeout: Duration) -> io::Result<()> {
    wait(fds, libc::POLLIN, timeout)
}

/// Waits until `fd` is ready for `events` (`POLLIN`, `POLLOUT`), or `timeout` passes.
pub fn wait(fds: &[RawFd], events: libc::c_short, timeout: Duration) -> io::Result<()> {
    let mut polled: Vec<libc::pollfd> = fds.iter().map(|&fd| libc::pollfd { fd, events, revents: 0 }).collect();
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: polled and ts are valid for the call.
    let ret = unsafe { libc::ppoll(polled.as_mut_ptr(), polled.len() as libc::nfds_t, &ts, std::ptr::null()) };
    if ret < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
        return check(ret, "ppoll").map(drop);
    }
    Ok(())
}

/// Lets this thread's timed waits end within a microsecond of their time (the default slack
/// is 50 µs, a packet's time at 240 Mbit/s).
pub fn tight_timer_slack() {
    // SAFETY: prctl(PR_SET_TIMERSLACK) affects only the calling thread.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong) };
}

/// Puts the calling thread in the real-time class (`SCHED_FIFO` at `priority`): it then runs as
/// soon as it wakes, ahead of every ordinary thread on the machine, instead of waiting for the
/// scheduler's next turn (up to milliseconds on a busy machine). Refused without
/// `CAP_SYS_NICE` unless `RLIMIT_RTPRIO` allows `priority`.
pub fn set_real_time(priority: libc::c_int) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: param is valid; pid 0 is the calling thread (Linux schedules threads).
    let ret = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
    check(ret, "sched_setscheduler").map(drop)
}

/// The CPU time the calling thread has used.
pub fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is valid for clock_gettime.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// The CPU time the whole process has used (every thread: forwarder and endpoints).
pub fn process_cpu_time() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is valid for clock_gettime.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}
