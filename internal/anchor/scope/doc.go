// Package scope runs one tool invocation in its own memory scope: a child
// cgroup of the sandbox's cgroup that exists for the invocation only (the
// seed's arena T and its destroy intent).
//
// Placement. The tool must be in the scope before its first instruction, so
// that everything it and its descendants allocate is charged there:
//
//   - when every hierarchy of the layout is cgroup v2, the child is created
//     directly in the scope with clone3(CLONE_INTO_CGROUP) (Go's
//     SysProcAttr.UseCgroupFD);
//   - otherwise (v1 or hybrid hosts) the child is a gate trampoline,
//     `/bin/sh -c 'read -r _ <&3 || exit 125; exec "$@" 3<&-' tenon-scope
//     ARGV...`: the shell blocks on a pipe, the runner moves its pid into
//     the scope in every hierarchy (Group.AddProc) and only then writes the
//     line that lets it exec the tool. If the move fails the pipe is closed
//     unread and the tool never starts. The shell's own few pages stay
//     charged where the runner lives (v1 does not move charges with a
//     task); the tool's image and every allocation after exec are charged
//     to the scope. The runner, not the child, writes cgroup.procs, so the
//     child needs neither the cgroup file system nor the scope's path.
//
// Output. stdout and stderr are pipes read by the runner, which lives
// outside the scope; each stream keeps at most Request.OutputCap bytes and
// counts the rest, and the tool never blocks on a full pipe.
//
// Exit. When the tool's main process exits, whatever else is left in the
// scope is killed (the invocation's process tree ends with it), then the
// memory the scope still holds (page cache of files it wrote, tmpfs) is
// dropped and the scope removed: on v1 memory.force_empty then rmdir, on v2
// memory.reclaim then rmdir. Without force_empty a removed v1 memcg is not
// emptied: measured on Linux 6.18, a 200 MiB file written from a child
// group stays charged to the dying child (the parent's total_cache keeps
// 200 MiB, its own cache is 0) until the parent reclaims; force_empty on
// the child returned it within 0.3 s.
//
// Fast path. Trivial commands (ls, cd, pwd, echo, true, cat of one small
// file) run without a scope; Trivial is the pure classifier.
//
// The package owns the scope groups it creates and the processes it starts;
// it never touches the parent group beyond creating children in it.
package scope
