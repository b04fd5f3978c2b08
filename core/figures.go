package core

// Figures are a limit's values in whole microseconds, exactly as the
// algorithms use them. A store that runs the algorithms elsewhere (the Redis
// scripts) passes these, so it never divides differently from core.
type Figures struct {
	// Rate is the limit's rate; Period its period in microseconds; Burst its
	// effective burst (Rate when Burst is 0).
	Rate, Period, Burst int64
	// Interval is the emission interval, Period/Rate rounded up.
	Interval int64
	// Tau is Burst*Interval, the meter's tolerance.
	Tau int64
}

// Figures returns l's figures, or an error wrapping ErrInvalidLimit when l
// cannot be enforced (the same cheap check every decision makes).
func (l Limit) Figures() (Figures, error) {
	var buf params
	p, err := paramsOf(&l, &buf)
	if err != nil {
		return Figures{}, err
	}
	return Figures{Rate: p.rate, Period: p.period, Burst: p.burst, Interval: p.interval, Tau: p.tau}, nil
}
