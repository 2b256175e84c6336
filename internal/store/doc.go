// Package store keeps tenon's durable state in an embedded bbolt database:
// recovery records (what a torn-down sandbox needs to be rebuilt), the
// agent registry (which logical agents exist and whether their sandbox is
// resident) and measured actions (what the daemon's predictor learns from).
//
// Every write is one bbolt update transaction, which bbolt fsyncs before it
// returns: once PutRecord returns nil the record survives a crash. Values
// are JSON objects carrying a "v" version field; a value with an unknown
// version is refused with ErrUnknownVersion rather than misread.
//
// Records of one agent are kept in generation order; a record's generation
// must exceed every earlier one of the same agent.
//
// The package owns only its database file.
package store
