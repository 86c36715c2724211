package accountant

// Test helpers: Calibrate's inputs for DP-SGD with Poisson sampling.

func poissonEvent(q float64, steps int) func(sigma float64) (Event, int) {
	return func(s float64) (Event, int) { return PoissonSampled{Q: q, Event: Gaussian{Sigma: s}}, steps }
}

func rdpFactory(opts ...RDPOption) func() (Accountant, error) {
	return func() (Accountant, error) { return NewRDP(opts...) }
}

func pldFactory(opts ...PLDOption) func() (Accountant, error) {
	return func() (Accountant, error) { return NewPLD(opts...) }
}

// poissonSigmaRDP is σ for (target, delta) over steps at rate q by RDP.
func poissonSigmaRDP(target, delta, q float64, steps int, opts ...RDPOption) (float64, error) {
	return Calibrate(Account(rdpFactory(opts...), poissonEvent(q, steps), delta), target)
}

// poissonSigmaPLD is σ by PLD, certified on the default grid.
func poissonSigmaPLD(target, delta, q float64, steps int) (float64, error) {
	ev := poissonEvent(q, steps)
	return Calibrate(Account(pldFactory(), ev, delta), target, WithPLDCertification(
		Account(pldFactory(WithPLDInterval(CalibrationPLDInterval)), ev, delta), Account(rdpFactory(), ev, delta)))
}
