package main

import (
	"flag"
	"slices"
	"strings"
	"testing"
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
