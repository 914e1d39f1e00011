package devtensor

// Must returns v when err is nil and panics with err otherwise: devtensor.Must(x.Add(y))
// in examples, tests and programs that treat every error as fatal. The panic value is
// err itself, so a recover can still use errors.Is on it. Must and MustOK are the only
// functions of the package that panic.
func Must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// MustOK panics with err when it is not nil: devtensor.MustOK(opt.Step()) for calls that
// return only an error. As Must, for examples and tests.
func MustOK(err error) {
	if err != nil {
		panic(err)
	}
}
