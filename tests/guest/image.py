# SPDX-License-Identifier: BSD-3-Clause
"""The guest's kernel and initramfs, built once and cached.

Debian's own kernel package (the newest linux-image-6.1.0-NN-amd64 that apt knows) is fetched
with `apt-get download` and unpacked with `dpkg-deb -x`; the initramfs holds busybox-static,
the modules the guest needs (with their dependencies, from the package's modules.dep) and
init.sh as /init. Everything lives in /var/cache/xlatperf-guest/RELEASE_VERSION/ (e.g.
6.1.0-56-amd64_6.1.192-2): a new kernel package gets a directory of its own, and the initramfs
is rebuilt when init.sh or the module list changes (initrd.stamp).

    python3 tests/guest/image.py      # builds (or finds) the image, prints its directory
"""

from __future__ import annotations

import fcntl
import gzip
import hashlib
import os
import pwd
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

CACHE = Path(os.environ.get("XLATPERF_GUEST_CACHE", "/var/cache/xlatperf-guest"))
INIT = Path(__file__).with_name("init.sh")
BUSYBOX = Path("/bin/busybox")   # from busybox-static: the initramfs has no libc

# What the guest loads (shared/docs/guest-nic.md), by module name; their dependencies come
# from modules.dep. virtio and 9p: the host's / and the share; overlay: a writable root;
# vfio with its IOMMU backend: DPDK's way to the NICs. The NIC drivers give a NIC left out of
# vfio-pci (xlp_keep) its kernel driver, as on a real host before dpdk-devbind.py.
MODULES = [
    "virtio_pci", "9pnet_virtio", "9p", "overlay",
    "vfio_iommu_type1", "vfio-pci",
    "e1000e", "vmxnet3", "virtio_net",
]
PARAMETERS = {"vfio_iommu_type1": "allow_unsafe_interrupts=1"}  # TCG's IOMMU: no IR


@dataclass(frozen=True)
class Image:
    kernel: Path
    initrd: Path
    release: str    # e.g. 6.1.0-56-amd64
    version: str    # the package's, e.g. 6.1.192-2


def run(*args: str, cwd: Path | None = None) -> str:
    proc = subprocess.run(args, capture_output=True, text=True, cwd=cwd)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} exited {proc.returncode}: {proc.stderr.strip()}")
    return proc.stdout


def newest_kernel_package() -> tuple[str, str]:
    """(package, version) of the newest linux-image-6.1.0-NN-amd64 in apt's lists."""
    names = re.findall(r"^(linux-image-6\.1\.0-(\d+)-amd64) ",
                       run("apt-cache", "search", "--names-only", r"^linux-image-6\.1\.0-[0-9]+-amd64$"),
                       re.MULTILINE)
    if not names:
        raise RuntimeError("apt-cache lists no linux-image-6.1.0-NN-amd64 (apt-get update?)")
    package = max(names, key=lambda name: int(name[1]))[0]
    version = re.search(r"^Version: (\S+)", run("apt-cache", "show", "--no-all-versions", package),
                        re.MULTILINE)
    return package, version.group(1)


def cached_images() -> list[Path]:
    return sorted(p for p in CACHE.glob("*/vmlinuz") if p.with_name("initrd.img").exists())


def guest_image() -> Image:
    """The cached image of the newest kernel package, built first if need be. Without apt's
    answer (offline), the newest image already in the cache."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two test runs: one builds, the other waits
        try:
            package, version = newest_kernel_package()
        except RuntimeError:
            if not cached_images():
                raise
            directory = cached_images()[-1].parent
            release, version = directory.name.split("_", 1)
            return Image(directory / "vmlinuz", directory / "initrd.img", release, version)
        release = package.removeprefix("linux-image-")
        directory = CACHE / f"{release}_{version}"
        directory.mkdir(exist_ok=True)
        deb = _download(package, version, directory)
        stamp = _stamp()
        if (not (directory / "vmlinuz").exists() or not (directory / "initrd.img").exists()
                or _read(directory / "initrd.stamp") != stamp):
            _build(deb, release, directory)
            (directory / "initrd.stamp").write_text(stamp)
        return Image(directory / "vmlinuz", directory / "initrd.img", release, version)


def _read(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def _stamp() -> str:
    """What the initramfs is made of besides the kernel: a change rebuilds it."""
    digest = hashlib.sha256(INIT.read_bytes())
    digest.update(repr((MODULES, PARAMETERS)).encode())
    digest.update(str(BUSYBOX.stat().st_size).encode())
    return digest.hexdigest()


def _download(package: str, version: str, directory: Path) -> Path:
    found = list(directory.glob(f"{package}_*.deb"))
    if found:
        return found[0]
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        # apt drops root to _apt for the download: let it write here, or it warns and
        # downloads as root.
        try:
            os.chown(tmp, pwd.getpwnam("_apt").pw_uid, -1)
        except KeyError:
            pass
        run("apt-get", "download", f"{package}={version}", cwd=Path(tmp))
        deb = next(Path(tmp).glob("*.deb"))
        target = directory / deb.name
        shutil.move(deb, target)
    return target


def _build(deb: Path, release: str, directory: Path) -> None:
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        unpacked, root = Path(tmp) / "kernel", Path(tmp) / "initramfs"
        run("dpkg-deb", "-x", str(deb), str(unpacked))
        # The package leaves modules.dep to its postinst: make it here.
        run("depmod", "-b", str(unpacked), release)
        modules = unpacked / "lib" / "modules" / release
        for sub in ("bin", "proc", "sys", "dev", "etc"):
            (root / sub).mkdir(parents=True)
        shutil.copy2(BUSYBOX, root / "bin" / "busybox")
        shutil.copy2(INIT, root / "init")
        os.chmod(root / "init", 0o755)
        lines = []
        for path in load_order(modules / "modules.dep", MODULES):
            (root / "lib" / "modules" / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(modules / path, root / "lib" / "modules" / path)
            name = Path(path).name.split(".ko")[0]
            lines.append(f"{path} {PARAMETERS.get(name, '')}".rstrip())
        (root / "etc" / "modules.load").write_text("\n".join(lines) + "\n")
        initrd = directory / "initrd.img.new"
        files = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
        archive = _cpio(root, files)
        with gzip.open(initrd, "wb") as out:
            out.write(archive)
        kernel = directory / "vmlinuz.new"
        shutil.copy2(unpacked / "boot" / f"vmlinuz-{release}", kernel)
        kernel.rename(directory / "vmlinuz")
        initrd.rename(directory / "initrd.img")


def _cpio(root: Path, files: list[str]) -> bytes:
    """The initramfs archive (newc, the format the kernel unpacks) of `files` under `root`."""
    proc = subprocess.run(["cpio", "-o", "-H", "newc", "--quiet"], cwd=root,
                          input="\n".join(files).encode() + b"\n", capture_output=True)
    if proc.returncode != 0:
        raise RuntimeError(f"cpio exited {proc.returncode}: {proc.stderr.decode().strip()}")
    return proc.stdout


def load_order(modules_dep: Path, wanted: list[str]) -> list[str]:
    """Paths (relative to the modules directory) of `wanted` and their dependencies, each after
    what it depends on. Module names match with - and _ alike, as modprobe's do."""
    depends: dict[str, list[str]] = {}
    by_name: dict[str, str] = {}
    for line in modules_dep.read_text().splitlines():
        path, _, deps = line.partition(":")
        depends[path] = deps.split()
        by_name[_name(path)] = path
    order: list[str] = []

    def visit(path: str) -> None:
        if path in order:
            return
        for dep in depends[path]:
            visit(dep)
        order.append(path)

    for name in wanted:
        if _name(name) not in by_name:
            raise RuntimeError(f"module {name} is not in {modules_dep} (built in?)")
        visit(by_name[_name(name)])
    return order


def _name(path: str) -> str:
    return Path(path).name.split(".ko")[0].replace("-", "_")


if __name__ == "__main__":
    image = guest_image()
    print(image.kernel.parent)
