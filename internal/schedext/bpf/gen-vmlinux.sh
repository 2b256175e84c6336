#!/usr/bin/env bash
# Regenerates vmlinux.h from the BTF of the VM test kernel (internal/vmtest's
# DebianCloud, cached in ~/.cache/tenon/vm by TENON_VMTEST=1 go test
# ./internal/vmtest). Needs zstd and bpftool (Debian packages of those names).
#
#   bash internal/schedext/bpf/gen-vmlinux.sh [vmlinuz]
#
# The image's payload is zstd-compressed; the ELF vmlinux inside carries
# .BTF, which bpftool prints as C. The result is committed (about 2.7 MB):
# the full header, not a trimmed one.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
img="${1:-${TENON_VM_CACHE:-$HOME/.cache/tenon/vm}/vmlinuz-7.2.13+deb14-cloud-amd64}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# The offset of the first zstd frame (magic 28 b5 2f fd).
off=$(LC_ALL=C grep -obUaP '\x28\xb5\x2f\xfd' "$img" | head -1 | cut -d: -f1)
[ -n "$off" ] || { echo "no zstd payload in $img" >&2; exit 1; }
tail -c +$((off + 1)) "$img" | zstd -dcq > "$tmp/vmlinux" 2>/dev/null || true
bpftool btf dump file "$tmp/vmlinux" format c > "$tmp/vmlinux.h"
grep -q 'struct sched_ext_ops {' "$tmp/vmlinux.h" || { echo "the kernel's BTF has no sched_ext_ops" >&2; exit 1; }
mv "$tmp/vmlinux.h" "$here/vmlinux.h"
echo "wrote $here/vmlinux.h"
