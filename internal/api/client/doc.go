// Package client is the Go client of tenon's serving API (package api):
// one typed method per endpoint, over the daemon's unix socket or over TCP
// with a bearer token.
package client
