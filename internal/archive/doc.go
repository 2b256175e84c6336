// Package archive captures a directory tree into content-addressed,
// sha256-checksummed blobs and extracts them back, safely. It has two
// artifact formats (Ref.Format):
//
//   - tree (FormatTree, what internal/residency uses): CaptureTree writes a
//     gzip'd JSON-lines manifest of every node plus one uncompressed blob
//     per distinct file content (small new contents concatenated into pack
//     blobs), each fsynced by the worker that wrote it before it is
//     renamed into place. Given the StatCache of the previous capture or
//     extraction of the same directory, a file whose inode, size, mtime and
//     ctime are unchanged is not read again (incremental capture); content
//     already stored is never written again (shared across generations and
//     agents). ExtractTree checks the manifest digest and every file's
//     content digest as it copies, on several goroutines, and can take
//     over files Park hard-linked aside before the source was deleted,
//     after re-hashing them. Files are stored uncompressed: on these hosts
//     compression cost more time than the disk it saved.
//   - tar.gz (Format ""): one gzip'd tar per tree, named by the sha256 of
//     its compressed bytes. Nothing writes this format any more; ExtractRef
//     still reads it so records stored before the tree format restore.
//
// Both extract through the same checked extractor, described below, as
// does ExtractTar, which unpacks a plain tar stream (gzip'd or not, with
// tar's --strip-components) that carries no digest: a replay's workspace
// seed (trajectory.Workspace).
//
// A capture records regular files, directories, symlinks, hard links,
// FIFOs, modes, owners and nanosecond mtimes. It also records the two
// overlayfs upper-directory markers explicitly so a sandbox's writable
// layer survives a round trip: a whiteout (a 0/0 character device, which
// hides a lower file) becomes an empty regular entry marked as a whiteout
// (the PAX record "TENON.whiteout=1" in a tar), and "trusted.overlay.*" /
// "user.overlay.*" extended attributes (notably "trusted.overlay.opaque")
// are kept (as "SCHILY.xattr." PAX records in a tar). Any other device
// node makes a capture fail; sockets are skipped (they are live state that
// cannot survive a restart anyway).
//
// Extraction verifies the blob's digest before writing anything, requires an
// empty (or missing) destination, and refuses entries whose names are
// absolute or contain "..", hard links whose target is not a regular file
// already extracted from the same archive, symlinks whose relative target
// climbs above the destination, any entry whose path passes through a
// symlink, and device nodes other than whiteouts. It never follows a symlink
// while writing: every write is relative to a directory file descriptor with
// O_NOFOLLOW / AT_SYMLINK_NOFOLLOW, under an os.Root. Absolute symlink
// targets are kept verbatim: in a writable layer they are resolved inside
// the sandbox's root (e.g. /usr/bin/python3 -> /etc/alternatives/python3),
// and extraction itself never resolves them.
//
// ExtractLayer runs the same extractor over an OCI image layer (a plain
// uncompressed tar), making its ".wh." whiteouts and opaque markers into
// the overlay ones above, so the result is an overlay lower directory
// (internal/imagestore); it also drops setuid/setgid bits and ignores the
// layer's own xattrs and PAX records unless told otherwise.
//
// The package owns only the blob directory it is given and the destination
// directory of an extraction; it touches nothing else.
package archive
