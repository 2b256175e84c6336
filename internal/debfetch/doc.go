// Package debfetch installs single binaries out of Debian packages pinned
// by checksum into a cache directory, without installing the packages on
// the host: the .deb is downloaded from the pool (a newer suite's files
// too, never through the host's apt), unpacked with dpkg-deb into a
// temporary directory, and only the listed members, each checked against
// its own SHA-256, are moved into the cache.
//
// The live tests that need binaries the host does not run (containerd and
// runc for the NRI path of `tenon node`) and CI share it. It owns the
// cache directory it is given and nothing else.
package debfetch
