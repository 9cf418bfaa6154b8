package docker

// DetailError is an error whose message is short, with the full text
// behind it (a program's whole error output) kept for `-v`.
type DetailError struct {
	Err  error
	Text string
}

func (e *DetailError) Error() string { return e.Err.Error() }

func (e *DetailError) Unwrap() error { return e.Err }

// Detail is the full text, shown only with -v.
func (e *DetailError) Detail() string { return e.Text }

// WithDetail attaches detail to err; nil stays nil.
func WithDetail(err error, detail []byte) error {
	if err == nil {
		return nil
	}
	return &DetailError{Err: err, Text: string(detail)}
}
