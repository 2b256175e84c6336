// Package disk puts a size limit on a directory: a sparse ext4 image file
// (made with mkfs.ext4, no journal, lazily initialized inode tables),
// attached to a loop device with LO_FLAGS_AUTOCLEAR and mounted on the
// directory in the host's mount namespace. A write past the limit fails
// with ENOSPC inside the directory and nowhere else.
//
// The image is sparse and mounted with discard: it takes on the host's
// disk what the files in it take, and deleted files give their blocks
// back. The loop device goes away with the last unmount (autoclear), so
// unmounting is the whole cleanup; a process killed between the two
// leaves a mount that Unmount (or Sweep, by mount table) removes later.
// An image mounted again while its file system is still mounted somewhere
// (a lazy Unmount while a dying sandbox's mount namespace holds it) is
// mounted from the loop device it is still attached to: one ext4
// instance, never two on the same image.
//
// It is used for the process backend's writable layers and own
// workspaces (internal/sandbox/process) and for the daemon's agent
// workspaces (internal/api). It touches no mount but the ones it makes
// on the directories it is given.
package disk
