package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/labctl/labctl/internal/msg"
)

// WriteFile renders r in format f into path atomically: a temporary file
// beside it is written, synced and renamed over it, so a reader never sees
// half a report.
func WriteFile(path string, r *Report, f Format, c *msg.Catalog) (err error) {
	var b bytes.Buffer
	if err := Write(&b, r, f, c); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing the report to %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("writing the report to %s: %w", path, err)
	}
	if _, err := tmp.Write(b.Bytes()); err != nil {
		return fmt.Errorf("writing the report to %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("writing the report to %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing the report to %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing the report to %s: %w", path, err)
	}
	return nil
}
