package docker

// NewTestBackend exposes the live test backend to the external test package.
var NewTestBackend = newBackend
