package class

import (
	"fmt"

	"github.com/labctl/labctl/provision"
)

// NotReadyError says a learner's lab is not ready, and what is wrong with
// it, as Connect found it. It is provision.ErrNotUp.
type NotReadyError struct {
	Learner string
	// Problem is what is wrong ("" when nothing more is known).
	Problem string
}

func (e *NotReadyError) Error() string {
	if e.Problem == "" {
		return fmt.Sprintf("learner %s: %v", e.Learner, provision.ErrNotUp)
	}
	return fmt.Sprintf("learner %s: %s: %v", e.Learner, e.Problem, provision.ErrNotUp)
}

func (e *NotReadyError) Unwrap() error { return provision.ErrNotUp }
