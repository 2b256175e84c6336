package agentcgroup

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// errTruncated means a JSON array ended before its closing bracket; the
// elements before were decoded.
var errTruncated = errors.New("truncated")

// decodeArray reads a JSON array from dec element by element, calling each
// with every complete element. A file cut off inside the array returns
// errTruncated after the complete elements; anything that is not an array
// is an error.
func decodeArray(dec *json.Decoder, each func(i int, raw json.RawMessage)) error {
	if err := expectDelim(dec, '['); err != nil {
		return err
	}
	for i := 0; dec.More(); i++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return truncated(err)
		}
		each(i, raw)
	}
	if _, err := dec.Token(); err != nil {
		return truncated(err)
	}
	return nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if errors.Is(err, io.EOF) {
		return errors.New("empty file")
	} else if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("want %q, found %v", want, tok)
	}
	return nil
}

// truncated maps an unexpected end of input to errTruncated.
func truncated(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return errTruncated
	}
	return err
}
