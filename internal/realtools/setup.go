package realtools

import (
	"fmt"
	"regexp"
	"strings"
)

// editableInstall is the one setup step the manifest states in words
// rather than as a command: an editable install without pip, "put
// <workspace>/SRC on sys.path via a .pth file in SITE and a BIN script
// calling MODULE:FUNC".
var editableInstall = regexp.MustCompile(`^pip-less editable install: put <workspace>/(\S+) on sys\.path via a \.pth file in (\S+) and a (\S+) script calling ([A-Za-z_][\w.]*):([A-Za-z_]\w*)$`)

// safeWord is what the pieces of editableInstall may hold to be pasted
// into a shell command unquoted ($HOME is expanded by the shell).
var safeWord = regexp.MustCompile(`^[\w./$-]+$`)

// SetupCommand turns the manifest's setup steps into one shell command run
// in the workspace: each step is a command, except an editable install
// stated in words (editableInstall), which becomes the commands it
// describes. Steps run in order and stop at the first failure.
func SetupCommand(steps []string, workspace string) (string, error) {
	cmds := make([]string, 0, len(steps))
	for _, s := range steps {
		if !strings.HasPrefix(s, "pip-less editable install:") {
			cmds = append(cmds, s)
			continue
		}
		m := editableInstall.FindStringSubmatch(s)
		if m == nil {
			return "", fmt.Errorf("%w: setup step %q: not of the form %s", ErrManifest, s, editableInstall)
		}
		src, site, bin, mod, fn := m[1], m[2], m[3], m[4], m[5]
		for _, w := range []string{src, site, bin} {
			if !safeWord.MatchString(w) {
				return "", fmt.Errorf("%w: setup step %q: %q is not a plain path", ErrManifest, s, w)
			}
		}
		script := fmt.Sprintf(`#!/usr/bin/python3\nimport sys\nfrom %s import %s\nsys.exit(%s())\n`, mod, fn, fn)
		cmds = append(cmds, fmt.Sprintf(`mkdir -p %s "$(dirname %s)" && echo %s/%s > %s/tenon-editable.pth && printf '%s' > %s && chmod +x %s`,
			site, bin, workspace, src, site, script, bin, bin))
	}
	return strings.Join(cmds, " && "), nil
}
