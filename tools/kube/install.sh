#!/usr/bin/env bash
# Puts the control plane that internal/kube's end-to-end tests run against
# into a cache directory, once: kube-apiserver, kube-scheduler and kubelet
# built from this module (k8s.io/kubernetes at KUBE_VERSION; about 9, 4.5
# and 6 minutes on 2 cores, one after the other)
# and etcd from Debian trixie's etcd-server package (downloaded with a
# private apt sources list, checksum pinned; nothing is installed on the
# host), and agent-sandbox's controller (built from ./agentsandbox, its
# own module) and Sandbox CRD (from the module sigs.k8s.io/agent-sandbox
# v0.5.6, pinned: the proxy refuses its version list).
# Idempotent: present files are kept. Prints the directory.
#
#   tools/kube/install.sh            # into ~/.cache/tenon/kube/<KUBE_VERSION>
#   TENON_KUBE_ASSETS=dir tools/kube/install.sh
set -euo pipefail
cd "$(dirname "$0")"

KUBE_VERSION=v1.37.2
ETCD_DEB=etcd-server_3.5.16-4_amd64.deb
ETCD_DEB_SHA256=0875921bb0d023f2af9b8e15cdfbe417a03e65731345fb832c40f9c2dd72967b
SANDBOX_MODULE=sigs.k8s.io/agent-sandbox@v0.5.6
SANDBOX_CRD=agents.x-k8s.io_sandboxes.yaml
SANDBOX_CRD_SHA256=9e60ea33d214c74588f3d07b7f606121fe0544df05d0e7310ceec1267c5887f4
dir="${TENON_KUBE_ASSETS:-$HOME/.cache/tenon/kube/$KUBE_VERSION}"
mkdir -p "$dir"

# build_kube NAME: builds k8s.io/kubernetes/cmd/NAME at KUBE_VERSION into
# $dir/NAME unless it is there.
build_kube() {
  [ -x "$dir/$1" ] && return
  echo "building $1 $KUBE_VERSION into $dir" >&2
  local start minor
  start=$(date +%s)
  minor=${KUBE_VERSION#v1.}; minor=${minor%%.*}
  go build -trimpath -ldflags "-s -w \
    -X k8s.io/component-base/version.gitVersion=$KUBE_VERSION \
    -X k8s.io/component-base/version.gitMajor=1 \
    -X k8s.io/component-base/version.gitMinor=$minor" \
    -o "$dir/$1.partial" "k8s.io/kubernetes/cmd/$1"
  mv "$dir/$1.partial" "$dir/$1"
  echo "built $1 in $(( $(date +%s) - start )) s" >&2
}
# kube-apiserver: about 9 minutes cold on 2 cores, 170 MB. kube-scheduler
# (the default scheduler): about 4.5 minutes after kube-apiserver's build,
# which leaves most of its packages in Go's build cache; 81 MB. kubelet:
# about 6 minutes after those two, 92 MB.
build_kube kube-apiserver
build_kube kube-scheduler
build_kube kubelet

if [ ! -x "$dir/agent-sandbox-controller" ]; then
  echo "building agent-sandbox's controller into $dir" >&2
  start=$(date +%s)
  (cd agentsandbox && go build -trimpath -ldflags "-s -w" \
    -o "$dir/agent-sandbox-controller.partial" sigs.k8s.io/agent-sandbox/cmd/agent-sandbox-controller)
  mv "$dir/agent-sandbox-controller.partial" "$dir/agent-sandbox-controller"
  echo "built agent-sandbox-controller in $(( $(date +%s) - start )) s" >&2
fi

if [ ! -x "$dir/etcd" ]; then
  echo "downloading $ETCD_DEB from Debian trixie into $dir" >&2
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial" "$tmp/parts"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" >"$tmp/sources.list"
  apt=(-o "Dir::Etc::SourceList=$tmp/sources.list" -o "Dir::Etc::SourceParts=$tmp/parts"
       -o "Dir::State::Lists=$tmp/lists" -o "Dir::Cache=$tmp/cache" -o "Dir::State::status=/dev/null"
       -o "APT::Sandbox::User=root")
  apt-get -qq "${apt[@]}" update
  pkg=${ETCD_DEB%%_*}; ver=${ETCD_DEB#*_}; ver=${ver%_*}
  (cd "$tmp" && apt-get -qq "${apt[@]}" download "$pkg=$ver")
  echo "$ETCD_DEB_SHA256  $tmp/$ETCD_DEB" | sha256sum -c --quiet
  dpkg-deb -x "$tmp/$ETCD_DEB" "$tmp/x"
  install -m 0755 "$tmp/x/usr/bin/etcd" "$dir/etcd"
fi
if [ ! -f "$dir/crds/$SANDBOX_CRD" ]; then
  mod=$(go mod download -json "$SANDBOX_MODULE" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  echo "$SANDBOX_CRD_SHA256  $mod/k8s/crds/$SANDBOX_CRD" | sha256sum -c --quiet
  mkdir -p "$dir/crds"
  cp "$mod/k8s/crds/$SANDBOX_CRD" "$dir/crds/$SANDBOX_CRD"
fi
echo "$dir"
