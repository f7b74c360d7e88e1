#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The fair peer for the sender benchmarks (BENCHMARKS.md, issue 29): DPDK built from Debian's
# source package with the engine's own flags (-O3, -march=native), its testpmd, and the engine
# linked statically against that same DPDK (XLP_DPDK_STATIC), so that testpmd and the engine
# run the same driver code. Only what the benchmarks use is built (testpmd; the null, ring and
# vdev drivers): about 12 minutes on 2 cores.
#
#     bash bench/native_dpdk.sh [WORKDIR]        (default /var/tmp/xlatperf-native-dpdk)
#
# then, for example:
#     python3 bench/isa_rate.py --rounds 12 --testpmd debian=dpdk-testpmd \
#         --testpmd native=WORKDIR/testpmd --engine debian-dpdk=engine/build/xlatperf-engine \
#         --engine native-dpdk=WORKDIR/xlatperf-engine
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
work="${1:-/var/tmp/xlatperf-native-dpdk}"
prefix="$work/install"
mkdir -p "$work"
cd "$work"

# Debian's source of the DPDK the engine is built against (deb-src enabled once).
if ! ls -d dpdk-*/ >/dev/null 2>&1; then
    if ! apt-get source --print-uris dpdk >/dev/null 2>&1; then
        sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
            > /etc/apt/sources.list.d/xlatperf-deb-src.sources
        apt-get update -q
    fi
    apt-get install -y -q meson python3-pyelftools libsystemd-dev
    apt-get source -q dpdk
fi
src="$(ls -d "$work"/dpdk-*/ | head -1)"

# Debian's python3 (meson's own); buildtype release is -O3, cpu_instruction_set native.
if [ ! -f "$prefix/lib/x86_64-linux-gnu/pkgconfig/libdpdk.pc" ]; then
    PATH=/usr/bin:$PATH meson setup "$work/build" "$src" --prefix="$prefix" -Dbuildtype=release \
        -Dcpu_instruction_set=native -Denable_apps=test-pmd \
        -Denable_drivers=net/null,net/ring,bus/vdev,mempool/ring -Dtests=false -Denable_docs=false -Dexamples=
    PATH=/usr/bin:$PATH ninja -C "$work/build" install
fi
ln -sf "$work/build/app/dpdk-testpmd" "$work/testpmd"

PKG_CONFIG_PATH="$prefix/lib/x86_64-linux-gnu/pkgconfig" cmake -S "$here/engine" -B "$work/engine" \
    -DXLP_DPDK_STATIC=ON -DXLP_TESTS=OFF
cmake --build "$work/engine" -j2
ln -sf "$work/engine/xlatperf-engine" "$work/xlatperf-engine"
echo "native DPDK: $work/testpmd, $work/xlatperf-engine"
