package agentcgroup

import (
	"html"
	"regexp"
	"strings"
)

// backgroundRules match, on the lowercased command with quoted text and
// the "&&", ">&", "&>", "<&" and "|&" operators removed, the forms that
// leave a process running after the command returns: a lone "&"; nohup,
// setsid, disown, daemon and daemonizing flags; detached containers,
// tmux and screen sessions; service managers; and servers (an agent
// starts one to test against, usually in the background).
var backgroundRules = []*regexp.Regexp{
	regexp.MustCompile(`&`),
	regexp.MustCompile(`\b(nohup|setsid|disown|daemon|daemonize|start-stop-daemon)\b|--daemon\b|--detach\b`),
	regexp.MustCompile(`\b(docker|podman) (run|start)\b[^;|]* (-d|-\w*d\w*)\b|\bcompose up\b[^;|]* -d\b`),
	regexp.MustCompile(`\btmux new(-session)?\b[^;|]* -d\b|\bscreen -\w*d\w*m`),
	regexp.MustCompile(`\bsystemctl (re)?start\b|\bservice \S+ (re)?start\b|\bpg_ctl\b[^;|]* start\b`),
	regexp.MustCompile(`\b(http\.server|simplehttpserver|runserver|flask run|uvicorn|gunicorn|hypercorn|jupyter (notebook|lab)|redis-server|mongod|nginx|httpd|memcached)\b|\bnpm (start|run (dev|serve|start))\b`),
}

// quoted matches single- and double-quoted strings (without escapes
// across quotes, as agents' commands write them).
var quoted = regexp.MustCompile(`'[^']*'|"(\\.|[^"\\])*"`)

// notBackground are the shell operators that contain "&" and do not
// start a background job.
var notBackground = strings.NewReplacer("&&", " ", ">&", " ", "&>", " ", "<&", " ", "|&", " ")

// StartsBackground reports whether a shell command leaves a process
// running after it returns, from the command text alone: a job put in the
// background with "&", nohup, setsid, disown or a daemon form, a detached
// container or session, a service start, or a server. Memory that stays
// after a command without such a form is not evidence of a process: it is
// page cache or the agent harness.
func StartsBackground(cmd string) bool {
	// Some trace records HTML-escape the command ("&amp;&amp;").
	c := html.UnescapeString(strings.ToLower(cmd))
	c = notBackground.Replace(quoted.ReplaceAllString(c, "''"))
	for _, re := range backgroundRules {
		if re.MatchString(c) {
			return true
		}
	}
	return false
}
