// Package fsutil holds file-system helpers shared by the sandboxes and the
// CLI: moving and copying directory trees keeping modes, owners and
// symlinks (what restoring a sandbox's captured state needs when the
// staging area and the sandbox are on different file systems), and
// writing a file atomically (results files, plots, generated workloads).
//
// It touches only the paths it is given.
package fsutil
