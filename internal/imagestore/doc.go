// Package imagestore keeps OCI and Docker images unpacked for the process
// backend: each layer once, content-addressed by its diff id (the sha256 of
// the uncompressed layer tar), as a directory ready to be an overlayfs
// lower directory, shared read-only by every sandbox of every image that
// has it.
//
// Layout under the store's root (<state-dir>/images):
//
//	layers/<hex>        one unpacked layer (archive.ExtractLayer: OCI
//	                    whiteouts made into overlay whiteouts and opaque
//	                    markers; unsafe entries refused)
//	images/<hex>.json   one image, named by its config digest (the image
//	                    id): names, layer diff ids bottom first, and the
//	                    config's Env, WorkingDir, User, Entrypoint and Cmd
//	holders/            who uses what (lease.go)
//	tmp/                layers being unpacked
//	lock                flock(2) serializing changes to images/ and layers/
//
// The formats are read by github.com/google/go-containerregistry: a
// `docker save` archive (tarball), an OCI image layout directory or a tar
// of one (layout), a registry (remote). A layer is unpacked into tmp/,
// its diff id checked over the whole stream, then renamed into layers/:
// a corrupt or truncated layer fails the import with its digest named and
// leaves no layer and no image record behind. Once in place, a layer's
// page cache is dropped (the unpacking charged it to the importer's
// memory cgroup): the first sandbox that reads a file is charged for it,
// and the others of every image with the layer share those pages. An image's record is
// written (atomically) only after all its layers are in place.
//
// Holders: a process using an image (a sandbox's overlay, an agent that
// will rematerialize on it, an import unpacking layers) records it in its
// own holder file, kept alive by a flock(2) on a companion lock file for
// as long as the process lives. Remove refuses an image a live holder
// uses (ErrInUse); GC removes the layers no image record and no live
// holder references, and the temporary directories of dead holders.
//
// The package owns its root directory and touches nothing else.
package imagestore
