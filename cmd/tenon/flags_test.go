package main

import (
	"errors"
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

// TestParseFlagsAnywhere: flags count wherever they come, before or after
// the arguments; "--" ends the flags; a command without arguments rejects
// a leftover one instead of ignoring the flags after it.
func TestParseFlagsAnywhere(t *testing.T) {
	tests := []struct {
		name     string
		noArgs   bool // parseFlags instead of parseFlagsArgs
		args     []string
		wantOut  string
		wantV    bool
		wantArgs []string
		wantErr  string // in the error or on stderr
	}{
		{name: "flags first", args: []string{"-o", "f", "DIR"}, wantOut: "f", wantArgs: []string{"DIR"}},
		{name: "flags after the argument", args: []string{"DIR", "-o", "f"}, wantOut: "f", wantArgs: []string{"DIR"}},
		{name: "flags between arguments", args: []string{"A", "--v", "B", "-o=f", "C"}, wantOut: "f", wantV: true, wantArgs: []string{"A", "B", "C"}},
		{name: "-- ends the flags", args: []string{"DIR", "--", "-o", "f"}, wantOut: "-", wantArgs: []string{"DIR", "-o", "f"}},
		{name: "-- first", args: []string{"--", "--v"}, wantOut: "-", wantArgs: []string{"--v"}},
		{name: "no arguments", args: []string{"--v"}, wantOut: "-", wantV: true},
		{name: "unknown flag after the argument", args: []string{"DIR", "--fast"}, wantErr: "flag provided but not defined: -fast"},
		{name: "no-argument command: flag after a stray argument still parsed, argument refused",
			noArgs: true, args: []string{"now", "--v"}, wantErr: `tenon test: unexpected argument "now"`},
		{name: "no-argument command: only flags", noArgs: true, args: []string{"--v", "-o", "f"}, wantOut: "f", wantV: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTestEnv()
			fs := newFlags(&env.cliEnv, "test", "DIR", "A test command.", "")
			out := fs.String("o", "-", "output")
			v := fs.Bool("v", false, "verbose")
			parse := parseFlagsArgs
			if tt.noArgs {
				parse = parseFlags
			}
			err := parse(&env.cliEnv, fs, tt.args)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("no error; args %q", fs.Args())
				}
				if msg := err.Error() + env.errOut.String(); !strings.Contains(msg, tt.wantErr) {
					t.Fatalf("error %q, want %q", msg, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v (stderr %q)", err, env.errOut.String())
			}
			if *out != tt.wantOut || *v != tt.wantV || !slices.Equal(fs.Args(), tt.wantArgs) {
				t.Errorf("-o %q -v %v args %q; want %q %v %q", *out, *v, fs.Args(), tt.wantOut, tt.wantV, tt.wantArgs)
			}
		})
	}
}

// TestParseFlagsHelp: -h anywhere before "--" prints the usage on stdout;
// after "--" it is an argument.
func TestParseFlagsHelp(t *testing.T) {
	env := newTestEnv()
	fs := newFlags(&env.cliEnv, "test", "DIR", "A test command.", "")
	if err := parseFlagsArgs(&env.cliEnv, fs, []string{"DIR", "-h"}); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("err %v, want flag.ErrHelp", err)
	}
	if !strings.Contains(env.out.String(), "Usage: tenon test [flags] DIR") {
		t.Errorf("stdout %q lacks the usage", env.out.String())
	}
	env = newTestEnv()
	fs = newFlags(&env.cliEnv, "test", "DIR", "A test command.", "")
	if err := parseFlagsArgs(&env.cliEnv, fs, []string{"--", "-h"}); err != nil || !slices.Equal(fs.Args(), []string{"-h"}) {
		t.Errorf("after --: err %v args %q, want nil [-h]", err, fs.Args())
	}
}
