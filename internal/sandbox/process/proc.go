package process

import "github.com/tenon-dev/tenon/internal/sandbox"

// Proc is sandbox.Proc under the name internal/residency/managed still
// uses; new code names sandbox.Proc.
type Proc = sandbox.Proc
