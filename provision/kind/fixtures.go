package kind

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/labctl/labctl/internal/fsx"
	"github.com/labctl/labctl/lab"
)

// materialiseFixtures writes the lab's fixtures out under base as a
// directory named by their content hash, so the sandbox can bind-mount
// them (an embedded FS has no host path) and a changed fixture set gets a
// new directory, and so a new sandbox. An existing complete directory is
// reused. It returns the directory.
func materialiseFixtures(fsys fs.FS, base, labName string) (string, error) {
	sum, err := lab.TreeHash(fsys)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(base, labName+"-"+sum[:16])
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return dir, nil
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", fmt.Errorf("creating the fixtures cache %s: %w", base, err)
	}
	tmp, err := os.MkdirTemp(base, ".tmp-"+labName+"-")
	if err != nil {
		return "", fmt.Errorf("creating the fixtures cache %s: %w", base, err)
	}
	defer os.RemoveAll(tmp)
	if err := fsx.CopyTree(fsys, tmp, fsx.ExecBit); err != nil {
		return "", fmt.Errorf("writing the lab's fixtures to %s: %w", tmp, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", fmt.Errorf("writing the lab's fixtures: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if st, serr := os.Stat(dir); serr == nil && st.IsDir() {
			return dir, nil // another labctl wrote the same content first
		}
		return "", fmt.Errorf("writing the lab's fixtures to %s: %w", dir, err)
	}
	return dir, nil
}
