package main

import (
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestListFlag(t *testing.T) {
	tests := []struct {
		name string
		def  []string
		args []string
		want []string
	}{
		{"unset, no default", nil, nil, nil},
		{"unset keeps the default", []string{"eager", "tenon"}, nil, []string{"eager", "tenon"}},
		{"comma list replaces the default", []string{"eager", "tenon"}, []string{"--l", "gate, static-4"}, []string{"gate", "static-4"}},
		{"repeated uses add up", []string{"eager"}, []string{"--l", "a,b", "--l", "c"}, []string{"a", "b", "c"}},
		{"blank items dropped", nil, []string{"--l", " a,, ,b,"}, []string{"a", "b"}},
		{"empty value clears the default", []string{"eager"}, []string{"--l", ""}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			l := newListFlag(tt.def...)
			fs.Var(l, "l", "a list")
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(l.items, tt.want) {
				t.Errorf("items %q, want %q", l.items, tt.want)
			}
			if got := l.String(); got != strings.Join(tt.want, ",") {
				t.Errorf("String() %q", got)
			}
		})
	}
}

func TestListFlagInts(t *testing.T) {
	tests := []struct {
		name    string
		value   string
		want    []int
		wantErr string
	}{
		{"counts", "100, 200,5000", []int{100, 200, 5000}, ""},
		{"zero", "4,0", nil, `--n: "0" is not a positive integer`},
		{"word", "four", nil, `--n: "four" is not a positive integer`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newListFlag()
			if err := l.Set(tt.value); err != nil {
				t.Fatal(err)
			}
			got, err := l.ints("--n")
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("%v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// TestListFlagHelp: the flag's help shows the default list.
func TestListFlagHelp(t *testing.T) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	var b strings.Builder
	fs.SetOutput(&b)
	fs.Var(newListFlag("eager", "tenon"), "policy", "comma-separated `policies` to compare")
	fs.PrintDefaults()
	if want := "-policy policies\n    \tcomma-separated policies to compare (default eager,tenon)"; !strings.Contains(b.String(), want) {
		t.Errorf("help %q lacks %q", b.String(), want)
	}
}

// TestTimeoutFlag: --action-timeout defaults to auto (the app's 0), takes
// a duration, and 0 turns the timeout off (the app's negative).
func TestTimeoutFlag(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    time.Duration
		str     string
		wantErr bool
	}{
		{name: "default is auto", want: 0, str: "auto"},
		{name: "explicit auto", args: []string{"--t", "auto"}, want: 0, str: "auto"},
		{name: "a duration", args: []string{"--t", "90s"}, want: 90 * time.Second, str: "1m30s"},
		{name: "zero is none", args: []string{"--t", "0"}, want: -1, str: "0s"},
		{name: "negative", args: []string{"--t", "-5s"}, wantErr: true},
		{name: "not a duration", args: []string{"--t", "soon"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			var f timeoutFlag
			fs.Var(&f, "t", "a timeout")
			err := fs.Parse(tt.args)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parse: %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if got := f.config(); got != tt.want || f.String() != tt.str {
				t.Errorf("config %v String %q, want %v %q", got, f.String(), tt.want, tt.str)
			}
		})
	}
}
