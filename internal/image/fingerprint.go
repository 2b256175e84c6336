package image

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
)

// LabelFingerprint is the image label holding the fingerprint of the plan
// it was built from: a build whose plan has the same fingerprint as the
// existing image is skipped.
const LabelFingerprint = "tenon.image.fingerprint"

// Fingerprint identifies what WriteTar would produce without reading file
// contents: every entry's name, type, mode, link target and synthesized
// data, each host file's size and modification time, and the import
// changes. Upgrading a host package changes it.
func (p *Plan) Fingerprint() (string, error) {
	h := sha256.New()
	for _, c := range changes {
		fmt.Fprintf(h, "change %s\n", c)
	}
	for _, e := range p.entries {
		if err := fingerprintEntry(h, e); err != nil {
			return "", fmt.Errorf("fingerprinting %s: %w", e.name, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func fingerprintEntry(w io.Writer, e entry) error {
	fmt.Fprintf(w, "%q %v %d %q %q", e.name, e.dir, uint32(e.mode), e.link, e.data)
	if e.host != "" && !e.dir && e.link == "" {
		fi, err := os.Stat(e.host)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, " %d %d", fi.Size(), fi.ModTime().UnixNano())
	}
	_, err := io.WriteString(w, "\n")
	return err
}
