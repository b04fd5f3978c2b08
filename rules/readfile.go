package rules

// ReadFile reads and parses the rules file at path, as WatchFile reads it: at
// most MaxDocumentSize bytes (a larger file is refused by Parse), and never a
// FIFO or a device, which could block or never end. Problems name the file
// ("rules.yaml:12:14: ..."). An unreadable file is an error wrapping
// ErrFileUnreadable.
func ReadFile(path string) (*Document, error) {
	raw, err := readDocumentFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(raw, path)
}
