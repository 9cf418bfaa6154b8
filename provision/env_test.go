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
