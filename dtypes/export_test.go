package dtypes

// BulkPaths names the bulk conversion paths this machine runs: its vector
// paths, best first, and "go" (the pure-Go loops).
func BulkPaths() []string {
	var names []string
	for _, p := range bulkPaths {
		names = append(names, p.name)
	}
	return append(names, "go")
}

// UseBulkPath makes the bulk conversions take the named path (one of
// BulkPaths) until restore is called.
func UseBulkPath(name string) (restore func()) {
	prev := bulkPath
	bulkPath = bulkKernels{name: "go", block: 1}
	for _, p := range bulkPaths {
		if p.name == name {
			bulkPath = p
		}
	}
	return func() { bulkPath = prev }
}
