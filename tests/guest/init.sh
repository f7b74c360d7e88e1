#!/bin/busybox sh
# SPDX-License-Identifier: BSD-3-Clause
# /init of the xlatperf test guest (tests/guest/README.md). Runs as PID 1 from the initramfs:
# loads the modules, mounts the host's / read-only over 9p under a tmpfs overlay, binds the
# Ethernet PCI devices to vfio-pci, runs the command the kernel command line names in a chroot
# of that root, and powers off. Kernel command line words it reads:
#   xlp_run=PATH        the script to run (a file in the share), as root, with /bin/sh
#   xlp_share=PATH      the host folder shared writable; mounted at the same path in the chroot
#   xlp_keep=A,B        PCI addresses left on their kernel driver (not bound to vfio-pci)
#   xlp_hugepages=N     2 MiB hugepages to reserve (default 256)
# The script's exit status is written to PATH-of-share/exit-status, its output to
# PATH-of-share/output.log (and the console).

/bin/busybox --install -s /bin
export PATH=/bin

log() { echo "xlp-guest: $*"; }
uptime_s() { cut -d' ' -f1 /proc/uptime; }

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
log "init at $(uptime_s) s"

RUN="" SHARE="" KEEP="" HUGEPAGES=256
for word in $(cat /proc/cmdline); do
    case "$word" in
        xlp_run=*) RUN="${word#xlp_run=}" ;;
        xlp_share=*) SHARE="${word#xlp_share=}" ;;
        xlp_keep=*) KEEP="${word#xlp_keep=}" ;;
        xlp_hugepages=*) HUGEPAGES="${word#xlp_hugepages=}" ;;
    esac
done

# /etc/modules.load (written when the image is built): one module a line, dependencies first,
# with its parameters (vfio_iommu_type1 allow_unsafe_interrupts=1: TCG's IOMMU has no
# interrupt remapping).
while read -r module params; do
    insmod "/lib/modules/$module" $params || log "insmod $module failed"
done < /etc/modules.load

# The root: the host's / read-only, writes kept in guest memory (tmpfs upper layer), so the
# guest runs the host's DPDK, Python and project build and can change nothing on the host.
mkdir -p /lower /rw /newroot
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,ro host /lower || log "9p host failed"
mount -t tmpfs -o size=512m tmpfs /rw
mkdir -p /rw/upper /rw/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /newroot ||
    log "overlay failed"
mount -t proc proc /newroot/proc
mount -t sysfs sysfs /newroot/sys
mount -t devtmpfs devtmpfs /newroot/dev
mkdir -p /newroot/dev/pts /newroot/dev/shm /newroot/dev/hugepages
mount -t devpts devpts /newroot/dev/pts
mount -t tmpfs tmpfs /newroot/dev/shm
# The host's /run holds the host's state (DPDK runtime files, lab state, locks): the guest starts
# with an empty one of its own. /tmp stays the host's (through the overlay: the guest's writes
# stay in the guest): the project may be checked out there (CI's clone), and the guest runs it.
mount -t tmpfs tmpfs /newroot/run

echo "$HUGEPAGES" > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
mount -t hugetlbfs nodev /newroot/dev/hugepages
log "hugepages: $(cat /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages) x 2 MiB"

# The writable share, at the host's own path, so paths in scripts mean the same on both sides.
if [ -n "$SHARE" ]; then
    mkdir -p "/newroot$SHARE"
    mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 share "/newroot$SHARE" ||
        log "9p share failed"
fi

# Every Ethernet controller (PCI class 0x0200) to vfio-pci, as dpdk-devbind.py would, except
# those named in xlp_keep (a test shows what happens to a NIC left on its kernel driver).
for dev in /sys/bus/pci/devices/*; do
    case "$(cat "$dev/class")" in 0x0200*) ;; *) continue ;; esac
    addr="${dev##*/}"
    case ",$KEEP," in
        *",$addr,"*) ;;
        *)
            echo vfio-pci > "$dev/driver_override"
            [ -e "$dev/driver" ] && echo "$addr" > "$dev/driver/unbind"
            echo "$addr" > /sys/bus/pci/drivers_probe
            ;;
    esac
    driver="none"
    [ -e "$dev/driver" ] && driver="$(basename "$(readlink "$dev/driver")")"
    log "nic $addr $(cat "$dev/vendor"):$(cat "$dev/device") driver=$driver" \
        "iommu_group=$(basename "$(readlink "$dev/iommu_group")")"
done

status=""
if [ -n "$RUN" ] && [ -n "$SHARE" ]; then
    log "running $RUN at $(uptime_s) s"
    # The host's environment as a login would have it; nothing of the initramfs' own.
    (
        chroot /newroot /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
            PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
            /bin/sh -c 'cd "$1" && exec /bin/sh "$2"' sh "$SHARE" "$RUN"
        echo $? > "/newroot$SHARE/exit-status"
    ) 2>&1 | tee "/newroot$SHARE/output.log"
    status="$(cat "/newroot$SHARE/exit-status" 2>/dev/null)"
else
    log "no xlp_run= or xlp_share= on the kernel command line"
fi
log "done at $(uptime_s) s, exit status ${status:-unknown}"
sync
umount "/newroot$SHARE" 2>/dev/null
poweroff -f
