#!/usr/bin/env bash
# Ensure a reflink-capable XFS scratch filesystem is mounted, backed by a
# sparse loop-mounted image file.  PostgreSQL 18's `file_copy_method = clone`
# needs this (or Btrfs) for constant-time `CREATE DATABASE ... STRATEGY FILE_COPY`.
#
# Usage (as root):
#   bench/scratch-xfs.sh [MOUNT_POINT [SIZE [IMAGE]]]   ensure mounted; prints mount point last
#   bench/scratch-xfs.sh --remove [MOUNT_POINT [IMAGE]] unmount and delete the image
#
# Environment (positional arguments take precedence):
#   CONSORT_XFS_MOUNT  mount point        (default /var/cache/consort-xfs)
#   CONSORT_XFS_SIZE   image size         (default 6G; anything `truncate -s` accepts)
#   CONSORT_XFS_IMAGE  backing image file (default /var/tmp/consort-xfs.img)
#
# Idempotent: if the mount point already holds a reflink-enabled XFS it just
# prints the mount point and exits 0; an existing image is mounted, never
# re-formatted.  Progress goes to stderr; the last stdout line is the mount point.
# On failure it exits non-zero with one line on stderr starting "scratch-xfs:".
#
# Caveats: the loop mount does not survive a reboot (re-run this script);
# containers and some CI runners have no loop devices or may not mount.
set -euo pipefail

die() { echo "scratch-xfs: $*" >&2; exit 1; }
log() { echo "scratch-xfs: $*" >&2; }

usage() {
  sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0" >&2
}

mode=ensure
case "${1:-}" in
  --remove) mode=remove; shift ;;
  -h|--help) usage; exit 0 ;;
  -*) die "unknown option '$1' (try --help)" ;;
esac

MNT=${CONSORT_XFS_MOUNT:-/var/cache/consort-xfs}
SIZE=${CONSORT_XFS_SIZE:-6G}
IMG=${CONSORT_XFS_IMAGE:-/var/tmp/consort-xfs.img}
if [[ $mode == ensure ]]; then
  MNT=${1:-$MNT}; SIZE=${2:-$SIZE}; IMG=${3:-$IMG}
  (( $# <= 3 )) || die "too many arguments (try --help)"
else
  MNT=${1:-$MNT}; IMG=${2:-$IMG}
  (( $# <= 2 )) || die "too many arguments (try --help)"
fi
[[ $MNT == /* ]] || die "mount point must be an absolute path: $MNT"
[[ $IMG == /* ]] || die "image path must be an absolute path: $IMG"
MNT=${MNT%/}; [[ -n $MNT ]] || die "refusing to use / as the mount point"

[[ $(id -u) -eq 0 ]] || die "must be run as root (mount/losetup need it); try: sudo $0${*:+ $*}"

is_mounted() { mountpoint -q -- "$1" 2>/dev/null; }

# ---------------------------------------------------------------- --remove
if [[ $mode == remove ]]; then
  if is_mounted "$MNT"; then
    src=$(findmnt -n -o SOURCE --target "$MNT")
    log "unmounting $MNT ($src)"
    umount -- "$MNT" || die "could not unmount $MNT (busy? stop PostgreSQL using it first)"
    # mount -o loop sets autoclear, but detach explicitly if it lingers.
    if [[ $src == /dev/loop* ]] && losetup "$src" >/dev/null 2>&1; then
      losetup -d "$src" 2>/dev/null || true
    fi
  fi
  if [[ -e $IMG ]]; then
    # Detach any leftover (unmounted) loop devices still backed by the image.
    while read -r dev; do
      [[ -n $dev ]] && losetup -d "$dev" 2>/dev/null || true
    done < <(losetup -j "$IMG" -O NAME -n 2>/dev/null || true)
    log "deleting $IMG"
    rm -f -- "$IMG"
  fi
  [[ -d $MNT ]] && rmdir -- "$MNT" 2>/dev/null || true
  log "removed"
  exit 0
fi

# ---------------------------------------------------------------- ensure
check_reflink() {  # $1 = mount point; succeeds if XFS with reflink=1
  [[ $(findmnt -n -o FSTYPE --target "$1") == xfs ]] || return 1
  xfs_info "$1" 2>/dev/null | grep -q 'reflink=1'
}

ensure_xfsprogs() {
  command -v mkfs.xfs >/dev/null && command -v xfs_info >/dev/null && return 0
  command -v apt-get >/dev/null || die "mkfs.xfs not found and apt-get unavailable; install xfsprogs manually"
  log "installing xfsprogs with apt-get"
  { DEBIAN_FRONTEND=noninteractive apt-get install -y -q xfsprogs ||
    { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q xfsprogs; }
  } >&2 || die "apt-get install xfsprogs failed"
  command -v mkfs.xfs >/dev/null || die "xfsprogs installed but mkfs.xfs still not on PATH"
}

if is_mounted "$MNT"; then
  fstype=$(findmnt -n -o FSTYPE --target "$MNT")
  [[ $fstype == xfs ]] || die "$MNT is already a mount point but is $fstype, not xfs"
  ensure_xfsprogs
  check_reflink "$MNT" || die "$MNT is XFS but reflink is not enabled (needs mkfs.xfs -m reflink=1)"
  chmod 0755 -- "$MNT"
  log "already mounted: $MNT ($(findmnt -n -o SOURCE --target "$MNT"))"
  echo "$MNT"
  exit 0
fi

# Loop device support (absent in most unprivileged containers).
if [[ ! -e /dev/loop-control ]]; then
  modprobe loop 2>/dev/null || true
  [[ -e /dev/loop-control ]] ||
    die "no loop devices: /dev/loop-control is missing (in a container? needs --privileged or host loop devices)"
fi
losetup -f >/dev/null 2>&1 ||
  die "no free loop device available (losetup -f failed; in a container without loop device access?)"

# Kernel XFS support.
if ! grep -qw xfs /proc/filesystems; then
  modprobe xfs 2>/dev/null || true
  grep -qw xfs /proc/filesystems || die "kernel has no XFS support (modprobe xfs failed)"
fi

ensure_xfsprogs

mkdir -p -- "$(dirname -- "$IMG")"
if [[ -e $IMG ]]; then
  [[ -f $IMG ]] || die "$IMG exists but is not a regular file"
  if [[ $(blkid -o value -s TYPE -- "$IMG" 2>/dev/null || true) != xfs ]]; then
    die "$IMG exists but does not contain XFS; remove it (or run --remove) first"
  fi
  log "reusing existing image $IMG"
else
  log "creating sparse ${SIZE} image $IMG"
  truncate -s "$SIZE" -- "$IMG" || { rm -f -- "$IMG"; die "could not create image $IMG of size $SIZE"; }
  if ! mkfs.xfs -q -m reflink=1 -L consort-xfs -- "$IMG" >&2; then
    rm -f -- "$IMG"
    die "mkfs.xfs -m reflink=1 failed on $IMG"
  fi
fi

mkdir -p -- "$MNT"
if ! err=$(mount -t xfs -o loop,noatime -- "$IMG" "$MNT" 2>&1); then
  die "mount -o loop $IMG $MNT failed: $(tr '\n' ' ' <<<"${err:-unknown error}")(in a container? loop mounts need privileges)"
fi
check_reflink "$MNT" || { umount -- "$MNT" || true; die "mounted $MNT but reflink is not enabled"; }
chmod 0755 -- "$MNT"   # so a non-root postgres user can traverse it
log "mounted $IMG on $MNT (xfs, reflink=1, $(df -h --output=size "$MNT" | tail -1 | tr -d ' '))"
echo "$MNT"
