#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs what xlatperf needs on Debian 12, then builds and installs the engine and the
# Python package. Run as root from anywhere; safe to run again (every step is idempotent).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
    echo "setup.sh: run as root (apt-get, hugepages, /usr/local)" >&2
    exit 1
fi

# No prompt may wait for an answer: CI has no standard input. tshark asks whether non-root
# users may capture; answer "no" up front.
export DEBIAN_FRONTEND=noninteractive
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections

# Another apt (unattended-upgrades, a second engineer's setup) may hold the dpkg lock: wait for
# it rather than fail.
APT_WAIT=(-o DPkg::Lock::Timeout=600)
apt-get "${APT_WAIT[@]}" update
# dpdk-dev: dpdk-testpmd, the peer bench/isa_rate.py measures the engine against.
# qemu-system-x86, busybox-static, kmod, cpio: the QEMU guest in which DPDK's real PCI drivers
# take emulated NICs through vfio-pci (tests/guest/README.md).
apt-get install -y "${APT_WAIT[@]}" -o Dpkg::Options::=--force-confdef \
    -o Dpkg::Options::=--force-confold \
    build-essential cmake ninja-build pkg-config \
    libdpdk-dev dpdk dpdk-dev nlohmann-json3-dev libgtest-dev googletest \
    iproute2 nftables iptables conntrack tayga tcpdump tshark ethtool \
    clang llvm libbpf-dev \
    python3-pip openssh-client \
    qemu-system-x86 busybox-static kmod cpio

# Daemons the lab runs in network namespaces of its own, installed only when missing, and then
# neither started nor enabled: this host's services stay as they were. sshd: for
# tests/e2e/test_remote_ssh.py (the engine on other tester hosts, docs/testers.md); BIND,
# Unbound and PowerDNS Recursor: the lab's DNS64 resolvers (lab kinds dns64-bind, dns64-unbound,
# dns64-pdns, docs/dns.md); NSD: their test zone's authoritative server with zone_server=nsd
# (it would otherwise listen on port 53 of every address of this host).
install_quietly() {   # BINARY PACKAGE SERVICE
    [ -x "$1" ] && return 0
    if [ ! -e /usr/sbin/policy-rc.d ]; then   # invoke-rc.d: start no service while installing
        printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
        chmod 755 /usr/sbin/policy-rc.d
        trap 'rm -f /usr/sbin/policy-rc.d' EXIT
    fi
    apt-get install -y "${APT_WAIT[@]}" -o Dpkg::Options::=--force-confdef \
        -o Dpkg::Options::=--force-confold "$2"
    if [ -d /run/systemd/system ]; then
        systemctl disable --quiet "$3" 2>/dev/null || true
    fi
}
install_quietly /usr/sbin/sshd openssh-server ssh.service
install_quietly /usr/sbin/named bind9 named.service
install_quietly /usr/sbin/unbound unbound unbound.service
install_quietly /usr/sbin/pdns_recursor pdns-recursor pdns-recursor.service
install_quietly /usr/sbin/nsd nsd nsd.service

# Hugepages for DPDK, where the kernel lets us: 512 x 2 MiB. Never lower a larger reservation;
# on failure the engine runs with --no-huge.
if [ -w /proc/sys/vm/nr_hugepages ] && [ "$(cat /proc/sys/vm/nr_hugepages)" -lt 512 ]; then
    echo 512 > /proc/sys/vm/nr_hugepages 2>/dev/null || true
fi
if ! grep -qs " /dev/hugepages hugetlbfs " /proc/mounts; then
    mkdir -p /dev/hugepages
    mount -t hugetlbfs nodev /dev/hugepages 2>/dev/null || true
fi
echo "setup.sh: hugepages reserved: $(cat /proc/sys/vm/nr_hugepages 2>/dev/null || echo 0)"

# The Python package with its test extras, editable so the tests run against this tree.
# python3 -m pip: the pip of the python3 that runs the tests (pyenv's, if there is one).
# PIP_BREAK_SYSTEM_PACKAGES: Debian's own python3 refuses pip installs without it (PEP 668).
PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --no-input --disable-pip-version-check \
    -e '.[test]'

# The engine: build, then install to /usr/local/bin/xlatperf-engine.
cmake -S engine -B engine/build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build engine/build
cmake --install engine/build
