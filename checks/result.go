package checks

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// Status is the outcome of one check.
type Status string

const (
	// Pass means the requirement is met.
	Pass Status = "pass"
	// Fail means the learner's work does not meet the requirement.
	Fail Status = "fail"
	// Error means the check could not run (timeout, cluster unreachable, a
	// broken check), which says nothing about the learner's work.
	Error Status = "error"
)

// Result is the outcome of one check, ready to show or to serialise.
type Result struct {
	Name        string        `json:"name"`
	Description string        `json:"description,omitempty"`
	Status      Status        `json:"status"`
	Message     string        `json:"message,omitempty"`
	Duration    time.Duration `json:"durationMs"`
	Points      int           `json:"points"`
	Optional    bool          `json:"optional,omitempty"`
	// Cells are what a matrix check that passed or failed found of each
	// cell, for the evidence of the step's mistakes (JudgeFromCells); nil
	// for other checks.
	Cells map[string]CellAnswer `json:"cells,omitempty"`
}

// resultJSON is Result on the wire, with the duration in whole milliseconds.
type resultJSON struct {
	Name        string                `json:"name"`
	Description string                `json:"description,omitempty"`
	Status      Status                `json:"status"`
	Message     string                `json:"message,omitempty"`
	DurationMs  int64                 `json:"durationMs"`
	Points      int                   `json:"points"`
	Optional    bool                  `json:"optional,omitempty"`
	Cells       map[string]CellAnswer `json:"cells,omitempty"`
}

// MarshalJSON writes the duration as integer milliseconds (durationMs).
func (r Result) MarshalJSON() ([]byte, error) {
	return json.Marshal(resultJSON{
		Name: r.Name, Description: r.Description, Status: r.Status, Message: r.Message,
		DurationMs: r.Duration.Milliseconds(), Points: r.Points, Optional: r.Optional, Cells: r.Cells,
	})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *Result) UnmarshalJSON(b []byte) error {
	var w resultJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = Result{
		Name: w.Name, Description: w.Description, Status: w.Status, Message: w.Message,
		Duration: time.Duration(w.DurationMs) * time.Millisecond, Points: w.Points, Optional: w.Optional, Cells: w.Cells,
	}
	return nil
}

// failure is the learner's work not meeting a requirement. A check returns
// nil for pass, a *failure for fail, and any other error for error.
// Its text is put into words in the learner's language only when the
// result is made (see outcome); Error gives it in English.
type failure struct{ text msg.Text }

func (f *failure) Error() string { return f.text.String() }

// failf reports that the learner's work does not meet the requirement, in
// the words of the catalogue's key.
func failf(key msg.Key, args ...any) error {
	return &failure{text: msg.T(key, args...)}
}

// undecided is a check that cannot tell whether the learner's work meets
// its requirement: an error whose words, in the learner's language, say
// what to do. It is not the learner's failure.
type undecided struct{ text msg.Text }

func (u *undecided) Error() string { return u.text.String() }

// undecidedf reports that the check cannot tell, in the words of the
// catalogue's key.
func undecidedf(key msg.Key, args ...any) error {
	return &undecided{text: msg.T(key, args...)}
}

// outcome maps what a check returned to a status and an English message.
func outcome(err error) (Status, string) { return outcomeIn(err, msg.New(msg.English)) }

// outcomeIn maps what a check returned to a status and a message in cat's
// language.
func outcomeIn(err error, cat *msg.Catalog) (Status, string) {
	if err == nil {
		return Pass, ""
	}
	var r *reported
	if errors.As(err, &r) {
		return Pass, r.text
	}
	var f *failure
	if errors.As(err, &f) {
		return Fail, cat.Render(f.text)
	}
	var u *undecided
	if errors.As(err, &u) {
		return Error, cat.Render(u.text)
	}
	return Error, err.Error()
}

// ErrorResult is c's result when it could not run, message m saying why;
// description, points and optional are the lab's.
func ErrorResult(c *lab.Check, m string) Result {
	return Result{Name: c.Name, Description: c.Description, Status: Error, Message: m, Points: c.Points, Optional: c.Optional}
}

// ErrorResults is ErrorResult for every check of cs: a round whose answer is not
// trusted.
func ErrorResults(cs []lab.Check, m string) []Result {
	out := make([]Result, len(cs))
	for i := range cs {
		out[i] = ErrorResult(&cs[i], m)
	}
	return out
}

// reported is a pass that says something: a check of labctl's own that
// reports what it saw (ReportHead).
type reported struct{ text string }

func (r *reported) Error() string { return r.text }
