//! Packet captures: the packets a link transmits (and, if asked, those its queue
//! drops) as libpcap files that Wireshark and tshark read, with IPv4 and TCP/UDP
//! headers synthesised from the simulated packets, so that their conversations,
//! TCP sequence graphs and retransmission analysis work.
//!
//! The file is libpcap 2.4 with nanosecond timestamps (magic `0xa1b23c4d`, written
//! little-endian) and link type `LINKTYPE_RAW` (each record an IPv4 packet). A
//! packet is stamped when its first bit goes on the link (a drop: when it is
//! dropped). The payload is not simulated, so only the headers are captured, as
//! `tcpdump -s` would keep them: a record's captured length is its headers', its
//! original length the IPv4 packet's.
//!
//! The headers, from the packet:
//! - IPv4: addresses `10.0.0.0` + node id; protocol TCP or UDP by the flow's type;
//!   the ECN field from the codepoint (RFC 3168 §5: ECT(0) `10`, CE `11`); TTL 64
//!   less the routers crossed; DF set; the checksum computed.
//! - ports: both [`PORT_BASE`] + flow id, so `tcp.port == 10003` is flow 3.
//! - a data packet's size on the wire is its IPv4 packet (payload = size − headers);
//!   an ACK is 40 bytes of headers plus its SACK option.
//! - TCP: sequence and ACK numbers in bytes (packet number × the flow's payload
//!   per data packet, modulo 2^32) from an initial sequence number 0 on both
//!   sides; the receiver sends no data, so data carries ACK 0; ACK flag always,
//!   ECE on ACKs echoing CE; SACK blocks as option 5 (RFC 2018 §3) after two
//!   NOPs; window 65535. CWR is not set: packets do not carry it.
//! - checksums (TCP, UDP) are those of the headers with an all-zero payload.
//!
//! Under `aqmlab emulate` the packets are real: a record holds the real packet's
//! IPv4 header and its TCP header with its options (or its UDP header), as the
//! endpoint's kernel wrote them ([`Frame::captured`]); only the ECN field is the
//! simulated packet's, since a queue may have marked it on the way.

use crate::error::ScenarioError;
use crate::net::Network;
use crate::packet::{Ecn, Packet, PacketKind, MAX_SACK_BLOCKS};
use crate::time::{Time, NANOS_PER_SEC};
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// libpcap's magic number for nanosecond timestamps.
const MAGIC_NANOS: u32 = 0xa1b2_3c4d;
/// libpcap's link type of records that are bare IPv4 or IPv6 packets.
const LINKTYPE_RAW: u32 = 101;
/// Most bytes captured of a packet: its headers only (IPv4 and TCP with options fit:
/// 20 + 60 bytes, or 60 + 60 with IPv4 options).
const SNAP: usize = 128;
const SNAPLEN: u32 = SNAP as u32;
const IPV4_HEADER: usize = 20;
const TCP_HEADER: usize = 20;
const UDP_HEADER: usize = 8;
/// Two NOPs, kind and length, then 8 bytes per block (RFC 2018 §3).
const SACK_OPTION_MAX: usize = 4 + 8 * MAX_SACK_BLOCKS;
const _: () = assert!(
    IPV4_HEADER + TCP_HEADER + SACK_OPTION_MAX <= SNAP,
    "synthesised headers fit a record"
);
/// Both ports of flow `f` are `PORT_BASE + f` (flows number at most `scenario::MAX_FLOWS`).
pub const PORT_BASE: u16 = 10_000;
const TTL: u8 = 64;
const PROTO_TCP: u8 = 6;
const PROTO_UDP: u8 = 17;
const TCP_ACK: u8 = 0x10;
const TCP_ECE: u8 = 0x40;

/// How one flow's packets look on the wire.
#[derive(Clone, Copy, Debug)]
pub struct FlowWire {
    /// TCP (data and ACKs) rather than UDP.
    pub tcp: bool,
    /// TCP payload bytes of one data packet: sequence numbers count in these.
    pub segment: u32,
}

impl FlowWire {
    /// A flow of `packet_size`-byte data packets.
    pub fn new(tcp: bool, packet_size: u32) -> Self {
        FlowWire {
            tcp,
            segment: packet_size.saturating_sub((IPV4_HEADER + TCP_HEADER) as u32),
        }
    }
}

/// A packet's headers as captured: `bytes[..len]`, and its IPv4 packet's total length.
#[derive(Clone)]
pub struct Frame {
    bytes: [u8; SNAP],
    len: usize,
    total_len: u16,
}

impl Frame {
    pub fn headers(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    pub fn total_len(&self) -> u16 {
        self.total_len
    }

    /// The headers of `p`, a packet of a flow whose packets look like `wire`.
    pub fn of(p: &Packet, wire: FlowWire) -> Frame {
        let mut f = Frame {
            bytes: [0; SNAP],
            len: IPV4_HEADER,
            total_len: 0,
        };
        let port = PORT_BASE.wrapping_add(p.flow as u16).to_be_bytes();
        let transport = if wire.tcp {
            f.tcp(p, wire.segment, port)
        } else {
            f.udp(p, port)
        };
        f.ipv4(p, if wire.tcp { PROTO_TCP } else { PROTO_UDP });
        let pseudo = pseudo_header_sum(&f.bytes[12..20], f.bytes[9], f.total_len as usize - IPV4_HEADER);
        let checksum = match internet_checksum(pseudo, &f.bytes[IPV4_HEADER..f.len]) {
            // RFC 768: a computed UDP checksum of 0 is sent as all ones (0 means "none").
            0 if !wire.tcp => 0xffff,
            c => c,
        };
        f.bytes[transport..transport + 2].copy_from_slice(&checksum.to_be_bytes());
        f
    }

    /// The headers of a real IPv4 packet (`aqmlab emulate`): its IPv4 header, then its
    /// TCP header with the options or its UDP header, as far as the packet and [`SNAP`]
    /// allow. `packet` is the whole packet: its length is the original length.
    pub fn captured(packet: &[u8]) -> Frame {
        let ihl = packet.first().map_or(0, |b| usize::from(b & 0x0f) * 4);
        let transport = match packet.get(9) {
            Some(&PROTO_TCP) => packet.get(ihl + 12).map_or(TCP_HEADER, |b| usize::from(b >> 4) * 4),
            Some(&PROTO_UDP) => UDP_HEADER,
            _ => 0,
        };
        let len = (ihl + transport).min(packet.len()).min(SNAP);
        let mut f = Frame {
            bytes: [0; SNAP],
            len,
            total_len: packet.len().min(usize::from(u16::MAX)) as u16,
        };
        f.bytes[..len].copy_from_slice(&packet[..len]);
        f
    }

    /// Sets the IPv4 header's ECN field to `ecn` (and its checksum anew) if it differs.
    pub fn set_ecn(&mut self, ecn: Ecn) {
        if self.len >= IPV4_HEADER && self.bytes[1] & 0b11 != ecn_bits(ecn) {
            set_ipv4_ecn(&mut self.bytes[..self.len], ecn);
        }
    }

    /// Writes the TCP header after the IPv4 one; returns where its checksum goes.
    fn tcp(&mut self, p: &Packet, segment: u32, port: [u8; 2]) -> usize {
        let in_bytes = |packets: u64| (packets.wrapping_mul(u64::from(segment))) as u32;
        let (seq, ack) = match p.kind {
            PacketKind::Data => (in_bytes(p.seq), 0),
            PacketKind::Ack => (0, in_bytes(p.seq)),
        };
        let blocks = &p.sack[..usize::from(p.sack_len).min(MAX_SACK_BLOCKS)];
        let options = if blocks.is_empty() { 0 } else { 4 + 8 * blocks.len() };
        let h = &mut self.bytes[IPV4_HEADER..IPV4_HEADER + TCP_HEADER + options];
        h[0..2].copy_from_slice(&port);
        h[2..4].copy_from_slice(&port);
        h[4..8].copy_from_slice(&seq.to_be_bytes());
        h[8..12].copy_from_slice(&ack.to_be_bytes());
        h[12] = (((TCP_HEADER + options) / 4) as u8) << 4;
        h[13] = TCP_ACK | if p.ece { TCP_ECE } else { 0 };
        h[14..16].copy_from_slice(&u16::MAX.to_be_bytes());
        if !blocks.is_empty() {
            h[20..24].copy_from_slice(&[1, 1, 5, (2 + 8 * blocks.len()) as u8]);
            for (i, &(start, end)) in blocks.iter().enumerate() {
                let at = 24 + 8 * i;
                h[at..at + 4].copy_from_slice(&in_bytes(start).to_be_bytes());
                h[at + 4..at + 8].copy_from_slice(&in_bytes(end).to_be_bytes());
            }
        }
        self.len += TCP_HEADER + options;
        self.total_len = (p.size as usize).max(self.len).min(usize::from(u16::MAX)) as u16;
        IPV4_HEADER + 16
    }

    /// Writes the UDP header after the IPv4 one; returns where its checksum goes.
    fn udp(&mut self, p: &Packet, port: [u8; 2]) -> usize {
        self.len += UDP_HEADER;
        self.total_len = (p.size as usize).max(self.len).min(usize::from(u16::MAX)) as u16;
        let h = &mut self.bytes[IPV4_HEADER..IPV4_HEADER + UDP_HEADER];
        h[0..2].copy_from_slice(&port);
        h[2..4].copy_from_slice(&port);
        h[4..6].copy_from_slice(&(self.total_len - IPV4_HEADER as u16).to_be_bytes());
        IPV4_HEADER + 6
    }

    /// Writes the IPv4 header (after the transport header, whose length it needs).
    fn ipv4(&mut self, p: &Packet, protocol: u8) {
        let routers_crossed = p.hop.saturating_sub(1).min(u16::from(TTL - 1)) as u8;
        let h = &mut self.bytes[..IPV4_HEADER];
        h[0] = 0x45; // version 4, 5 words
        h[2..4].copy_from_slice(&self.total_len.to_be_bytes());
        h[6] = 0x40; // don't fragment
        h[8] = TTL - routers_crossed;
        h[9] = protocol;
        h[12..16].copy_from_slice(&node_address(p.src));
        h[16..20].copy_from_slice(&node_address(p.dst));
        set_ipv4_ecn(h, p.ecn);
    }
}

/// The ECN field's bits for `ecn` (RFC 3168 §5).
fn ecn_bits(ecn: Ecn) -> u8 {
    match ecn {
        Ecn::NotEct => 0b00,
        Ecn::Ect0 => 0b10,
        Ecn::Ect1 => 0b01,
        Ecn::Ce => 0b11,
    }
}

/// Sets the ECN field of the IPv4 header that `packet` starts with, and the header's
/// checksum anew (RFC 1071). `packet` holds at least the whole header.
pub fn set_ipv4_ecn(packet: &mut [u8], ecn: Ecn) {
    let ihl = usize::from(packet[0] & 0x0f) * 4;
    packet[1] = (packet[1] & !0b11) | ecn_bits(ecn);
    packet[10..12].fill(0);
    let checksum = internet_checksum(0, &packet[..ihl]);
    packet[10..12].copy_from_slice(&checksum.to_be_bytes());
}

/// Node `id`'s IPv4 address, `10.0.0.0 + id`.
fn node_address(id: u32) -> [u8; 4] {
    (0x0a00_0000 | (id & 0x00ff_ffff)).to_be_bytes()
}

/// The ones'-complement sum of the TCP/UDP pseudo header (RFC 793 §3.1, RFC 768).
fn pseudo_header_sum(addresses: &[u8], protocol: u8, length: usize) -> u32 {
    ones_complement_sum(addresses) + u32::from(protocol) + length as u32
}

fn ones_complement_sum(bytes: &[u8]) -> u32 {
    bytes
        .chunks(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)])))
        .sum()
}

/// RFC 1071: the ones' complement of the ones'-complement sum of `bytes` plus `initial`.
fn internet_checksum(initial: u32, bytes: &[u8]) -> u16 {
    let mut sum = initial + ones_complement_sum(bytes);
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// A libpcap file being written: the file header, then one record per packet.
/// A write error is kept (and later records skipped) until [`PcapWriter::flush`].
pub struct PcapWriter<W: Write> {
    out: W,
    error: Option<io::Error>,
}

impl<W: Write> PcapWriter<W> {
    pub fn new(mut out: W) -> io::Result<Self> {
        let mut header = [0u8; 24];
        header[0..4].copy_from_slice(&MAGIC_NANOS.to_le_bytes());
        header[4..6].copy_from_slice(&2u16.to_le_bytes());
        header[6..8].copy_from_slice(&4u16.to_le_bytes());
        // thiszone and sigfigs stay 0
        header[16..20].copy_from_slice(&SNAPLEN.to_le_bytes());
        header[20..24].copy_from_slice(&LINKTYPE_RAW.to_le_bytes());
        out.write_all(&header)?;
        Ok(PcapWriter { out, error: None })
    }

    /// Appends `frame`, stamped `at`.
    pub fn write(&mut self, frame: &Frame, at: Time) {
        if self.error.is_some() {
            return;
        }
        let headers = frame.headers();
        let mut record = [0u8; 16 + SNAP];
        // Times are at most 1e18 ns (time::MAX_SECONDS): the seconds fit in 32 bits.
        record[0..4].copy_from_slice(&((at / NANOS_PER_SEC) as u32).to_le_bytes());
        record[4..8].copy_from_slice(&((at % NANOS_PER_SEC) as u32).to_le_bytes());
        record[8..12].copy_from_slice(&(headers.len() as u32).to_le_bytes());
        record[12..16].copy_from_slice(&u32::from(frame.total_len()).to_le_bytes());
        record[16..16 + headers.len()].copy_from_slice(headers);
        if let Err(e) = self.out.write_all(&record[..16 + headers.len()]) {
            self.error = Some(e);
        }
    }

    /// Writes out what is buffered; the first write error, if any.
    pub fn flush(&mut self) -> io::Result<()> {
        match self.error.take() {
            Some(e) => Err(e),
            None => self.out.flush(),
        }
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

/// The capture files of one link: what it transmits, and optionally what its queue drops.
pub struct LinkCapture {
    sent: CaptureFile,
    dropped: Option<CaptureFile>,
}

struct CaptureFile {
    path: PathBuf,
    writer: PcapWriter<BufWriter<File>>,
}

impl CaptureFile {
    fn create(path: PathBuf) -> io::Result<Self> {
        let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display()));
        let file = File::create(&path).map_err(named)?;
        let writer = PcapWriter::new(BufWriter::new(file)).map_err(named)?;
        Ok(CaptureFile { path, writer })
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer
            .flush()
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", self.path.display())))
    }
}

impl LinkCapture {
    /// Creates `<stem>.pcap` (and `<stem>.drops.pcap` with `drops`) in `dir`.
    pub fn create(dir: &Path, stem: &str, drops: bool) -> io::Result<Self> {
        Ok(LinkCapture {
            sent: CaptureFile::create(dir.join(format!("{stem}.pcap")))?,
            dropped: drops
                .then(|| CaptureFile::create(dir.join(format!("{stem}.drops.pcap"))))
                .transpose()?,
        })
    }

    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        std::iter::once(&self.sent)
            .chain(&self.dropped)
            .map(|f| f.path.as_path())
    }

    pub fn on_tx(&mut self, frame: &Frame, at: Time) {
        self.sent.writer.write(frame, at);
    }

    pub fn on_drop(&mut self, frame: &Frame, at: Time) {
        if let Some(f) = &mut self.dropped {
            f.writer.write(frame, at);
        }
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.sent.flush()?;
        self.dropped.as_mut().map_or(Ok(()), CaptureFile::flush)
    }
}

/// A link's name as a file name: `->` becomes `-`, and any character other than
/// ASCII letters, digits, `.`, `_` and `-` becomes `_` (`L->R` is `L-R`).
pub fn file_stem(link: &str) -> String {
    link.replace("->", "-")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// How many link names an unknown-link error lists before "…".
const LINKS_LISTED: usize = 12;

/// The links `simulation.pcap` names (by name, `L->R`, or by file name, `L-R`),
/// with their file stems; errors name the entry (`simulation.pcap[1]`).
pub fn resolve_links(names: &[String], net: &Network) -> Result<Vec<(u32, String)>, ScenarioError> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let mut by_name: HashMap<&str, u32> = HashMap::new();
    for (i, l) in net.links.iter().enumerate() {
        by_name.insert(&l.name, i as u32);
    }
    let stems: Vec<String> = net.links.iter().map(|l| file_stem(&l.name)).collect();
    let mut by_stem: HashMap<&str, u32> = HashMap::new();
    for (i, stem) in stems.iter().enumerate().rev() {
        by_stem.insert(stem, i as u32);
    }
    let mut chosen: Vec<(u32, String)> = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let field = format!("simulation.pcap[{i}]");
        let Some(&link) = by_name.get(name.as_str()).or_else(|| by_stem.get(name.as_str())) else {
            let listed: Vec<&str> = net.links.iter().take(LINKS_LISTED).map(|l| l.name.as_str()).collect();
            let more = net.links.len().saturating_sub(LINKS_LISTED);
            let tail = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            return Err(ScenarioError::new(
                field,
                format!("unknown link {name:?} (links: {}{tail})", listed.join(", ")),
            ));
        };
        let stem = &stems[link as usize];
        if let Some(&(other, _)) = chosen.iter().find(|(_, s)| s == stem) {
            let (name, other) = (&net.links[link as usize].name, &net.links[other as usize].name);
            let message = if name == other {
                format!("link {name:?} is listed twice")
            } else {
                format!("link {name:?} would be written to {stem}.pcap, as {other:?} is")
            };
            return Err(ScenarioError::new(field, message));
        }
        chosen.push((link, stem.clone()));
    }
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data_packet(seq: u64, size: u32) -> Packet {
        Packet {
            flow: 3,
            src: 8,
            dst: 9,
            size,
            seq,
            ecn: Ecn::Ce,
            hop: 2,
            ..Default::default()
        }
    }

    /// A header is correct when the ones'-complement sum over it (checksum included) is all ones.
    fn sums_to_all_ones(initial: u32, bytes: &[u8]) -> bool {
        internet_checksum(initial, bytes) == 0
    }

    fn be32(b: &[u8]) -> u32 {
        u32::from_be_bytes(b.try_into().unwrap())
    }

    #[test]
    fn rfc1071_example_sums_as_the_rfc_says() {
        // RFC 1071 §3: the bytes 00 01 f2 03 f4 f5 f6 f7 sum to ddf2, whose complement is 220d.
        assert_eq!(
            internet_checksum(0, &[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]),
            !0xddf2
        );
    }

    #[test]
    fn a_tcp_data_packet_has_valid_ipv4_and_tcp_headers() {
        let wire = FlowWire::new(true, 1000);
        let frame = Frame::of(&data_packet(5, 1000), wire);
        let h = frame.headers();
        assert_eq!(h.len(), 40);
        assert_eq!(frame.total_len(), 1000, "the simulated size is the IPv4 packet");
        assert_eq!(u16::from_be_bytes([h[2], h[3]]), 1000);
        assert!(sums_to_all_ones(0, &h[..20]), "IPv4 header checksum");
        assert_eq!(h[1] & 0b11, 0b11, "CE");
        assert_eq!(h[8], 63, "one router crossed");
        assert_eq!(
            (h[9], &h[12..16], &h[16..20]),
            (6, &[10, 0, 0, 8][..], &[10, 0, 0, 9][..])
        );
        assert_eq!(u16::from_be_bytes([h[20], h[21]]), 10_003);
        assert_eq!(be32(&h[24..28]), 5 * 960, "sequence number in payload bytes");
        assert_eq!(h[32] >> 4, 5, "no options");
        // The TCP checksum covers a pseudo header with the segment's length (960 bytes of zeros).
        assert!(sums_to_all_ones(pseudo_header_sum(&h[12..20], 6, 980), &h[20..40]));
    }

    #[test]
    fn an_ack_carries_its_sack_blocks_in_bytes_and_grows_by_the_option() {
        let ack = Packet {
            kind: PacketKind::Ack,
            size: 40,
            seq: 10,
            ece: true,
            sack: [(12, 14), (16, 17), (0, 0)],
            sack_len: 2,
            hop: 1,
            ..Default::default()
        };
        let frame = Frame::of(&ack, FlowWire::new(true, 1040));
        let h = frame.headers();
        assert_eq!(h.len(), 20 + 20 + 20);
        assert_eq!(frame.total_len(), 60, "headers only: no payload");
        assert!(sums_to_all_ones(0, &h[..20]));
        assert_eq!(h[8], 64);
        assert_eq!(
            (be32(&h[24..28]), be32(&h[28..32])),
            (0, 10_000),
            "ACK 10 packets of 1000 bytes"
        );
        assert_eq!(h[32] >> 4, 10, "data offset: 40 bytes");
        assert_eq!(h[33], TCP_ACK | TCP_ECE);
        assert_eq!(&h[40..44], &[1, 1, 5, 18]);
        let blocks: Vec<u32> = h[44..60].chunks(4).map(be32).collect();
        assert_eq!(blocks, [12_000, 14_000, 16_000, 17_000]);
        assert!(sums_to_all_ones(pseudo_header_sum(&h[12..20], 6, 40), &h[20..60]));
    }

    #[test]
    fn a_udp_packet_has_a_udp_header_with_its_length() {
        let frame = Frame::of(&data_packet(0, 210), FlowWire::new(false, 210));
        let h = frame.headers();
        assert_eq!((h.len(), frame.total_len(), h[9]), (28, 210, 17));
        assert_eq!(u16::from_be_bytes([h[24], h[25]]), 190);
        assert!(sums_to_all_ones(0, &h[..20]));
        assert!(sums_to_all_ones(pseudo_header_sum(&h[12..20], 17, 190), &h[20..28]));
    }

    #[test]
    fn the_file_has_a_nanosecond_header_and_records_of_headers() {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        w.write(
            &Frame::of(&data_packet(1, 1000), FlowWire::new(true, 1000)),
            3 * NANOS_PER_SEC + 7,
        );
        w.flush().unwrap();
        let bytes = w.into_inner();
        assert_eq!(&bytes[..4], &[0x4d, 0x3c, 0xb2, 0xa1]);
        let le = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        assert_eq!((le(16), le(20)), (SNAPLEN, 101));
        assert_eq!((le(24), le(28), le(32), le(36)), (3, 7, 40, 1000));
        assert_eq!(bytes.len(), 24 + 16 + 40);
    }

    /// A real TCP segment: 20 bytes of IPv4, 32 of TCP (the timestamp option), 100 of payload.
    fn real_segment() -> Vec<u8> {
        let mut p = vec![0u8; 152];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&152u16.to_be_bytes());
        p[8] = 64;
        p[9] = PROTO_TCP;
        p[12..20].copy_from_slice(&[198, 18, 1, 1, 198, 18, 2, 1]);
        let checksum = internet_checksum(0, &p[..20]);
        p[10..12].copy_from_slice(&checksum.to_be_bytes());
        p[32] = 8 << 4;
        p[52..].fill(0xaa);
        p
    }

    #[test]
    fn a_real_packet_is_captured_as_its_headers_with_the_options() {
        let segment = real_segment();
        let frame = Frame::captured(&segment);
        assert_eq!(frame.headers(), &segment[..52], "IPv4 and TCP with options, no payload");
        assert_eq!(frame.total_len(), 152);
        let mut udp = segment.clone();
        udp[9] = PROTO_UDP;
        assert_eq!(Frame::captured(&udp).headers().len(), 28);
        assert_eq!(
            Frame::captured(&segment[..30]).headers().len(),
            30,
            "a truncated packet as far as it goes"
        );
    }

    #[test]
    fn marking_a_captured_packet_keeps_its_header_checksum_right() {
        let mut frame = Frame::captured(&real_segment());
        frame.set_ecn(Ecn::NotEct);
        assert_eq!(
            frame.headers(),
            &real_segment()[..52],
            "unchanged when the field is already right"
        );
        frame.set_ecn(Ecn::Ce);
        let h = frame.headers();
        assert_eq!(h[1] & 0b11, 0b11);
        assert!(sums_to_all_ones(0, &h[..20]));
        assert_eq!(&h[20..], &real_segment()[20..52], "the TCP header is untouched");
    }

    #[test]
    fn link_names_become_file_names() {
        assert_eq!(file_stem("L->R"), "L-R");
        assert_eq!(file_stem("src12->L"), "src12-L");
        assert_eq!(file_stem("a b/c->d"), "a_b_c-d");
    }
}
