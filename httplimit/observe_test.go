package httplimit

// errorsTo is an option whose observer appends every event's error to got.
func errorsTo(got *[]error) Option {
	return WithObserver(ObserverFunc(func(e Event) {
		if e.Err != nil {
			*got = append(*got, e.Err)
		}
	}))
}
