//go:build !linux

package kerneltest

// mapSparse maps n bytes read-write. The BSDs and macOS have no
// MAP_NORESERVE (and reserve no memory for untouched anonymous pages);
// Windows commits the range, which counts against the commit limit but
// takes memory only for touched pages.
func mapSparse(n int) ([]byte, error) { return mapPages(n) }
