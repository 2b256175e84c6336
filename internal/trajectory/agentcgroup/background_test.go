package agentcgroup

import "testing"

// TestStartsBackground: command text -> whether it leaves a process running.
func TestStartsBackground(t *testing.T) {
	for cmd, want := range map[string]bool{
		"python -m myapp serve --port 8000 &":             true,  // trailing &
		"./server & sleep 2; curl localhost:8000":         true,  // & then more
		"nohup python worker.py > /tmp/log 2>&1":          true,  // nohup
		"setsid ./run.sh":                                 true,  // setsid
		"sleep 100 & disown":                              true,  // disown
		"dockerd --daemon":                                true,  // daemon flag
		"docker run -d -p 80:80 nginx:latest":             true,  // detached container
		"docker compose up --build -d":                    true,  // compose up -d
		"tmux new -s dev -d 'npm start'":                  true,  // tmux detached
		"screen -dmS srv ./serve":                         true,  // screen detached
		"service postgresql start":                        true,  // service start
		"systemctl restart redis":                         true,  // systemctl
		"cd /testbed && python3 -m http.server 9000":      true,  // http.server
		"python manage.py runserver":                      true,  // django runserver
		"npm run dev":                                     true,  // npm run dev
		"cd /testbed && python -m pytest tests -x":        false, // and-and
		"python -m pytest 2>&1 | tail -20":                false, // redirect 2>&1
		"make &> build.log":                               false, // redirect &>
		"make |& tee log":                                 false, // pipe |&
		`grep -n "a & b" file.py`:                         false, // & inside quotes
		`echo 'fish & chips'`:                             false, // & in single quotes
		"cat src/daemons.py":                              false, // daemon as a word part
		"git diff":                                        false, // plain command
		"pip install -e . -q":                             false, // pip install
		"docker run --rm alpine true":                     false, // docker without -d
		"pip install pytest &amp;&amp; python3 -m pytest": false, // html-escaped and-and
		"": false, // empty
	} {
		if got := StartsBackground(cmd); got != want {
			t.Errorf("StartsBackground(%q) = %v, want %v", cmd, got, want)
		}
	}
}
