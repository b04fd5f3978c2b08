package core

// MarshalText implements encoding.TextMarshaler: l in the form ParseLimit
// reads, its String ("100/m", "5/30s", "10/s burst 20"). The Name is not part
// of the text, so a Limit read back from it has an empty Name, and a Burst of
// 0 is written as the Rate it stands for. It returns an error wrapping
// ErrInvalidLimit for a limit Validate refuses (the zero Limit among them),
// so no text is written that could not be read back.
func (l Limit) MarshalText() ([]byte, error) {
	l.Name = "" // not written, so not checked
	if err := l.Validate(); err != nil {
		return nil, err
	}
	return []byte(l.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler: it reads text as
// ParseLimit does, so a configuration file's "100/m" decodes into a Limit
// field through encoding/json, YAML and the like. The Name is left empty. On
// error (wrapping ErrInvalidLimit) l is unchanged.
func (l *Limit) UnmarshalText(text []byte) error {
	parsed, err := ParseLimit(string(text))
	if err != nil {
		return err
	}
	*l = parsed
	return nil
}

// MarshalText implements encoding.TextMarshaler: the algorithm's name, its
// String ("gcra", "sliding-window"). It returns an error wrapping
// ErrInvalidAlgorithm for a value that is not one of the six (the zero
// Algorithm among them).
func (a Algorithm) MarshalText() ([]byte, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	return []byte(a.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler: it reads text as
// ParseAlgorithm does (any case, "_" for "-"). On error (wrapping
// ErrInvalidAlgorithm) a is unchanged.
func (a *Algorithm) UnmarshalText(text []byte) error {
	parsed, err := ParseAlgorithm(string(text))
	if err != nil {
		return err
	}
	*a = parsed
	return nil
}
