// Package image builds images offline, with no registry: a root file
// system assembled from the host's own installed Debian packages (the
// dependency closure of a short list: a shell, coreutils, util-linux,
// procps, python3, ..., and any packages asked for) is either a one-layer
// image for the image store (Plan.Image, go-containerregistry's v1.Image
// that internal/imagestore unpacks; tenon image build) or streamed as a tar
// into the Docker engine's image import API and tagged (BuildWith,
// DefaultName: the docker backend's base image; tenon image build
// --docker).
//
// The tenon binary is not baked into the image: the docker backend
// bind-mounts it read-only at TenonPath when it creates a container, so
// rebuilding tenon needs no new image. The image only holds an empty file at
// that path as the mount point (its /usr is mounted read-only in sandboxes).
//
// The package owns the image and nothing else: it reads the host's dpkg
// database and files (every root injectable through Config), talks to the
// engine through the small Client interface and adds to an image store
// only through imagestore.Store.Add (BuildInto).
package image
