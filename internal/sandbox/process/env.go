package process

import (
	"errors"
	"os"
	"path/filepath"
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
