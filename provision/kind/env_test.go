package kind

import (
	"github.com/labctl/labctl/internal/grading"
	"github.com/labctl/labctl/internal/labtest"
	"github.com/labctl/labctl/internal/reset"
	"github.com/labctl/labctl/internal/shell"
	"github.com/labctl/labctl/provision"
)

// Live is the one live lab: it must keep meeting the interface each of its
// users declares, or this file does not compile.
var (
	_ grading.Checker      = (*provision.Live)(nil)
	_ grading.ScriptRunner = (*provision.Live)(nil)
	_ grading.Prober       = (*provision.Live)(nil)
	_ reset.Environment    = (*provision.Live)(nil)
	_ labtest.Environment  = (*provision.Live)(nil)
	_ shell.ScriptRunner   = (*provision.Live)(nil)
	_ reset.Home           = (*provision.Live)(nil)
	_ shell.Shell          = (provision.Shell)(nil)
)
