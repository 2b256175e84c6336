package policy

import "errors"

// Sentinel errors.
var (
	// ErrUnknown means ParseSpec (or Resolve, Build) was given a name no
	// registered policy answers to; the error text lists the valid names.
	ErrUnknown = errors.New("policy: unknown policy")
	// ErrBadOption means a policy name or option has an invalid value, such
	// as "static-0".
	ErrBadOption = errors.New("policy: invalid option")
)
