package api

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
)

// decode reads one JSON object from r into v, refusing anything but an
// object (null would leave v zero and pass for an empty request), unknown
// fields and trailing data. Errors wrap ErrBadRequest.
func decode(r io.Reader, v any) error {
	br := bufio.NewReader(r)
	if err := wantObject(br); err != nil {
		return err
	}
	dec := json.NewDecoder(br)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return bodyErr("decoding JSON", err)
	}
	if dec.More() {
		return fmt.Errorf("%w: trailing data after the JSON object", ErrBadRequest)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: trailing data after the JSON object", ErrBadRequest)
	}
	return nil
}

// bodyErr explains an error reading or decoding a request body.
func bodyErr(doing string, err error) error {
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return fmt.Errorf("%w: body larger than %d bytes", ErrBadRequest, mbe.Limit)
	case errors.Is(err, io.EOF):
		return fmt.Errorf("%w: empty body, want a JSON object", ErrBadRequest)
	}
	return fmt.Errorf("%w: %s: %v", ErrBadRequest, doing, err)
}

// wantObject checks that the first non-space byte of br opens an object,
// leaving it unread.
func wantObject(br *bufio.Reader) error {
	for {
		c, err := br.ReadByte()
		if err != nil {
			return bodyErr("reading body", err)
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '{':
			return br.UnreadByte()
		}
		return fmt.Errorf("%w: the body must be a JSON object ({...}), got one starting with %q", ErrBadRequest, c)
	}
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
	case errors.As(err, &mbe):
		code = http.StatusRequestEntityTooLarge
	case errors.Is(err, ErrBadRequest):
		code = http.StatusBadRequest
		if strings.Contains(err.Error(), "body larger than") {
			code = http.StatusRequestEntityTooLarge
		}
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
