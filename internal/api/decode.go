package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"reflect"
	"slices"
	"strings"
)

// decode reads one JSON object from r into v, refusing anything but an
// object (null would leave v zero and pass for an empty request), unknown
// fields and trailing data. Errors wrap ErrBadRequest.
//
// The body is read whole, into a buffer sized from r's Size when it has
// one (the request's Content-Length, see sizedBody), and decoded in place
// (json.Unmarshal), so a body costs its length and its decoded strings: a
// json.Decoder's buffer, which grows by doubling, took about three times
// a large body more (bodies.go counts twice its length).
func decode(r io.Reader, v any) error {
	buf, err := readBody(r)
	if err != nil {
		return bodyErr("reading body", err)
	}
	if err := wantObject(buf); err != nil {
		return err
	}
	if err := knownFields(buf, v); err != nil {
		return err
	}
	if err := json.Unmarshal(buf, v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) && strings.Contains(se.Error(), "after top-level value") {
			return fmt.Errorf("%w: trailing data after the JSON object", ErrBadRequest)
		}
		return bodyErr("decoding JSON", err)
	}
	return nil
}

// readBody reads r whole: into a buffer of r's Size when it has one, else
// in chunks joined at the end (a buffer grown by doubling would take up to
// three times the body while it grows).
func readBody(r io.Reader) ([]byte, error) {
	if s, ok := r.(interface{ Size() int64 }); ok && s.Size() > 0 {
		var b bytes.Buffer
		b.Grow(int(s.Size()) + bytes.MinRead)
		_, err := b.ReadFrom(r)
		return b.Bytes(), err
	}
	var chunks [][]byte
	for {
		c := make([]byte, readChunk)
		n, err := io.ReadFull(r, c)
		chunks = append(chunks, c[:n])
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return bytes.Join(chunks, nil), nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// readChunk is the chunk readBody reads a body of unknown length in.
const readChunk = 256 << 10

// skipValue decodes any JSON value into nothing, without copying it.
type skipValue struct{}

func (*skipValue) UnmarshalJSON([]byte) error { return nil }

// knownFields fails on a key of the JSON object buf that names no field of
// the struct v points to, matched as encoding/json matches them (the json
// tag's name or the field's, ignoring case). The values are skipped.
func knownFields(buf []byte, v any) error {
	var keys map[string]skipValue
	if err := json.Unmarshal(buf, &keys); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) && strings.Contains(se.Error(), "after top-level value") {
			return fmt.Errorf("%w: trailing data after the JSON object", ErrBadRequest)
		}
		return bodyErr("decoding JSON", err)
	}
	names := jsonNames(reflect.TypeOf(v).Elem())
	for k := range keys {
		if !slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, k) }) {
			return fmt.Errorf("%w: decoding JSON: unknown field %q", ErrBadRequest, k)
		}
	}
	return nil
}

// jsonNames lists the JSON names of struct type t's exported fields.
func jsonNames(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		out = append(out, name)
	}
	return out
}

// bodyErr explains an error reading or decoding a request body.
func bodyErr(doing string, err error) error {
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return tooLarge(-1, mbe.Limit)
	case errors.Is(err, io.EOF):
		return fmt.Errorf("%w: empty body, want a JSON object", ErrBadRequest)
	}
	return fmt.Errorf("%w: %s: %v", ErrBadRequest, doing, err)
}

// wantObject checks that the first non-space byte of buf opens an object.
func wantObject(buf []byte) error {
	for _, c := range buf {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '{':
			return nil
		}
		return fmt.Errorf("%w: the body must be a JSON object ({...}), got one starting with %q", ErrBadRequest, c)
	}
	return fmt.Errorf("%w: empty body, want a JSON object", ErrBadRequest)
}

// DecodeCreateAgent parses and validates a POST /v1/agents body.
func DecodeCreateAgent(r io.Reader) (CreateAgentRequest, error) {
	var req CreateAgentRequest
	if err := decode(r, &req); err != nil {
		return req, err
	}
	for _, kv := range req.Env {
		if err := checkEnv(kv); err != nil {
			return req, err
		}
	}
	for p := range req.Files {
		if err := checkPath(p); err != nil {
			return req, err
		}
	}
	return req, nil
}

// DecodeExec parses and validates a POST /v1/agents/{id}/exec body.
func DecodeExec(r io.Reader) (ExecRequest, error) {
	var req ExecRequest
	if err := decode(r, &req); err != nil {
		return req, err
	}
	switch {
	case strings.TrimSpace(req.Command) == "":
		return req, fmt.Errorf("%w: \"command\" must not be empty", ErrBadRequest)
	case req.TimeoutS < 0 || req.TimeoutS > 7*24*3600 || req.TimeoutS != req.TimeoutS:
		return req, fmt.Errorf("%w: \"timeout_s\" must be in [0, 604800]", ErrBadRequest)
	case req.MemHintBytes < 0:
		return req, fmt.Errorf("%w: \"mem_hint_bytes\" must be >= 0", ErrBadRequest)
	case strings.ContainsRune(req.Command, 0) || strings.ContainsRune(req.Cwd, 0):
		return req, fmt.Errorf("%w: NUL byte in command or cwd", ErrBadRequest)
	case req.Cwd != "" && !path.IsAbs(req.Cwd):
		return req, fmt.Errorf("%w: \"cwd\" must be an absolute path in the sandbox (such as /workspace/%s), got %q",
			ErrBadRequest, strings.TrimPrefix(path.Clean(req.Cwd), "./"), req.Cwd)
	}
	for _, kv := range req.Env {
		if err := checkEnv(kv); err != nil {
			return req, err
		}
	}
	return req, nil
}

// DecodeWait parses and validates a POST /v1/agents/{id}/wait body.
func DecodeWait(r io.Reader) (WaitRequest, error) {
	var req WaitRequest
	if err := decode(r, &req); err != nil {
		return req, err
	}
	if req.State != "begin" && req.State != "end" {
		return req, fmt.Errorf("%w: \"state\" must be \"begin\" or \"end\", got %q", ErrBadRequest, req.State)
	}
	return req, nil
}

func checkEnv(kv string) error {
	k, _, ok := strings.Cut(kv, "=")
	if !ok || k == "" || strings.ContainsRune(kv, 0) {
		return fmt.Errorf("%w: env entry %q must be KEY=VALUE", ErrBadRequest, kv)
	}
	return nil
}

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, code int, v any) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		http.Error(w, `{"error":"encoding response"}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// writeError answers with the status matching err and its message.
func writeError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe), errors.Is(err, ErrTooLarge):
		code = http.StatusRequestEntityTooLarge
	case errors.Is(err, ErrBadRequest):
		code = http.StatusBadRequest
	case errors.Is(err, ErrBadPath):
		code = http.StatusBadRequest
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrNoFile):
		code = http.StatusNotFound
	case errors.Is(err, ErrConflict):
		code = http.StatusConflict
	case errors.Is(err, ErrUnauthorized):
		code = http.StatusUnauthorized
	case errors.Is(err, ErrShuttingDown), errors.Is(err, ErrBodiesBusy):
		code = http.StatusServiceUnavailable
	case errors.As(err, new(*QueueTimeoutError)):
		code = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "5")
	}
	writeJSON(w, code, Error{Error: err.Error()})
}
