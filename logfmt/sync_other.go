//go:build !linux

package logfmt

type fder interface{ Sync() error }

// fdatasync falls back to fsync where fdatasync is not available.
func fdatasync(f fder) error { return f.Sync() }
