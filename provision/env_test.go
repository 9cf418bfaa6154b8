package provision

import (
	"github.com/labctl/labctl/internal/grading"
	"github.com/labctl/labctl/internal/labtest"
	"github.com/labctl/labctl/internal/reset"
	"github.com/labctl/labctl/internal/shell"
)

// Live is the one live lab: it must keep meeting the interface each of its
// users declares, or this file does not compile.
var (
	_ grading.Checker      = (*Live)(nil)
	_ grading.ScriptRunner = (*Live)(nil)
	_ grading.Prober       = (*Live)(nil)
	_ reset.Environment    = (*Live)(nil)
	_ labtest.Environment  = (*Live)(nil)
	_ shell.ScriptRunner   = (*Live)(nil)
	_ reset.Home           = (*Live)(nil)
	_ shell.Shell          = (Shell)(nil)
)
