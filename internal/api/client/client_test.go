package client

import "testing"

func TestFilePathEscapesEverything(t *testing.T) {
	tests := []struct{ name, path, want string }{
		{name: "plain", path: "a.txt", want: "/v1/agents/ag-1/files/a%2Etxt"},
		{name: "nested", path: "src/main.go", want: "/v1/agents/ag-1/files/src%2Fmain%2Ego"},
		{name: "dot-dot kept for the server to judge", path: "../x", want: "/v1/agents/ag-1/files/%2E%2E%2Fx"},
		{name: "absolute", path: "/etc/passwd", want: "/v1/agents/ag-1/files/%2Fetc%2Fpasswd"},
		{name: "space", path: "my file", want: "/v1/agents/ag-1/files/my%20file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := filePath("ag-1", tt.path); got != tt.want {
				t.Errorf("filePath(%q) = %q, want %q", tt.path, got, tt.want)
			}
		})
	}
}

func TestNewTCPBase(t *testing.T) {
	tests := []struct{ name, addr, want string }{
		{name: "host:port", addr: "127.0.0.1:7878", want: "http://127.0.0.1:7878"},
		{name: "url with slash", addr: "http://127.0.0.1:7878/", want: "http://127.0.0.1:7878"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NewTCP(tt.addr, "t").base; got != tt.want {
				t.Errorf("base = %q, want %q", got, tt.want)
			}
		})
	}
}
