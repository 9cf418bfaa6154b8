package provision

import (
	"github.com/labctl/labctl/internal/grading"
	"github.com/labctl/labctl/internal/labtest"
	"github.com/labctl/labctl/internal/reset"
	"github.com/labctl/labctl/internal/shell"
)

// Env is the one live lab: it must keep meeting the interface each of its
// users declares, or this file does not compile.
var (
	_ grading.Checker      = (*Env)(nil)
	_ grading.ScriptRunner = (*Env)(nil)
	_ grading.Prober       = (*Env)(nil)
	_ reset.Environment    = (*Env)(nil)
	_ labtest.Environment  = (*Env)(nil)
	_ shell.ScriptRunner   = (*Env)(nil)
	_ reset.Home           = (*Env)(nil)
)

// Learner, a class's live lab, meets the same interfaces.
var (
	_ grading.Checker      = (*Learner)(nil)
	_ grading.ScriptRunner = (*Learner)(nil)
	_ grading.Prober       = (*Learner)(nil)
	_ reset.Environment    = (*Learner)(nil)
	_ labtest.Environment  = (*Learner)(nil)
	_ shell.ScriptRunner   = (*Learner)(nil)
	_ reset.Home           = (*Learner)(nil)
	_ shell.Shell          = (*ExecShell)(nil)
)

// Invited, a learner's own sandbox reached with an invite, meets them too
// (what only the instructor may do answers ErrInstructorOnly).
var (
	_ grading.Checker     = (*Invited)(nil)
	_ grading.Prober      = (*Invited)(nil)
	_ labtest.Environment = (*Invited)(nil)
	_ shell.ScriptRunner  = (*Invited)(nil)
)
