package process

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// defaultEnv is the environment every action starts from, before the
// sandbox's Spec.Env and the request's Env.
var defaultEnv = []string{
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"HOME=/root",
	"LANG=C.UTF-8",
	"TERM=dumb",
}

// mergeEnv concatenates environments; a later KEY=VALUE replaces an earlier
// one of the same KEY, keeping the first one's position.
func mergeEnv(lists ...[]string) []string {
	var out []string
	index := make(map[string]int)
	for _, l := range lists {
		for _, kv := range l {
			k, _, _ := strings.Cut(kv, "=")
			if i, ok := index[k]; ok {
				out[i] = kv
				continue
			}
			index[k] = len(out)
			out = append(out, kv)
		}
	}
	return out
}

// validEnv reports whether every entry is KEY=VALUE with a non-empty KEY
// free of '=' and NUL.
func validEnv(env []string) bool {
	for _, kv := range env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" || strings.ContainsRune(kv, 0) {
			return false
		}
	}
	return true
}

// lookEnv returns the value of key in env ("" when unset).
func lookEnv(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

var errNotFound = errors.New("executable file not found in $PATH")

// lookPath resolves a program name against the PATH of env, as a shell
// would; names containing a slash are returned as they are.
func lookPath(file string, env []string) (string, error) {
	if strings.Contains(file, "/") {
		return file, nil
	}
	for _, dir := range filepath.SplitList(lookEnv(env, "PATH")) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, file)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errNotFound
}

// executorSettings are what the executor's environment adds to the
// sandbox's (heldio_linux.go says why it takes no signals and must not
// be written to by the kernel behind its back): the Go runtime's
// preemption signals off, and glibc's restartable sequences off (the
// kernel writes each thread's rseq area on its way back to user space and
// kills the thread with SIGSEGV when that write cannot fault its page in).
// Each is appended to the variable's value (so that it wins) with the
// variable's separator.
var executorSettings = []struct{ key, sep, value string }{
	{"GODEBUG", ",", "asyncpreemptoff=1"},
	{"GLIBC_TUNABLES", ":", "glibc.pthread.rseq=0"},
}

// executorEnv is env with executorSettings appended; actionEnv takes them
// off again.
func executorEnv(env []string) []string {
	out := slices.Clone(env)
	for _, s := range executorSettings {
		i := slices.IndexFunc(out, func(kv string) bool { return strings.HasPrefix(kv, s.key+"=") })
		if i < 0 {
			out = append(out, s.key+"="+s.value)
			continue
		}
		out[i] += s.sep + s.value
	}
	return out
}

// actionEnv is the executor's environment as executorEnv got it: each
// variable of executorSettings as the sandbox's spec set it, or none.
func actionEnv(env []string) []string {
	out := make([]string, 0, len(env))
next:
	for _, kv := range env {
		for _, s := range executorSettings {
			v, ok := strings.CutPrefix(kv, s.key+"=")
			if !ok {
				continue
			}
			if v == s.value {
				continue next
			}
			kv = s.key + "=" + strings.TrimSuffix(v, s.sep+s.value)
		}
		out = append(out, kv)
	}
	return out
}
