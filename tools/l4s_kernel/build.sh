#!/bin/bash
# Builds the User-Mode Linux kernel of the L4S reference (issue 37): Debian's linux-source-6.1 with
# sch_dualpi2 added as a module, Debian's UML config, and the L4STeam iproute2's tc. See README.md.
#   tools/l4s_kernel/build.sh [WORK]      (default /work/l4s-kernel; about 10 minutes on 2 cores)
# Inputs (git directories, e.g. from `fetch github:rufusjoe/L4S` and `fetch github:L4STeam/iproute2`):
#   DUALPI2_GIT (sch_dualpi2.c at DUALPI2_COMMIT), IPROUTE2_GIT (at IPROUTE2_COMMIT).
set -euo pipefail
WORK=$(realpath -m "${1:-/work/l4s-kernel}")
DUALPI2_GIT=${DUALPI2_GIT:-/work/.mirror/rufusjoe+L4S/repo}
DUALPI2_COMMIT=${DUALPI2_COMMIT:-dbc1c50750585a0b095c07f6ff7816f0c3603a69}
IPROUTE2_GIT=${IPROUTE2_GIT:-/work/.mirror/L4STeam+iproute2/repo}
IPROUTE2_COMMIT=${IPROUTE2_COMMIT:-724c4fbed08c64d77b02d27fdbd00d6eeddaa5f9}
LOCALVERSION=-l4s
JOBS=${JOBS:-2}
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$WORK/linux-source-6.1
mkdir -p "$WORK"
[ -f /usr/src/linux-source-6.1.tar.xz ] || { echo "apt-get install -y linux-source-6.1 user-mode-linux" >&2; exit 1; }
[ -d "$SRC" ] || nice tar xJf /usr/src/linux-source-6.1.tar.xz -C "$WORK"

# sch_dualpi2: the L4STeam module (the one the L4STeam iproute2 speaks to), its netlink words from
# that iproute2's copy of the uapi header, and a Kconfig entry.
git -C "$DUALPI2_GIT" show "$DUALPI2_COMMIT:sch_dualpi2.c" > "$SRC/net/sched/sch_dualpi2.c"
patch -s -d "$SRC" -p1 < "$HERE/sch_dualpi2-6.1.patch"
if ! grep -q TCA_DUALPI2_UNSPEC "$SRC/include/uapi/linux/pkt_sched.h"; then
  header=$SRC/include/uapi/linux/pkt_sched.h
  { sed '$d' "$header"  # everything but the closing #endif
    git -C "$IPROUTE2_GIT" show "$IPROUTE2_COMMIT:include/uapi/linux/pkt_sched.h" |
      awk '/^\/\* DUALPI2 \*\//{p=1} /^#endif/{p=0} p'
    echo "#endif"; } > "$header.new" && mv "$header.new" "$header"
fi
grep -q NET_SCH_DUALPI2 "$SRC/net/sched/Makefile" ||
  echo 'obj-$(CONFIG_NET_SCH_DUALPI2)	+= sch_dualpi2.o' >> "$SRC/net/sched/Makefile"
grep -q NET_SCH_DUALPI2 "$SRC/net/sched/Kconfig" ||
  sed -i '/^config NET_SCH_PIE$/i config NET_SCH_DUALPI2\n\ttristate "Dual Queue PI Square (DUALPI2) scheduler"\n\thelp\n\t  The DualQ Coupled AQM of RFC 9332 (L4STeam module).\n' "$SRC/net/sched/Kconfig"

# Debian's UML config, plus DualPI2, less the VDE and pcap network transports (their libraries; the
# guest uses no network device), and of Debian's 929 modules only those the dumbbell loads (uml.MODULES)
# and IPv6: what is built in is Debian's, and the build takes minutes rather than most of an hour.
MODULES="VETH NET_SCH_HTB NET_SCH_PRIO NET_SCH_NETEM NET_SCH_INGRESS NET_CLS_U32 NET_ACT_GACT NET_SCH_RED
  NET_SCH_CHOKE NET_SCH_SFB NET_SCH_SFQ NET_SCH_CODEL NET_SCH_FQ_CODEL NET_SCH_PIE TCP_CONG_BBR TCP_CONG_DCTCP
  IPV6 NET_SCH_DUALPI2"
cd "$SRC"
zcat /usr/share/doc/user-mode-linux/config.gz | sed -E 's/^(CONFIG_[A-Z0-9_]+)=m$/# \1 is not set/' > .config
scripts/config --set-str LOCALVERSION "$LOCALVERSION" --disable LOCALVERSION_AUTO \
  --disable UML_NET_VDE --disable UML_NET_PCAP $(for m in $MODULES; do echo --module "$m"; done)
nice make ARCH=um olddefconfig > /dev/null
for m in $MODULES; do grep -q "^CONFIG_$m=m" .config || { echo "CONFIG_$m is not a module" >&2; exit 1; }; done
start=$(date +%s)
nice make ARCH=um -j"$JOBS" linux modules > "$WORK/build.log" 2>&1 || { tail -30 "$WORK/build.log"; exit 1; }
rm -rf "$WORK/root" && nice make ARCH=um INSTALL_MOD_PATH="$WORK/root" modules_install >> "$WORK/build.log" 2>&1
cp linux "$WORK/linux.uml"
echo "kernel $(make -s ARCH=um kernelrelease) built in $(( $(date +%s) - start )) s: $WORK/linux.uml, modules $WORK/root"

# tc from the L4STeam iproute2 (mainline's numbers dualpi2's options differently), its dualpi2
# statistics printed as JSON under `tc -j` (it writes them as text, which breaks the JSON).
if [ ! -x "$WORK/iproute2/tc/tc" ]; then
  rm -rf "$WORK/iproute2" && mkdir -p "$WORK/iproute2"
  git -C "$IPROUTE2_GIT" archive "$IPROUTE2_COMMIT" | tar x -C "$WORK/iproute2"
  patch -s -d "$WORK/iproute2" -p1 < "$HERE/iproute2-dualpi2-json.patch"
  (cd "$WORK/iproute2" && ./configure > /dev/null && nice make -j"$JOBS" SUBDIRS="lib tc" > /dev/null)
fi
"$WORK/iproute2/tc/tc" -V
