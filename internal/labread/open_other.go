//go:build !unix

package labread

import (
	"errors"
	"os"
)

var errUnsupported = errors.New("reading a lab from disk needs a Unix system")

func openDir(string) (*os.File, error) { return nil, errUnsupported }

func (r *reader) subdir(*os.File, string, string, bool) (*os.File, error) {
	return nil, errUnsupported
}

func (r *reader) file(*os.File, string, string, bool) (*File, error) { return nil, errUnsupported }

func lstatAt(*os.File, string) (os.FileMode, error) { return 0, errUnsupported }

func readlinkAt(*os.File, string) (string, error) { return "", errUnsupported }
