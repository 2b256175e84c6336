package swap

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

var testUUID = [16]byte{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0x4d, 0xef, 0x81, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef}

func TestHeaderRoundTrip(t *testing.T) {
	tests := []struct {
		name     string
		size     int64
		pageSize int
		label    string
		lastPage uint32
		wantErr  error
	}{
		{name: "64 MiB 4 KiB pages", size: 64 << 20, pageSize: 4096, label: Label, lastPage: 16383},
		{name: "partial page ignored", size: 64<<20 + 100, pageSize: 4096, label: Label, lastPage: 16383},
		{name: "64 KiB pages", size: 1 << 30, pageSize: 65536, label: "x", lastPage: 16383},
		{name: "too small", size: 9 * 4096, pageSize: 4096, wantErr: ErrBadSize},
		{name: "bad page size", size: 1 << 20, pageSize: 1000, wantErr: ErrBadSize},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := Header(tt.size, tt.pageSize, tt.label, testUUID)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Header error = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil || len(h) != tt.pageSize {
				t.Fatalf("Header = %d bytes, %v", len(h), err)
			}
			got, err := ParseHeader(bytes.NewReader(h))
			want := HeaderInfo{PageSize: tt.pageSize, Version: 1, LastPage: tt.lastPage, UUID: testUUID, Label: tt.label}
			if err != nil || got != want {
				t.Fatalf("ParseHeader = %+v, %v; want %+v", got, err, want)
			}
		})
	}
	if _, err := Header(1<<20, 4096, "a label longer than sixteen", testUUID); err == nil {
		t.Fatal("Header accepted a 27-byte label")
	}
}

func TestParseHeaderNoMagic(t *testing.T) {
	for _, in := range [][]byte{nil, make([]byte, 100), make([]byte, 65536)} {
		if _, err := ParseHeader(bytes.NewReader(in)); !errors.Is(err, ErrNoHeader) {
			t.Fatalf("ParseHeader(%d zero bytes) = %v, want ErrNoHeader", len(in), err)
		}
	}
}

// TestHeaderMatchesMkswap compares Header with util-linux mkswap byte for byte.
func TestHeaderMatchesMkswap(t *testing.T) {
	mkswap, err := exec.LookPath("mkswap")
	if err != nil {
		t.Skip("mkswap (util-linux) not installed: cannot cross-check the swap header")
	}
	const size = 1 << 20
	img := filepath.Join(t.TempDir(), "swap.img")
	if err := os.WriteFile(img, make([]byte, size), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(mkswap, "-L", Label, "-U", "01234567-89ab-4def-8123-456789abcdef", "-p", "4096", img).CombinedOutput()
	if err != nil {
		t.Fatalf("mkswap: %v\n%s", err, out)
	}
	b, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := Header(size, 4096, Label, testUUID)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b[:4096], ours) {
		t.Fatalf("Header differs from mkswap's first page:\nmkswap % x\nours   % x", b[1024:1100], ours[1024:1100])
	}
}
