package api

import "errors"

var (
	// ErrNotFound means no agent has the requested id.
	ErrNotFound = errors.New("api: no such agent")
	// ErrNoFile means the requested workspace file does not exist.
	ErrNoFile = errors.New("api: no such file")
	// ErrConflict means the request names something that exists in a form
	// it cannot act on (a directory where a file is written).
	ErrConflict = errors.New("api: conflict")
	// ErrBadRequest means a request body or parameter was malformed.
	ErrBadRequest = errors.New("api: bad request")
	// ErrTooLarge means a request body was larger than Config.MaxBodyBytes
	// (413).
	ErrTooLarge = errors.New("api: request body too large")
	// ErrBadPath means a workspace path was absolute, escaped the workspace
	// or crossed a symlink leading outside it.
	ErrBadPath = errors.New("api: path outside the workspace")
	// ErrShuttingDown means the server is draining and takes no new work.
	ErrShuttingDown = errors.New("api: server shutting down")
	// ErrBodiesBusy means too many large request bodies are in flight
	// (Config.BodyMemory); the request may be sent again shortly.
	ErrBodiesBusy = errors.New("api: too many large request bodies in flight: retry in a second")
	// ErrNoToken means a TCP listener was requested without a bearer token.
	ErrNoToken = errors.New("api: a TCP listener needs a bearer token (--token or TENON_TOKEN)")
	// ErrUnauthorized means the bearer token was missing or wrong.
	ErrUnauthorized = errors.New("api: missing or wrong bearer token")
)
