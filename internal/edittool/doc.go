// Package edittool is the file editor behind `tenon tool edit`: it applies
// a recorded agent's Edit or Write call (trajectory.FileEdit) to a file of
// the workspace, inside the sandbox, so that a replay's edits cost what the
// agent's own file I/O cost and land in the tree the next commands run on.
//
// Every path is opened through an os.Root of the workspace: a path that is
// absolute, climbs out with "..", or passes through a symlink pointing out
// of the tree is refused. The package touches nothing but that file (and,
// for a Write, its missing parent directories).
package edittool
