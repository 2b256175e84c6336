package schedext

// The BPF object and its Go bindings (gate_x86_bpfel.go, .o) are committed,
// so a build needs no clang. To rebuild them after changing bpf/gate.bpf.c
// (Debian: apt-get install clang-19 llvm-19 libbpf-dev):
//
//	go generate ./internal/schedext
//
// bpf/vmlinux.h is generated from the pinned VM kernel's BTF by bpf/gen-vmlinux.sh.

//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -cc clang-19 -strip llvm-strip-19 -cflags "-O2 -g -Wall -Werror -fms-extensions -Wno-microsoft-anon-tag" -target amd64 -no-global-types -type gate_cg -go-package schedext -output-stem gate gate bpf/gate.bpf.c -- -I bpf
